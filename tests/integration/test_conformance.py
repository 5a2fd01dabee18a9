"""The local cloud against docs/semantics.md: one test per item, named after it,
each on a small purpose-built state machine. Items not built yet are xfail with the reason."""

from __future__ import annotations

import datetime
import json
import sys
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

from docagent.localcloud.server import LocalCloud
from docagent.localcloud.stepfunctions import redrive_execution as redrive
from docagent.localcloud.stepfunctions.distributed_map import (
    MAP_RUN_REDRIVE_LIMIT,
    deliver_twice,
    memory_for_map_run,
)
from tests.integration.conftest import zip_source
from tests.support import wait_for_execution

# Fails the listed items until the execution has been redriven `fail_until_redrive` times.
WORKER = """
def handler(event, context):
    item, redrives = event.get("item"), event["redrive_count"]
    if item in event.get("fail_items", []) and redrives < event.get("fail_until_redrive", 1):
        raise RuntimeError(f"planned failure of item {item}")
    return {"item": item, "redrive_count": redrives, "retry_count": event.get("retry_count")}
"""

BUCKET = "conformance"


@pytest.fixture(scope="module")
def worker_arn(aws, role_arn) -> str:
    """Created once a worker's cloud: with --dist worksteal a worker may come back to this module after
    another (its fixtures set up again), and the function is then already there (seen at -n 4)."""
    aws("s3").create_bucket(Bucket=BUCKET)
    functions = aws("lambda")
    try:
        return functions.get_function(FunctionName="conformance-worker")["Configuration"]["FunctionArn"]
    except functions.exceptions.ResourceNotFoundException:
        pass
    return functions.create_function(
        FunctionName="conformance-worker",
        Runtime="python3.13",
        Role=role_arn,
        Handler="app.handler",
        Code={"ZipFile": zip_source({"app.py": WORKER})},
        Timeout=5,
    )["FunctionArn"]


def task(worker_arn: str, payload: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "Type": "Task",
        "Resource": "arn:aws:states:::lambda:invoke",
        "Parameters": {
            "FunctionName": worker_arn,
            "Payload": {
                "redrive_count.$": "$$.Execution.RedriveCount",
                "retry_count.$": "$$.State.RetryCount",
                **payload,
            },
        },
        "OutputPath": "$.Payload",
        **extra,
    }


def distributed_map(worker_arn: str, items_key: str, **extra: Any) -> dict[str, Any]:
    return {
        "Type": "Map",
        "MaxConcurrency": 4,
        "ItemReader": {
            "Resource": "arn:aws:states:::s3:getObject",
            "ReaderConfig": {"InputType": "JSON"},
            "Parameters": {"Bucket": BUCKET, "Key": items_key},
        },
        "ItemSelector": {"item.$": "$$.Map.Item.Value", "fail_items.$": "$.fail_items"},
        "ItemProcessor": {
            "ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"},
            "StartAt": "Work",
            "States": {
                "Work": task(worker_arn, {"item.$": "$.item", "fail_items.$": "$.fail_items"}, End=True)
            },
        },
        "ResultWriter": {
            "Resource": "arn:aws:states:::s3:putObject",
            "Parameters": {"Bucket": BUCKET, "Prefix": "results"},
        },
        **extra,
    }


