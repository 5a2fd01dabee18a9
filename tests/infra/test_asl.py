"""statemachines/document_review.asl.json against docs/semantics.md (R, M, D, L, P)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from functions import errors
from functions.batch_inference.facts import BATCH_MIN_RECORDS
from stacks.config import DocAgentConfig
from stacks.workflow import (
    ASL_PATH,
    MAP_RESULTS_PREFIX,
    PLACEHOLDER,
    RENDERED,
    asl_placeholders,
    batching_substitutions,
    render_definition,
)

LAMBDA_SERVICE_ERRORS = {  # L1
    "Lambda.ServiceException",
    "Lambda.AWSLambdaException",
    "Lambda.SdkClientException",
    "Lambda.ClientExecutionTimeoutException",
    "Lambda.TooManyRequestsException",
}
CRASH_ERRORS = {"Lambda.Unknown", "Sandbox.Timedout", "Runtime.ExitError"}  # L2

CONFIG = DocAgentConfig()
CONFIG_K10 = DocAgentConfig(documents_per_child=10)
PLAUSIBLE_VALUES = {
    **{
        f"{name}FunctionArn": f"arn:aws:lambda:us-east-1:123456789012:function:DocAgent-{name}"
        for name in (
            "PrepareJob",
            "ProcessDocument",
            "BuildReport",
            "RequestApproval",
            "RunActions",
            "VerifyJob",
            "BatchInference",
        )
    },
    "BucketName": "docagent-jobbucket-1a2b3c",
    "MapLabel": CONFIG.map_label,
    "ChildExecutionType": CONFIG.child_execution_type,
    **batching_substitutions(CONFIG.documents_per_child),
}


def substituted(values: dict[str, str], config: DocAgentConfig = CONFIG) -> Any:
    """The definition as Step Functions receives it: rendered by the stack, then substituted by
    CloudFormation."""
    text = json.dumps(render_definition(config))
    return json.loads(PLACEHOLDER.sub(lambda match: values[match.group(1)], text))


@pytest.fixture(scope="module")
def definition() -> Any:
    return substituted(PLAUSIBLE_VALUES)


def walk_states(states: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(name, state, sibling states) for every state, nested Map and Parallel states included."""
    for name, state in states.items():
        yield name, state, states
        if "ItemProcessor" in state:
            yield from walk_states(state["ItemProcessor"]["States"])
        if "Iterator" in state:
            yield from walk_states(state["Iterator"]["States"])
        for branch in state.get("Branches", []):
            yield from walk_states(branch["States"])


def find_state(definition: Any, wanted: str) -> dict[str, Any]:
    return next(state for name, state, _ in walk_states(definition["States"]) if name == wanted)


def retried_errors(state: dict[str, Any]) -> set[str]:
    return {error for retrier in state.get("Retry", []) for error in retrier["ErrorEquals"]}


def lambda_tasks(definition: Any) -> list[tuple[str, dict[str, Any]]]:
    return [
        (name, state)
        for name, state, _ in walk_states(definition["States"])
        if state["Type"] == "Task" and state["Resource"] == "arn:aws:states:::lambda:invoke"
    ]


def test_the_file_is_json_as_it_is() -> None:
    # JSON tools and Workflow Studio open it: numbers and blocks are whole-string placeholders the stack sets.
    with ASL_PATH.open(encoding="utf-8") as file:
        assert json.load(file)["StartAt"] == "PrepareJob"


def test_every_placeholder_has_a_plausible_value_or_is_set_by_the_stack() -> None:
    assert asl_placeholders() == PLAUSIBLE_VALUES.keys() | RENDERED


def test_the_stack_sets_numbers_and_blocks_and_leaves_the_strings() -> None:
    text = json.dumps(render_definition(CONFIG))
    assert set(PLACEHOLDER.findall(text)) == PLAUSIBLE_VALUES.keys()


def test_a_value_the_stack_sets_must_be_a_whole_json_value(tmp_path: Any) -> None:
    broken = tmp_path / "broken.asl.json"
    broken.write_text(ASL_PATH.read_text(encoding="utf-8").replace('"${MaxConcurrency}"', "10"))
    with pytest.raises(ValueError, match="MaxConcurrency"):
        render_definition(CONFIG, broken)


def test_substituted_definition_parses_and_starts_with_prepare_job(definition: Any) -> None:
    assert definition["StartAt"] == "PrepareJob"
    assert {name for name, _ in lambda_tasks(definition)} == {
        "PrepareJob",
        "ListDocuments",
        "SealJob",
        "ProcessDocument",
        "RecordDocumentFailure",
        "SummarizeResults",
        "ReportPartition",
        "BuildReport",
        "RecordApproval",
        "RunActions",
        "VerifyPartition",
        "VerifyJob",
        "WriteBatchRecord",
        "PlanBatchJobs",
        "SubmitBatchJob",
    }


def test_express_children_substitute_too() -> None:
    definition = substituted({**PLAUSIBLE_VALUES, "ChildExecutionType": "EXPRESS"})
    map_state = find_state(definition, "ReviewDocuments")
    assert map_state["ItemProcessor"]["ProcessorConfig"]["ExecutionType"] == "EXPRESS"


def test_d1_map_is_distributed_with_configured_children(definition: Any) -> None:
    map_state = find_state(definition, "ReviewDocuments")
    assert map_state["Type"] == "Map"
    assert map_state["ItemProcessor"]["ProcessorConfig"] == {
        "Mode": "DISTRIBUTED",
        "ExecutionType": CONFIG.child_execution_type,
    }
    assert map_state["MaxConcurrency"] == CONFIG.effective_max_concurrency
    assert map_state["ToleratedFailurePercentage"] == CONFIG.tolerated_failure_percentage
    assert map_state["Label"] == CONFIG.map_label


def test_d5_map_results_go_to_the_job_bucket_under_the_granted_prefix(definition: Any) -> None:
    writer = find_state(definition, "ReviewDocuments")["ResultWriter"]
    assert writer["Resource"] == "arn:aws:states:::s3:putObject"
    assert writer["Parameters"] == {"Bucket": PLAUSIBLE_VALUES["BucketName"], "Prefix": MAP_RESULTS_PREFIX}


def test_d3_map_reads_the_items_file_seal_job_named(definition: Any) -> None:
    reader = find_state(definition, "ReviewDocuments")["ItemReader"]
    assert reader["Resource"] == "arn:aws:states:::s3:getObject"
    assert reader["ReaderConfig"] == {"InputType": "JSONL"}  # the parts are JSON Lines
    assert reader["Parameters"] == {"Bucket.$": "$.bucket", "Key.$": "$.items_key"}


def test_the_listing_loops_over_bounded_steps_then_seals(definition: Any) -> None:
    """PrepareJob → ListDocuments ↔ ListingDone → SealJob → ReviewDocuments; the cursor stays in $.listing and
    SealJob's PreparedJob becomes the state the Map reads."""
    states = definition["States"]
    assert states["PrepareJob"]["Next"] == "ListDocuments"
    listing = states["ListDocuments"]
    assert listing["Parameters"]["FunctionName"] == states["PrepareJob"]["Parameters"]["FunctionName"]
    assert listing["Parameters"]["Payload"] == {
        "action": "list",
        "job_id.$": "$.job_id",
        "listing.$": "$.listing",
    }
    assert listing["ResultPath"] == "$.listing" and listing["Next"] == "ListingDone"
    done = states["ListingDone"]
    assert done["Type"] == "Choice" and done["Default"] == "ListDocuments"
    assert done["Choices"] == [{"Variable": "$.listing.done", "BooleanEquals": True, "Next": "SealJob"}]
    seal = states["SealJob"]
    assert seal["Parameters"]["Payload"]["action"] == "seal"
    assert (seal["ResultSelector"], seal["OutputPath"]) == ({"job.$": "$.Payload"}, "$.job")
    assert seal["Next"] == "InferenceMode"  # then ReviewDocuments, after a batch job when the job uses one
    for name in ("ListDocuments", "SealJob"):  # a crashed step is retried: parts already written are reused
        retried = {error for rule in states[name]["Retry"] for error in rule["ErrorEquals"]}
        assert {"Runtime.ExitError", "Sandbox.Timedout", "Lambda.Unknown"} <= retried, name


def test_m7_map_state_has_no_retry(definition: Any) -> None:
    map_state = find_state(definition, "ReviewDocuments")
    assert "Retry" not in map_state, "a retry on the Distributed Map starts a whole new Map Run"