class Machine:
    def __init__(self, aws, role_arn: str, definition: dict[str, Any]) -> None:
        self.sfn = aws("stepfunctions")
        self.s3 = aws("s3")
        self.arn = self.sfn.create_state_machine(
            name=f"conformance-{uuid.uuid4().hex[:8]}", definition=json.dumps(definition), roleArn=role_arn
        )["stateMachineArn"]

    def start(self, payload: dict[str, Any]) -> str:
        return self.sfn.start_execution(stateMachineArn=self.arn, input=json.dumps(payload))["executionArn"]

    def wait(self, execution_arn: str, timeout: float = 60) -> dict[str, Any]:
        return wait_for_execution(self.sfn, execution_arn, timeout=timeout)

    def history(self, execution_arn: str) -> list[dict[str, Any]]:
        return self.sfn.get_execution_history(executionArn=execution_arn, maxResults=1000)["events"]

    def result_files(self, output: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
        details = output["ResultWriterDetails"]
        manifest = json.loads(self.s3.get_object(Bucket=details["Bucket"], Key=details["Key"])["Body"].read())
        return {
            group: [
                entry
                for file in files
                for entry in json.loads(self.s3.get_object(Bucket=BUCKET, Key=file["Key"])["Body"].read())
            ]
            for group, files in manifest["ResultFiles"].items()
        }


def put_items(aws, count: int) -> str:
    key = f"items/{uuid.uuid4().hex}.json"
    aws("s3").put_object(Bucket=BUCKET, Key=key, Body=json.dumps(list(range(count))).encode())
    return key


def invocations(cloud: LocalCloud) -> int:
    return len(cloud.runtime.invocations_of("conformance-worker"))


# -- D: Distributed Map -------------------------------------------------------------------------------


def test_d2_a_failed_child_fails_the_map_with_exceed_tolerated_failure_threshold(aws, role_arn, worker_arn):
    machine = Machine(
        aws,
        role_arn,
        {"StartAt": "Map", "States": {"Map": distributed_map(worker_arn, put_items(aws, 6), End=True)}},
    )
    described = machine.wait(machine.start({"fail_items": [2]}))
    assert described["status"] == "FAILED"
    assert described["error"] == "States.ExceedToleratedFailureThreshold"
    assert "MapRunFailed" in [event["type"] for event in machine.history(described["executionArn"])]


def test_d2_failures_within_the_tolerated_percentage_succeed_and_are_reported(aws, role_arn, worker_arn):
    machine = Machine(
        aws,
        role_arn,
        {
            "StartAt": "Map",
            "States": {
                "Map": distributed_map(
                    worker_arn, put_items(aws, 10), ToleratedFailurePercentage=20.0, End=True
                )
            },
        },
    )
    described = machine.wait(machine.start({"fail_items": [3, 7]}))
    assert described["status"] == "SUCCEEDED"
    files = machine.result_files(json.loads(described["output"]))
    assert len(files["SUCCEEDED"]) == 8
    assert sorted(json.loads(entry["Input"])["item"] for entry in files["FAILED"]) == [3, 7]
    map_run = machine.sfn.list_map_runs(executionArn=described["executionArn"])["mapRuns"][0]
    counts = machine.sfn.describe_map_run(mapRunArn=map_run["mapRunArn"])["itemCounts"]
    assert (counts["succeeded"], counts["failed"], counts["total"]) == (8, 2, 10)


def test_d5_result_writer_writes_the_documented_result_files(aws, role_arn, worker_arn):
    machine = Machine(
        aws,
        role_arn,
        {"StartAt": "Map", "States": {"Map": distributed_map(worker_arn, put_items(aws, 5), End=True)}},
    )
    described = machine.wait(machine.start({"fail_items": []}))
    output = json.loads(described["output"])
    assert output["ResultWriterDetails"]["Key"].endswith("/manifest.json")
    files = machine.result_files(output)
    assert files["FAILED"] == [] and files["PENDING"] == []
    entry = files["SUCCEEDED"][0]
    assert entry["Status"] == "SUCCEEDED" and ":execution:" in entry["ExecutionArn"]
    assert json.loads(entry["Output"])["item"] == json.loads(entry["Input"])["item"]
    assert {"StartDate", "StopDate", "RedriveCount", "RedriveStatus"} <= set(entry)


@pytest.fixture
def low_recursion_limit() -> Iterator[int]:
    """The session cloud runs in the test process: a lower recursion limit (room left for pytest's and the
    server's own frames) shows a recursion per child with 500 children instead of 1,100."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(400)
    yield 400
    sys.setrecursionlimit(limit)


def test_d2_one_worker_runs_more_children_than_pythons_recursion_limit(
    aws, role_arn, worker_arn, low_recursion_limit: int
):
    """moto hands a worker its next child by recursing once per child: a Map Run of 20,000 documents at
    MaxConcurrency 10 (2,000 children per worker) would end in RecursionError. Each worker loops here."""
    count = low_recursion_limit + 100
    definition = distributed_map(worker_arn, put_items(aws, count), End=True, MaxConcurrency=1)
    definition["ItemSelector"] = {"item.$": "$$.Map.Item.Value"}
    definition["ItemProcessor"]["States"] = {"Work": {"Type": "Pass", "End": True}}
    machine = Machine(aws, role_arn, {"StartAt": "Map", "States": {"Map": definition}})
    described = machine.wait(machine.start({}), timeout=300)
    assert described["status"] == "SUCCEEDED", described.get("cause")
    files = machine.result_files(json.loads(described["output"]))
    assert [json.loads(entry["Output"])["item"] for entry in files["SUCCEEDED"]] == list(range(count))


def test_d5_a_failed_map_run_still_writes_failed_and_pending_files(aws, role_arn, worker_arn):
    definition = distributed_map(worker_arn, put_items(aws, 40), End=True)
    definition["MaxConcurrency"] = 1
    machine = Machine(aws, role_arn, {"StartAt": "Map", "States": {"Map": definition}})
    execution_arn = machine.start({"fail_items": [1]})
    assert machine.wait(execution_arn)["status"] == "FAILED"
    manifest_key = next(
        obj["Key"]
        for obj in aws("s3").list_objects_v2(Bucket=BUCKET, Prefix="results/")["Contents"]
        if obj["Key"].endswith("manifest.json")
        and machine.sfn.list_map_runs(executionArn=execution_arn)["mapRuns"][0]["mapRunArn"].rsplit(":", 1)[
            -1
        ]
        in obj["Key"]
    )
    files = machine.result_files({"ResultWriterDetails": {"Bucket": BUCKET, "Key": manifest_key}})
    assert [json.loads(entry["Input"])["item"] for entry in files["FAILED"]] == [1]
    assert files["FAILED"][0]["Error"] == "RuntimeError"
    assert len(files["PENDING"]) >= 30, "items never started are reported as pending"


# -- R: RedriveExecution ------------------------------------------------------------------------------


def three_steps(worker_arn: str) -> dict[str, Any]:
    return {
        "StartAt": "Before",
        "States": {
            "Before": {"Type": "Pass", "Result": {"item": "x", "fail_items": ["x"]}, "Next": "Work"},
            "Work": task(worker_arn, {"item.$": "$.item", "fail_items.$": "$.fail_items"}, Next="After"),
            "After": {"Type": "Pass", "End": True},
        },
    }


def test_r1_redrive_restarts_from_the_failed_state_with_its_input(aws, role_arn, worker_arn, cloud):
    machine = Machine(aws, role_arn, three_steps(worker_arn))
    execution_arn = machine.start({})
    assert machine.wait(execution_arn)["status"] == "FAILED"
    calls_before = invocations(cloud)
    machine.sfn.redrive_execution(executionArn=execution_arn)
    described = machine.wait(execution_arn)
    assert described["status"] == "SUCCEEDED"
    assert json.loads(described["output"]) == {"item": "x", "redrive_count": 1, "retry_count": 0}
    assert invocations(cloud) == calls_before + 1
    entered = [
        e["stateEnteredEventDetails"]["name"]
        for e in machine.history(execution_arn)
        if "stateEnteredEventDetails" in e
    ]
    assert entered == ["Before", "Work", "Work", "After"], "the succeeded Pass state is not run again"


def test_r2_redrive_keeps_the_execution_arn_and_its_history(aws, role_arn, worker_arn):
    machine = Machine(aws, role_arn, three_steps(worker_arn))
    execution_arn = machine.start({})
    machine.wait(execution_arn)
    first_history = machine.history(execution_arn)
    machine.sfn.redrive_execution(executionArn=execution_arn)
    assert machine.wait(execution_arn)["executionArn"] == execution_arn
    assert machine.history(execution_arn)[: len(first_history)] == first_history


def test_r3_succeeded_and_running_executions_are_not_redrivable(aws, role_arn, worker_arn):
    machine = Machine(
        aws, role_arn, {"StartAt": "Wait", "States": {"Wait": {"Type": "Wait", "Seconds": 2, "End": True}}}
    )
    execution_arn = machine.start({})
    with pytest.raises(ClientError) as running:
        machine.sfn.redrive_execution(executionArn=execution_arn)
    assert running.value.response["Error"]["Code"] == "ExecutionNotRedrivable"
    assert machine.wait(execution_arn)["status"] == "SUCCEEDED"
    with pytest.raises(ClientError) as succeeded:
        machine.sfn.redrive_execution(executionArn=execution_arn)
    assert succeeded.value.response["Error"]["Code"] == "ExecutionNotRedrivable"
    assert "SUCCEEDED" in succeeded.value.response["Error"]["Message"]


def test_r4_fail_state_fails_again_on_redrive(aws, role_arn):
    machine = Machine(
        aws,
        role_arn,
        {
            "StartAt": "Stop",
            "States": {"Stop": {"Type": "Fail", "Error": "Business.Rejected", "Cause": "always"}},
        },
    )
    execution_arn = machine.start({})
    assert machine.wait(execution_arn)["status"] == "FAILED"
    machine.sfn.redrive_execution(executionArn=execution_arn)
    described = machine.wait(execution_arn)
    assert (described["status"], described["error"]) == ("FAILED", "Business.Rejected")


def test_r5_retry_counters_start_from_zero_on_redrive(aws, role_arn, worker_arn):
    retry = [{"ErrorEquals": ["RuntimeError"], "IntervalSeconds": 1, "MaxAttempts": 1}]
    machine = Machine(
        aws,
        role_arn,
        {
            "StartAt": "Work",
            "States": {
                "Work": task(
                    worker_arn,
                    {"item": "x", "fail_items": ["x"], "fail_until_redrive": 2},
                    Retry=retry,
                    End=True,
                )
            },
        },
    )
    execution_arn = machine.start({})
    assert machine.wait(execution_arn)["status"] == "FAILED"
    machine.sfn.redrive_execution(executionArn=execution_arn)
    assert machine.wait(execution_arn)["status"] == "FAILED", "redrive 1 fails again, after its own retry"
    machine.sfn.redrive_execution(executionArn=execution_arn)
    described = machine.wait(execution_arn)
    assert json.loads(described["output"]) == {"item": "x", "redrive_count": 2, "retry_count": 0}
    retries = [e for e in machine.history(execution_arn) if e["type"] == "TaskScheduled"]
    assert len(retries) == 5, "two attempts per failed run (Retry MaxAttempts 1), one on the last redrive"


def test_r6_describe_execution_reports_redrives_and_history_records_them(aws, role_arn, worker_arn):
    machine = Machine(aws, role_arn, three_steps(worker_arn))
    execution_arn = machine.start({})
    failed = machine.wait(execution_arn)
    assert (failed["redriveCount"], failed["redriveStatus"]) == (0, "REDRIVABLE")
    machine.sfn.redrive_execution(executionArn=execution_arn)
    described = machine.wait(execution_arn)
    assert described["redriveCount"] == 1 and "redriveDate" in described
    assert described["redriveStatus"] == "NOT_REDRIVABLE"
    assert "ExecutionRedriven" in [event["type"] for event in machine.history(execution_arn)]


def test_r7_client_token_makes_redrive_idempotent(aws, role_arn, worker_arn):
    machine = Machine(
        aws,
        role_arn,
        {
            "StartAt": "Work",
            "States": {
                "Work": task(
                    worker_arn, {"item": "x", "fail_items": ["x"], "fail_until_redrive": 5}, End=True
                )
            },
        },
    )
    execution_arn = machine.start({})
    machine.wait(execution_arn)
    first = machine.sfn.redrive_execution(executionArn=execution_arn, clientToken="token-1")
    machine.wait(execution_arn)
    second = machine.sfn.redrive_execution(executionArn=execution_arn, clientToken="token-1")
    assert first["redriveDate"] == second["redriveDate"]
    assert machine.sfn.describe_execution(executionArn=execution_arn)["redriveCount"] == 1


# -- M: Map Run redrive -------------------------------------------------------------------------------


def test_m1_redrive_reruns_only_the_children_that_did_not_succeed(aws, role_arn, worker_arn, cloud):
    definition = distributed_map(worker_arn, put_items(aws, 12), End=True)
    machine = Machine(aws, role_arn, {"StartAt": "Map", "States": {"Map": definition}})
    execution_arn = machine.start({"fail_items": [4, 9]})
    assert machine.wait(execution_arn)["status"] == "FAILED"
    calls_before = invocations(cloud)
    machine.sfn.redrive_execution(executionArn=execution_arn)
    described = machine.wait(execution_arn)
    assert described["status"] == "SUCCEEDED"
    outputs = [
        json.loads(e["Output"]) for e in machine.result_files(json.loads(described["output"]))["SUCCEEDED"]
    ]
    assert sorted(output["item"] for output in outputs) == list(range(12)), "first-run results are kept"
    rerun = {output["item"] for output in outputs if output["redrive_count"] == 1}
    assert {4, 9} <= rerun and len(rerun) < 12, "the failed children and the never-started ones run again"
    assert invocations(cloud) - calls_before == len(rerun), "no succeeded child is invoked again"


def test_m5_a_redriven_map_run_reuses_its_original_items(aws, role_arn, worker_arn):
    items_key = put_items(aws, 6)
    machine = Machine(
        aws, role_arn, {"StartAt": "Map", "States": {"Map": distributed_map(worker_arn, items_key, End=True)}}
    )
    execution_arn = machine.start({"fail_items": [5]})
    assert machine.wait(execution_arn)["status"] == "FAILED"
    aws("s3").put_object(Bucket=BUCKET, Key=items_key, Body=b"[100, 101]")
    machine.sfn.redrive_execution(executionArn=execution_arn)
    described = machine.wait(execution_arn)
    assert described["status"] == "SUCCEEDED"
    files = machine.result_files(json.loads(described["output"]))
    assert sorted(json.loads(e["Input"])["item"] for e in files["SUCCEEDED"]) == list(range(6))


def test_m6_describe_map_run_reports_the_redrive_and_history_records_it(aws, role_arn, worker_arn):
    machine = Machine(
        aws,
        role_arn,
        {"StartAt": "Map", "States": {"Map": distributed_map(worker_arn, put_items(aws, 4), End=True)}},
    )
    execution_arn = machine.start({"fail_items": [0]})
    machine.wait(execution_arn)
    map_run_arn = machine.sfn.list_map_runs(executionArn=execution_arn)["mapRuns"][0]["mapRunArn"]
    machine.sfn.redrive_execution(executionArn=execution_arn)
    machine.wait(execution_arn)
    map_runs = machine.sfn.list_map_runs(executionArn=execution_arn)["mapRuns"]
    assert [run["mapRunArn"] for run in map_runs] == [map_run_arn], "the redrive keeps the Map Run"
    described = machine.sfn.describe_map_run(mapRunArn=map_run_arn)
    assert described["redriveCount"] == 1 and "redriveDate" in described
    assert described["itemCounts"]["succeeded"] == 4
    assert "MapRunRedriven" in [event["type"] for event in machine.history(execution_arn)]


def test_m2_a_standard_child_is_redriven_from_its_failed_state(aws, role_arn, worker_arn, cloud):
    definition = distributed_map(worker_arn, put_items(aws, 1), End=True)
    definition["ItemProcessor"]["StartAt"] = "First"
    definition["ItemProcessor"]["States"] = {
        "First": task(
            worker_arn, {"item": "first", "fail_items": []}, ResultPath="$.first", OutputPath="$", Next="Work"
        ),
        "Work": task(worker_arn, {"item.$": "$.item", "fail_items.$": "$.fail_items"}, End=True),
    }
    machine = Machine(aws, role_arn, {"StartAt": "Map", "States": {"Map": definition}})
    execution_arn = machine.start({"fail_items": [0]})
    machine.wait(execution_arn)
    calls_before = invocations(cloud)
    machine.sfn.redrive_execution(executionArn=execution_arn)
    assert machine.wait(execution_arn)["status"] == "SUCCEEDED"
    assert invocations(cloud) - calls_before == 1, "only the failed state of the child runs again"


def test_d4_item_batcher_hands_a_child_a_batch(aws, role_arn, worker_arn):
    definition = distributed_map(worker_arn, put_items(aws, 5), End=True)
    definition["ItemBatcher"] = {
        "MaxItemsPerBatch": 2,
        "BatchInput": {"batch": True, "failing.$": "$.fail_items", "execution.$": "$$.Execution.Name"},
    }
    processor = definition["ItemProcessor"]
    processor["States"] = {"Work": {"Type": "Pass", "End": True}}
    processor["StartAt"] = "Work"
    # A state before the Map makes its input differ from the execution's: BatchInput reads the Map's.
    shape = {"Type": "Pass", "Parameters": {"fail_items.$": "$.outer"}, "Next": "Map"}
    machine = Machine(aws, role_arn, {"StartAt": "Shape", "States": {"Shape": shape, "Map": definition}})
    execution_arn = machine.start({"outer": []})
    described = machine.wait(execution_arn)
    assert described["status"] == "SUCCEEDED"
    batches = [
        json.loads(e["Output"]) for e in machine.result_files(json.loads(described["output"]))["SUCCEEDED"]
    ]
    assert [[item["item"] for item in batch["Items"]] for batch in batches] == [[0, 1], [2, 3], [4]]
    # BatchInput's paths are evaluated against the Map state's input and the context object.
    expected = {"batch": True, "failing": [], "execution": execution_arn.rsplit(":", 1)[-1]}
    assert all(batch["BatchInput"] == expected for batch in batches)
    # DescribeMapRun counts items in itemCounts and child executions (the batches) in executionCounts.
    map_run_arn = machine.sfn.list_map_runs(executionArn=execution_arn)["mapRuns"][0]["mapRunArn"]
    items, children = (
        machine.sfn.describe_map_run(mapRunArn=map_run_arn)[n] for n in ("itemCounts", "executionCounts")
    )
    assert (items["total"], items["succeeded"]) == (5, 5)
    assert (children["total"], children["succeeded"]) == (3, 3)


def test_d1_express_children_run_and_are_redriven_from_the_start(aws, role_arn, worker_arn, cloud):
    definition = distributed_map(worker_arn, put_items(aws, 6), End=True)
    definition["ItemProcessor"]["ProcessorConfig"]["ExecutionType"] = "EXPRESS"
    machine = Machine(aws, role_arn, {"StartAt": "Map", "States": {"Map": definition}})
    execution_arn = machine.start({"fail_items": [2]})
    assert machine.wait(execution_arn)["status"] == "FAILED"
    machine.sfn.redrive_execution(executionArn=execution_arn)
    described = machine.wait(execution_arn)
    assert described["status"] == "SUCCEEDED"
    outputs = [
        json.loads(e["Output"]) for e in machine.result_files(json.loads(described["output"]))["SUCCEEDED"]
    ]
    assert sorted(output["item"] for output in outputs) == list(range(6))


def test_d1_express_children_are_at_least_once_when_asked(aws, role_arn, worker_arn, cloud):
    definition = distributed_map(worker_arn, put_items(aws, 4), End=True)
    definition["ItemProcessor"]["ProcessorConfig"]["ExecutionType"] = "EXPRESS"
    machine = Machine(aws, role_arn, {"StartAt": "Map", "States": {"Map": definition}})
    calls_before = invocations(cloud)
    deliver_twice({1})
    try:
        described = machine.wait(machine.start({"fail_items": []}))
    finally:
        deliver_twice(set())
    assert described["status"] == "SUCCEEDED"
    assert invocations(cloud) - calls_before == 5, "item 1 was delivered twice"


def test_m3_a_map_run_is_redriven_at_most_1000_times(aws, role_arn, worker_arn):
    machine = Machine(
        aws,
        role_arn,
        {"StartAt": "Map", "States": {"Map": distributed_map(worker_arn, put_items(aws, 2), End=True)}},
    )
    execution_arn = machine.start({"fail_items": [0]})
    machine.wait(execution_arn)
    map_run_arn = machine.sfn.list_map_runs(executionArn=execution_arn)["mapRuns"][0]["mapRunArn"]
    memory = memory_for_map_run(map_run_arn)
    assert memory is not None
    memory.redrive_count = MAP_RUN_REDRIVE_LIMIT
    machine.sfn.redrive_execution(executionArn=execution_arn)
    described = machine.wait(execution_arn)
    assert (described["status"], described["error"]) == ("FAILED", "States.Runtime")


def test_m4_a_map_run_that_never_started_runs_every_item_on_redrive(aws, role_arn, worker_arn, cloud):
    items_key = f"items/{uuid.uuid4().hex}.json"
    machine = Machine(
        aws, role_arn, {"StartAt": "Map", "States": {"Map": distributed_map(worker_arn, items_key, End=True)}}
    )
    execution_arn = machine.start({"fail_items": []})
    assert machine.wait(execution_arn)["status"] == "FAILED", "the item reader found no object"
    aws("s3").put_object(Bucket=BUCKET, Key=items_key, Body=b"[0, 1, 2]")
    calls_before = invocations(cloud)
    machine.sfn.redrive_execution(executionArn=execution_arn)
    assert machine.wait(execution_arn)["status"] == "SUCCEEDED"
    assert invocations(cloud) - calls_before == 3


def test_r3_an_execution_closed_over_14_days_ago_or_with_a_full_history_is_not_redrivable(
    aws, role_arn, worker_arn, monkeypatch
):
    machine = Machine(aws, role_arn, three_steps(worker_arn))
    execution_arn = machine.start({})
    machine.wait(execution_arn)
    monkeypatch.setattr(redrive, "HISTORY_LIMIT", 3)
    described = machine.sfn.describe_execution(executionArn=execution_arn)
    assert described["redriveStatus"] == "NOT_REDRIVABLE" and "history" in described["redriveStatusReason"]
    monkeypatch.setattr(redrive, "HISTORY_LIMIT", 24_999)
    monkeypatch.setattr(redrive, "REDRIVE_WINDOW", datetime.timedelta(seconds=0))
    with pytest.raises(ClientError) as refused:
        machine.sfn.redrive_execution(executionArn=execution_arn)
    assert "14 days" in refused.value.response["Error"]["Message"]