def test_r4_no_catch_leads_to_a_fail_state(definition: Any) -> None:
    for name, state, siblings in walk_states(definition["States"]):
        for catcher in state.get("Catch", []):
            assert siblings[catcher["Next"]]["Type"] != "Fail", f"{name} catches into a Fail state"


@pytest.mark.parametrize(
    "task",
    [
        "PrepareJob",
        "ProcessDocument",
        "BuildReport",
        "RequestApproval",
        "RecordApproval",
        "WaitForReview",
        "RunActions",
        "VerifyJob",
    ],
)
def test_l1_l2_every_lambda_task_retries_service_errors_and_crashes(definition: Any, task: str) -> None:
    retried = retried_errors(find_state(definition, task))
    assert retried >= LAMBDA_SERVICE_ERRORS
    assert retried >= CRASH_ERRORS


# A throttled invoke waits its turn: the longest wait its retrier allows, before jitter (FULL jitter waits a
# random share of each). A Map's children queue behind each other when the account's concurrency is used up
# (a new account's quota may be far below 1,000; the local cloud runs 4 a CPU: docs/local-cloud.md), and 40
# VerifyPartitions children of ~100 s each on 2 busy cores queue about 500 s (`docagent bench --fan-in
# 1000000`, 2026-12-08: it failed with States.ExceedToleratedFailureThreshold when throttles shared the crash
# retrier's 4 attempts).
THROTTLE_WAIT_SECONDS = 900


def test_l1_a_throttled_invoke_retries_on_its_own_long_enough_to_wait_its_turn(definition: Any) -> None:
    for name, state in lambda_tasks(definition):
        retriers = state.get("Retry", [])
        throttle = [rule for rule in retriers if "Lambda.TooManyRequestsException" in rule["ErrorEquals"]]
        assert throttle == retriers[:1], f"{name}: the throttle retrier is first and only one names it"
        rule = throttle[0]
        assert rule["ErrorEquals"] == ["Lambda.TooManyRequestsException"], f"{name}: its own attempts"
        assert rule["JitterStrategy"] == "FULL", f"{name}: throttled children spread out"
        delays = [
            min(rule["IntervalSeconds"] * rule["BackoffRate"] ** attempt, rule["MaxDelaySeconds"])
            for attempt in range(rule["MaxAttempts"])
        ]
        assert sum(delays) >= THROTTLE_WAIT_SECONDS, f"{name}: waits {sum(delays)} s at most"


def test_p4_process_document_retries_an_in_progress_idempotency_record(definition: Any) -> None:
    assert "IdempotencyAlreadyInProgressError" in retried_errors(find_state(definition, "ProcessDocument"))


def test_p4_in_progress_retry_polls_past_the_dead_invocation(definition: Any) -> None:
    """The polls outlast the dead invocation's deadline (test_in_progress_polling.py plays them out)."""
    for name, state in lambda_tasks(definition):
        for retrier in state.get("Retry", []):
            if "IdempotencyAlreadyInProgressError" in retrier["ErrorEquals"]:
                assert retrier["BackoffRate"] == 1, name
                covered = retrier["IntervalSeconds"] * retrier["MaxAttempts"]
                assert covered > CONFIG.function_timeout_seconds, name


def test_every_transition_targets_a_sibling_state(definition: Any) -> None:
    for name, state, siblings in walk_states(definition["States"]):
        if state["Type"] in {"Succeed", "Fail"}:
            continue
        if state["Type"] == "Choice":
            targets = [rule["Next"] for rule in state["Choices"]] + [state["Default"]]
            assert all(target in siblings for target in targets), name
            continue
        assert state.get("End") is True or state.get("Next") in siblings, name


# ---------------------------------------------------------------------------------- human approval (L3)


def test_approval_is_asked_only_when_the_job_requires_it(definition: Any) -> None:
    assert find_state(definition, "BuildReport")["Next"] == "ApprovalRequired"
    choice = find_state(definition, "ApprovalRequired")
    assert choice["Type"] == "Choice"
    assert choice["Default"] == "RunActions"
    (rule,) = choice["Choices"]
    assert rule["Next"] == "RequestApproval"
    # IsPresent first: an execution prepared before the option existed takes the default branch.
    assert rule["And"] == [
        {"Variable": "$.options.require_approval", "IsPresent": True},
        {"Variable": "$.options.require_approval", "BooleanEquals": True},
    ]


def test_l3_request_approval_waits_for_the_task_token_with_the_configured_timeout(definition: Any) -> None:
    state = find_state(definition, "RequestApproval")
    assert state["Resource"] == "arn:aws:states:::lambda:invoke.waitForTaskToken"
    assert state["TimeoutSeconds"] == CONFIG.approval_timeout_seconds
    assert "HeartbeatSeconds" not in state
    parameters = state["Parameters"]
    assert parameters["FunctionName"] == PLAUSIBLE_VALUES["RequestApprovalFunctionArn"]
    assert parameters["Payload"] == {
        "action": "request",
        "job_id.$": "$.job_id",
        "report.$": "$.report",
        "task_token.$": "$$.Task.Token",
        "execution_arn.$": "$$.Execution.Id",
    }
    assert state["ResultPath"] == "$.approval"
    assert state["Next"] == "RecordApproval"


def test_l3_a_rejection_or_a_timeout_fails_the_execution(definition: Any) -> None:
    state = find_state(definition, "RequestApproval")
    assert "Catch" not in state, "ApprovalRejected and States.Timeout end the execution (redrive asks again)"
    retried = retried_errors(state)
    assert "States.Timeout" not in retried and "ApprovalRejected" not in retried
    assert "States.ALL" not in retried and "States.TaskFailed" not in retried


def test_record_approval_writes_the_decision_then_the_actions_follow(definition: Any) -> None:
    state = find_state(definition, "RecordApproval")
    assert state["Parameters"]["FunctionName"] == PLAUSIBLE_VALUES["RequestApprovalFunctionArn"]
    assert state["Parameters"]["Payload"] == {
        "action": "record",
        "job_id.$": "$.job_id",
        "execution_arn.$": "$$.Execution.Id",
        "report.$": "$.report",
        "approval.$": "$.approval",
    }
    assert state["ResultPath"] == "$.approval"
    assert state["Next"] == "RunActions"


def test_a_decision_for_another_job_asks_for_approval_again(definition: Any) -> None:
    """RecordApproval refuses a decision naming another job or execution (ApprovalNotForThisJob): the job
    goes back to RequestApproval, which writes a new token, instead of failing or continuing."""
    (catch,) = find_state(definition, "RecordApproval")["Catch"]
    assert catch["ErrorEquals"] == ["ApprovalNotForThisJob"]
    assert catch["Next"] == "RequestApproval"
    assert catch["ResultPath"] not in {"$", "$.approval", "$.report", "$.job_id"}
    assert hasattr(errors, "ApprovalNotForThisJob")


def test_the_job_has_an_overall_timeout_longer_than_its_approval_wait(definition: Any) -> None:
    assert definition["TimeoutSeconds"] == CONFIG.job_timeout_seconds
    assert definition["TimeoutSeconds"] > find_state(definition, "RequestApproval")["TimeoutSeconds"]


@pytest.mark.parametrize("timeout", [1, 3600, 86_400 * 7])
def test_approval_timeout_substitutes(timeout: int) -> None:
    config = DocAgentConfig(approval_timeout_seconds=timeout, job_timeout_seconds=timeout + 86_400)
    definition = substituted(PLAUSIBLE_VALUES, config)
    assert find_state(definition, "RequestApproval")["TimeoutSeconds"] == timeout


# ------------------------------------------------------------------- waiting for the review queue


def test_the_review_queue_is_waited_for_only_when_the_options_say_so(definition: Any) -> None:
    assert find_state(definition, "ReviewDocuments")["Next"] == "ReviewWaitRequired"
    choice = find_state(definition, "ReviewWaitRequired")
    assert (choice["Type"], choice["Default"]) == ("Choice", "SummarizeResults")
    (rule,) = choice["Choices"]
    assert rule["Next"] == "WaitForReview"
    # IsPresent first: an execution prepared before the option existed takes the default branch.
    assert rule["And"] == [
        {"Variable": "$.options.wait_for_review", "IsPresent": True},
        {"Variable": "$.options.wait_for_review", "BooleanEquals": True},
    ]


def test_wait_for_review_waits_for_its_token_before_the_report(definition: Any) -> None:
    state = find_state(definition, "WaitForReview")
    assert state["Resource"] == "arn:aws:states:::lambda:invoke.waitForTaskToken"
    assert state["TimeoutSeconds"] == find_state(definition, "RequestApproval")["TimeoutSeconds"]
    assert "HeartbeatSeconds" not in state
    assert state["Parameters"]["FunctionName"] == PLAUSIBLE_VALUES["BuildReportFunctionArn"]
    assert state["Parameters"]["Payload"] == {
        "action": "wait_review",
        "job_id.$": "$.job_id",
        "map_run.$": "$.map_run",
        "task_token.$": "$$.Task.Token",
        "execution_arn.$": "$$.Execution.Id",
    }
    assert state["ResultPath"] == "$.review_wait"  # the report, its approval and the actions come after
    assert state["Next"] == "SummarizeResults"
    assert "Catch" not in state, "a timeout ends the execution (a redrive waits again)"
    assert "States.Timeout" not in retried_errors(state)


# -- batching (docs/scale.md "Batching"; docs/semantics.md D4) ----------------------------------------------


def test_one_document_per_child_renders_the_per_document_map(definition: Any) -> None:
    # documents_per_child 1 (the default) is the workflow as it was: no ItemBatcher, a child per document.
    review = find_state(definition, "ReviewDocuments")
    assert "ItemBatcher" not in review
    assert review["ItemSelector"] == {
        "job_id.$": "$.job_id",
        "options.$": "$.options",
        "document.$": "$$.Map.Item.Value",
    }
    assert find_state(definition, "ProcessDocument")["Parameters"]["Payload"] == {
        "job_id.$": "$.job_id",
        "options.$": "$.options",
        "document.$": "$.document",
        "retry_count.$": "$$.State.RetryCount",
        "redrive_count.$": "$$.Execution.RedriveCount",
    }


def test_ten_documents_per_child_batch_with_job_and_options_once_per_batch() -> None:
    definition = substituted({**PLAUSIBLE_VALUES, **batching_substitutions(10)}, CONFIG_K10)
    review = find_state(definition, "ReviewDocuments")
    batcher = review["ItemBatcher"]
    assert batcher["MaxItemsPerBatch"] == 10
    assert 0 < batcher["MaxInputBytesPerBatch"] < 256 * 1024  # D3/D6: room left for BatchInput
    assert batcher["BatchInput"] == {"job_id.$": "$.job_id", "options.$": "$.options"}
    assert review["ItemSelector"] == {"document.$": "$$.Map.Item.Value"}
    payload = find_state(definition, "ProcessDocument")["Parameters"]["Payload"]
    assert payload == {
        "job_id.$": "$.BatchInput.job_id",
        "options.$": "$.BatchInput.options",
        "items.$": "$.Items",
        "retry_count.$": "$$.State.RetryCount",
        "redrive_count.$": "$$.Execution.RedriveCount",
    }
    # Everything else is the per-document workflow: the same retries, result writer and next state.
    per_document = substituted(PLAUSIBLE_VALUES)
    one = find_state(per_document, "ReviewDocuments")
    for field in ("ItemReader", "ResultWriter", "ResultPath", "Next", "MaxConcurrency"):
        assert review[field] == one[field]
    assert retried_errors(find_state(definition, "ProcessDocument")) == retried_errors(
        find_state(per_document, "ProcessDocument")
    )


def test_batch_inference_runs_before_the_review_and_an_unusable_batch_path_goes_on_demand(
    definition: Any,
) -> None:
    states = definition["States"]
    [choice] = states["InferenceMode"]["Choices"]
    assert (choice["Next"], states["InferenceMode"]["Default"]) == ("PlanBatchJobs", "ReviewDocuments")
    auto = choice["Or"][1]["And"]  # auto from Bedrock's minimum up: a larger job is split, not refused
    assert [rule.get("NumericGreaterThanEquals") for rule in auto[2:]] == [BATCH_MIN_RECORDS]
    assert states["PlanBatchJobs"]["Next"] == "WriteBatchRecords"
    records = states["WriteBatchRecords"]
    assert records["ToleratedFailurePercentage"] == 100 and records["Next"] == "BatchJobs"
    # One child per part of the plan, at most Bedrock's batch jobs in flight at once, each waiting for hours.
    parts = states["BatchJobs"]
    assert parts["Next"] == "ReviewDocuments" and parts["MaxConcurrency"] == CONFIG.batch_jobs_in_flight
    assert parts["ItemReader"]["Parameters"]["Key.$"] == "$.batch_plan.parts_key"
    assert parts["ItemProcessor"]["ProcessorConfig"] == {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}
    assert "ToleratedFailurePercentage" not in parts  # a killed child fails the job: a redrive resumes it
    children = parts["ItemProcessor"]["States"]
    assert children["SubmitBatchJob"]["Next"] == "WaitForBatchJob"
    wait = children["WaitForBatchJob"]
    assert wait["Resource"].endswith(".waitForTaskToken") and wait["End"]
    assert wait["TimeoutSeconds"] == CONFIG.batch_poll_seconds
    [poll] = [r for r in wait["Retry"] if r["ErrorEquals"] == ["States.Timeout"]]
    assert poll["MaxAttempts"] * CONFIG.batch_poll_seconds >= 2 * 24 * 3600
    # Other workloads' batch jobs fill the account's in-flight quota: the part resubmits for as long, then
    # goes on-demand.
    [full] = [r for r in children["SubmitBatchJob"]["Retry"] if r["ErrorEquals"] == ["BatchJobsInFlight"]]
    assert full["MaxAttempts"] * full["IntervalSeconds"] >= 2 * 24 * 3600
    # Only a batch path that cannot be used goes on-demand; a killed worker fails the job, so a redrive
    # continues with the batch job already created (not a second, on-demand, bill for the same calls).
    catches = {name: children[name]["Catch"] for name in ("SubmitBatchJob", "WaitForBatchJob")}
    assert catches == {
        "SubmitBatchJob": [
            {
                "ErrorEquals": ["BatchUnavailable", "BatchJobsInFlight"],
                "ResultPath": "$.batch_error",
                "Next": "PartOnDemand",
            }
        ],
        "WaitForBatchJob": [
            {
                "ErrorEquals": ["BatchUnavailable", "States.Timeout"],
                "ResultPath": "$.batch_error",
                "Next": "PartOnDemand",
            }
        ],
    }
    assert children["PartOnDemand"] == {
        "Type": "Pass",
        "Comment": children["PartOnDemand"]["Comment"],
        "End": True,
    }
    for name in ("SubmitBatchJob", "WaitForBatchJob"):  # what their fault points read, and the part
        payload = children[name]["Parameters"]["Payload"]
        assert (
            payload["part.$"],
            payload["options.$"],
            payload["retry_count.$"],
            payload["redrive_count.$"],
        ) == (
            "$.part",
            "$.options",
            "$$.State.RetryCount",
            "$$.Execution.RedriveCount",
        )


# ------------------------------------------------------------------- the report's and verification's fan-in


def test_the_report_is_built_by_fan_in_over_the_partitions(definition: Any) -> None:
    summarize = find_state(definition, "SummarizeResults")
    assert summarize["Parameters"]["Payload"]["action"] == "summarize"
    assert summarize["Parameters"]["FunctionName"] == PLAUSIBLE_VALUES["BuildReportFunctionArn"]
    assert (summarize["ResultPath"], summarize["Next"]) == ("$.report_plan", "ReportPartitions")
    partitions = find_state(definition, "ReportPartitions")
    assert partitions["ItemProcessor"]["ProcessorConfig"]["Mode"] == "DISTRIBUTED"
    assert partitions["ItemsPath"] == "$.report_plan.partitions"
    assert partitions["ResultPath"] is None  # the partials are in S3; the Map keeps nothing in the state
    child = partitions["ItemProcessor"]["States"]["ReportPartition"]
    assert child["Parameters"]["Payload"]["action"] == "partial"
    assert partitions["Next"] == "BuildReport"


def test_the_verification_runs_by_fan_in_over_the_same_partitions(definition: Any) -> None:
    assert find_state(definition, "RunActions")["Next"] == "VerifyPartitions"
    partitions = find_state(definition, "VerifyPartitions")
    assert partitions["ItemProcessor"]["ProcessorConfig"]["Mode"] == "DISTRIBUTED"
    assert partitions["ItemsPath"] == "$.report_plan.partitions"
    assert (partitions["ResultPath"], partitions["Next"]) == (None, "VerifyJob")
    child = partitions["ItemProcessor"]["States"]["VerifyPartition"]
    assert child["Parameters"]["FunctionName"] == PLAUSIBLE_VALUES["VerifyJobFunctionArn"]
    assert child["Parameters"]["Payload"]["action"] == "verify_partition"
