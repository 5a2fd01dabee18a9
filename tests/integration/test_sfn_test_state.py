"""TestState through boto3 against the local cloud (AWS API reference "TestState", as of 2026-11).

The AWS CLI and SDKs send TestState to a `sync-` host prefix; with a local endpoint the prefix cannot
resolve, so the client turns host prefixes off (docs/sfn-local.md)."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from botocore.config import Config

from docagent.localcloud.server import REGION, LocalCloud

TASK = {
    "Type": "Task",
    "Resource": "arn:aws:states:::lambda:invoke",
    "Parameters": {"FunctionName": "any", "Payload.$": "$"},
    "ResultSelector": {"total.$": "$.Payload.total"},
    "ResultPath": "$.result",
    "Retry": [{"ErrorEquals": ["Throttled"], "IntervalSeconds": 2, "BackoffRate": 3, "MaxAttempts": 2}],
    "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "Recover"}],
    "Next": "Continue",
}


ROLE = "arn:aws:iam::123456789012:role/TestState"


@pytest.fixture(scope="module")
def sfn(cloud: LocalCloud) -> Any:
    return boto3.client(
        "stepfunctions", endpoint_url=cloud.endpoint, region_name=REGION,
        aws_access_key_id="local", aws_secret_access_key="local", config=Config(inject_host_prefix=False),
    )  # fmt: skip


def test_a_mocked_result_goes_through_the_states_paths(sfn: Any) -> None:
    answer = sfn.test_state(
        definition=json.dumps(TASK), input=json.dumps({"order": 1}), inspectionLevel="DEBUG",
        mock={"result": json.dumps({"StatusCode": 200, "Payload": {"total": 42}})},
    )  # fmt: skip
    assert answer["status"] == "SUCCEEDED"
    assert answer["nextState"] == "Continue"
    assert json.loads(answer["output"]) == {"order": 1, "result": {"total": 42}}
    assert json.loads(answer["inspectionData"]["input"]) == {"order": 1}
    inspection = {key: json.loads(value) for key, value in answer["inspectionData"].items()}
    # AWS API reference "InspectionData": each step of the data flow; no variables, no field.
    assert inspection == {
        "input": {"order": 1},
        "afterInputPath": {"order": 1},
        "afterParameters": {"FunctionName": "any", "Payload": {"order": 1}},
        "result": {"StatusCode": 200, "Payload": {"total": 42}},
        "afterResultSelector": {"total": 42},
        "afterResultPath": {"order": 1, "result": {"total": 42}},
    }


def test_input_path_and_a_pass_states_result_path_are_inspected(sfn: Any) -> None:
    state = {"Type": "Pass", "InputPath": "$.order", "Parameters": {"id.$": "$.id"}, "ResultPath": "$.copy",
             "End": True}  # fmt: skip
    answer = sfn.test_state(
        definition=json.dumps(state), input=json.dumps({"order": {"id": 7}}), inspectionLevel="DEBUG"
    )
    inspection = {key: json.loads(value) for key, value in answer["inspectionData"].items()}
    assert inspection["afterInputPath"] == {"id": 7}
    assert inspection["afterParameters"] == {"id": 7}
    # ResultPath combines the result with the raw state input, not the InputPath's (AWS "ResultPath").
    assert inspection["afterResultPath"] == {"order": {"id": 7}, "copy": {"id": 7}}
    assert json.loads(answer["output"]) == {"order": {"id": 7}, "copy": {"id": 7}}
    assert "variables" not in inspection


def test_a_mocked_error_is_retriable_then_caught(sfn: Any) -> None:
    """TestState does not retry: a matching retrier with attempts left is RETRIABLE (with its backoff);
    once retrierRetryCount uses them up, the Catch takes the error."""
    mock = {"errorOutput": {"error": "Throttled", "cause": "slow down"}}
    first = sfn.test_state(definition=json.dumps(TASK), input="{}", mock=mock, inspectionLevel="DEBUG",
                           stateConfiguration={"retrierRetryCount": 1})  # fmt: skip
    assert first["status"] == "RETRIABLE"
    assert first["inspectionData"]["errorDetails"] == {"retryIndex": 0, "retryBackoffIntervalSeconds": 6}
    last = sfn.test_state(
        definition=json.dumps(TASK), input="{}", mock=mock, stateConfiguration={"retrierRetryCount": 2}
    )
    assert (last["status"], last["nextState"], last["error"]) == ("CAUGHT_ERROR", "Recover", "Throttled")
    assert json.loads(last["output"]) == {"Error": "Throttled", "Cause": "slow down"}


def test_a_jsonata_state_of_a_whole_machine_with_variables(sfn: Any) -> None:
    machine = {
        "QueryLanguage": "JSONata",
        "StartAt": "Start",
        "States": {
            "Start": {"Type": "Pass", "Next": "Add"},
            "Add": {"Type": "Pass", "Output": "{% $states.input.x + $bonus %}", "End": True},
        },
    }
    answer = sfn.test_state(
        definition=json.dumps(machine), stateName="Add", input='{"x": 1}', variables='{"bonus": 41}'
    )
    assert (answer["status"], json.loads(answer["output"])) == ("SUCCEEDED", 42)


def test_an_unmocked_task_runs_the_projects_own_handler(sfn: Any, deployed: Any) -> None:
    """PrepareJob's real handler stores the request; ListDocuments then refuses a prefix with no documents
    (NoDocuments, docs/design.md)."""
    task = {
        "Type": "Task",
        "Resource": "arn:aws:states:::lambda:invoke",
        "Parameters": {"FunctionName": deployed.outputs["PrepareJobFunctionName"], "Payload.$": "$"},
        "End": True,
    }
    event = {
        "request": {"job_id": "teststate-empty", "prefix": "incoming/nothing-here/"},
        "execution_name": "teststate-empty",
    }
    answer = sfn.test_state(definition=json.dumps(task), input=json.dumps(event), roleArn=ROLE)
    assert answer["status"] == "SUCCEEDED"
    started = json.loads(answer["output"])["Payload"]
    listing = {"action": "list", "job_id": "teststate-empty", "listing": started["listing"]}
    answer = sfn.test_state(definition=json.dumps(task), input=json.dumps(listing), roleArn=ROLE)
    assert answer["status"] == "FAILED"
    assert answer["error"] == "NoDocuments"


def test_a_mock_is_checked_against_the_services_output_shape(sfn: Any) -> None:
    """AWS API reference "MockInput": STRICT (the default) needs the required fields, PRESENT checks the
    fields given; the refusal is a ValidationException "Mock result schema validation error: ..."."""
    state = {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:sfn:startExecution", "End": True}
    partial = {"result": json.dumps({"ExecutionArn": "arn:aws:states:us-east-1:123456789012:execution:a:b"})}
    with pytest.raises(sfn.exceptions.ValidationException, match="Required field 'StartDate' is missing"):
        sfn.test_state(definition=json.dumps(state), mock=partial)
    answer = sfn.test_state(definition=json.dumps(state), mock={**partial, "fieldValidationMode": "PRESENT"})
    assert answer["status"] == "SUCCEEDED"
    wrong = {"result": json.dumps({"ExecutionArn": 7}), "fieldValidationMode": "PRESENT"}
    with pytest.raises(sfn.exceptions.ValidationException, match="Field 'ExecutionArn' must be a string"):
        sfn.test_state(definition=json.dumps(state), mock=wrong)


def test_a_pass_state_refuses_a_mock_and_a_state_name_must_exist(sfn: Any) -> None:
    with pytest.raises(sfn.exceptions.ValidationException, match="State type 'Pass' is not supported"):
        sfn.test_state(definition=json.dumps({"Type": "Pass", "End": True}), mock={"result": "{}"})
    machine = {"StartAt": "A", "States": {"A": {"Type": "Pass", "End": True}}}
    with pytest.raises(sfn.exceptions.ValidationException, match="State not found in definition"):
        sfn.test_state(definition=json.dumps(machine), stateName="B")


PROCESSOR = {"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}}


def test_a_map_or_parallel_needs_a_mock_and_its_result_is_the_mock(sfn: Any) -> None:
    """AWS API reference "TestState": Map and Parallel states are tested only with a mock; its result then
    goes through ResultSelector and ResultPath as any result does."""
    inline = {"Type": "Map", "ItemsPath": "$.items", "ItemProcessor": PROCESSOR, "ResultPath": "$.out",
              "End": True}  # fmt: skip
    with pytest.raises(sfn.exceptions.InvalidDefinition, match="does not support Map or Parallel"):
        sfn.test_state(definition=json.dumps(inline), input='{"items": [1]}')
    answer = sfn.test_state(
        definition=json.dumps(inline), input='{"items": [1, 2]}', mock={"result": "[10, 20]"}
    )
    assert (answer["status"], json.loads(answer["output"])) == (
        "SUCCEEDED",
        {"items": [1, 2], "out": [10, 20]},
    )
    with pytest.raises(sfn.exceptions.ValidationException, match=r"Mocked result must be an array\."):
        sfn.test_state(definition=json.dumps(inline), input='{"items": [1]}', mock={"result": "{}"})
    parallel = {"Type": "Parallel", "Branches": [PROCESSOR, PROCESSOR], "ResultSelector": {"first.$": "$[0]"},
                "Next": "After"}  # fmt: skip
    answer = sfn.test_state(definition=json.dumps(parallel), input="{}", mock={"result": '["a", "b"]'})
    assert (answer["status"], answer["nextState"], json.loads(answer["output"])) == (
        "SUCCEEDED", "After", {"first": "a"},
    )  # fmt: skip


def test_a_distributed_maps_failures_against_its_threshold(sfn: Any) -> None:
    """AWS API reference "TestStateConfiguration": mapIterationFailureCount, checked against the Map's
    tolerated failure threshold: past it, States.ExceedToleratedFailureThreshold (catchable)."""
    processor = {**PROCESSOR, "ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}}
    state = {"Type": "Map", "ItemsPath": "$.items", "ItemProcessor": processor, "ToleratedFailureCount": 1,
             "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "Failed"}], "End": True}  # fmt: skip
    items = json.dumps({"items": [1, 2, 3]})
    within = sfn.test_state(
        definition=json.dumps(state), input=items, mock={"result": "[1, 2]"},
        stateConfiguration={"mapIterationFailureCount": 1}, inspectionLevel="DEBUG",
    )  # fmt: skip
    assert within["status"] == "SUCCEEDED"
    inspection = within["inspectionData"]  # API reference "InspectionData": the Map's own fields
    assert (json.loads(inspection["afterItemsPath"]), inspection["maxConcurrency"]) == ([1, 2, 3], 0)
    assert inspection["toleratedFailureCount"] == 1
    past = sfn.test_state(definition=json.dumps(state), input=items, mock={"result": "[1]"},
                          stateConfiguration={"mapIterationFailureCount": 2})  # fmt: skip
    assert (past["status"], past["error"], past["nextState"]) == (
        "CAUGHT_ERROR", "States.ExceedToleratedFailureThreshold", "Failed",
    )  # fmt: skip
    assert past["cause"] == "The specified tolerated failure threshold was exceeded"


def test_a_mocked_states_error_meets_the_retrier(sfn: Any) -> None:
    """A mock may throw a States error (AWS "MockErrorOutput": any error name), e.g. to test a Retry on
    States.Timeout."""
    state = {**TASK, "Retry": [{"ErrorEquals": ["States.Timeout"], "MaxAttempts": 1}]}
    answer = sfn.test_state(definition=json.dumps(state), input="{}",
                            mock={"errorOutput": {"error": "States.Timeout", "cause": "slow"}})  # fmt: skip
    assert (answer["status"], answer["error"]) == ("RETRIABLE", "States.Timeout")


# As recorded on AWS: LocalStack's AWS-validated snapshot test_state/test_state_context_object (read
# 2026-12-04), its context objects and the state that reads $$ into its result.
FULL_CONTEXT = {
    "Execution": {"Id": "arn:aws:states:::execution:MyStateMachine:execution-name-12345",
                  "Input": {"input-value": 0, "message": "test data"}, "Name": "execution-name-12345",
                  "RoleArn": "arn:aws:iam:::role/StepFunctionsRole", "StartTime": "2025-01-15T10:30:00.000Z"},
    "State": {"EnteredTime": "2025-01-15T10:30:01.500Z", "Name": "MyTaskState", "RetryCount": 0},
    "StateMachine": {"Id": "arn:aws:states:::stateMachine:MyStateMachine", "Name": "MyStateMachine"},
}  # fmt: skip
READS_CONTEXT = {
    "Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
    "Parameters": {"FunctionName.$": "$.FunctionName", "Payload": {"Input.$": "$"}},
    "ResultSelector": {"ContextObjectValue.$": "$$", "LambdaOutput.$": "$"}, "End": True,
}  # fmt: skip


@pytest.mark.parametrize(
    "context",
    [FULL_CONTEXT, {"Execution": {}, "State": {}, "StateMachine": {}}, {}],
    ids=["full", "empty-objects", "empty"],
)
def test_the_context_object_is_exactly_the_one_given(sfn: Any, context: dict[str, Any]) -> None:
    """``test_state_task_context_object[ALL]`` and ``test_state_context_object_edge_cases``: $$ reads back
    the given object, no field of the run's own added (not the state's name, not ``{}`` filled in)."""
    answer = sfn.test_state(
        definition=json.dumps(READS_CONTEXT), input=json.dumps({"FunctionName": "f", "Payload": {}}),
        mock={"result": json.dumps({"pokemon": "pikachu"})}, context=json.dumps(context),
    )  # fmt: skip
    assert answer["status"] == "SUCCEEDED", answer
    assert json.loads(answer["output"]) == {
        "ContextObjectValue": context,
        "LambdaOutput": {"pokemon": "pikachu"},
    }


def test_a_jsonata_state_reads_the_same_context(sfn: Any) -> None:
    """``$states.context`` is the Context object (developer guide "Transforming data with JSONata"): the
    given one, as ``$$`` above."""
    state = {"Type": "Task", "QueryLanguage": "JSONata", "Resource": "arn:aws:states:::lambda:invoke",
             "Arguments": {"FunctionName": "f"}, "Output": "{% $states.context %}", "End": True}  # fmt: skip
    for context in (FULL_CONTEXT, {}):
        answer = sfn.test_state(definition=json.dumps(state), input="{}", context=json.dumps(context),
                                mock={"result": json.dumps({"StatusCode": 200})})  # fmt: skip
        assert (answer["status"], json.loads(answer["output"])) == ("SUCCEEDED", context), answer


def test_a_callback_tasks_token_comes_from_the_context(sfn: Any) -> None:
    """``test_state_wait_task_context_object``: a ``.waitForTaskToken`` task's ``$$.Task.Token`` is the
    given one."""
    state = {"Type": "Task", "Resource": "arn:aws:states:::sqs:sendMessage.waitForTaskToken",
             "Parameters": {"QueueUrl": "https://sqs.us-east-1.amazonaws.com/123456789012/test-queue",
                            "MessageBody": {"TaskToken.$": "$$.Task.Token"}},
             "ResultPath": "$.SQS", "End": True}  # fmt: skip
    answer = sfn.test_state(
        definition=json.dumps(state), input="{}", inspectionLevel="DEBUG",
        mock={"result": json.dumps({"pokemon": "pikachu"})},
        context=json.dumps({**FULL_CONTEXT, "Task": {"Token": "abcd123"}}),
    )  # fmt: skip
    assert answer["status"] == "SUCCEEDED", answer
    assert json.loads(answer["inspectionData"]["afterParameters"])["MessageBody"] == {"TaskToken": "abcd123"}


@pytest.mark.parametrize(
    ("context", "resource", "message"),
    [
        ({"Execution": {"Id": 1}}, "states:startExecution", "Execution.Id must be a string"),
        ({"Map": {}}, "states:startExecution", "'Map' field is not supported when mocking a Context object"),
        ({"Execution": {"pokemon": "squirtle"}}, "states:startExecution", "Field 'pokemon' is not allowed"),
        ({"Pokedex": {}}, "states:startExecution", "Field 'Pokedex' is not allowed"),
        ({"Task": {"Token": "abcd123"}}, "lambda:invoke",
         "Context object contains 'Task' when state is not a Task state with a '.sync' or "
         "'.waitForTaskToken' service integration pattern"),
    ],
)  # fmt: skip
def test_a_context_object_aws_refuses(sfn: Any, context: dict[str, Any], resource: str, message: str) -> None:
    """``test_state_context_object_validation_failures`` and ``..._invalid_states[TOKEN_TASK_NOT_SYNC]``."""
    state = {"Type": "Task", "Resource": f"arn:aws:states:::{resource}", "End": True}
    mock = {"result": json.dumps({"ExecutionArn": "exec_arn", "StartDate": "2025-01-15T10:30:00Z"})}
    with pytest.raises(sfn.exceptions.ValidationException) as refused:
        sfn.test_state(definition=json.dumps(state), input="{}", mock=mock, context=json.dumps(context))
    assert refused.value.response["Error"]["Message"] == f"Invalid Context object provided: {message}"


def test_a_task_that_cannot_run_for_real_needs_a_mock(sfn: Any) -> None:
    """A Task tested for real needs a role; an activity, .sync or .waitForTaskToken task needs a mock
    (AWS API reference "TestState")."""
    task = {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "End": True}
    with pytest.raises(sfn.exceptions.ValidationException, match="RoleArn must be specified"):
        sfn.test_state(definition=json.dumps(task), input="{}")
    callback = {**task, "Resource": "arn:aws:states:::sqs:sendMessage.waitForTaskToken"}
    with pytest.raises(sfn.exceptions.ValidationException, match="when a mock is specified"):
        sfn.test_state(definition=json.dumps(callback), input="{}", roleArn=ROLE)
    mocked = sfn.test_state(definition=json.dumps(callback), input="{}", mock={"result": '{"ok": 1}'})
    assert json.loads(mocked["output"]) == {"ok": 1}


# LocalStack's AWS-validated snapshot test_state/test_state_configuration (real AWS answers, read
# 2026-12-04): its BASE_MAP_STATE and MAP_ITEM_READER_STATE_MACHINE templates, and what AWS answered.
JSONATA_MAP = {
    "Type": "Map", "QueryLanguage": "JSONata", "Items": "{% $states.input.Values %}",
    "ItemProcessor": {
        "ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}, "StartAt": "TestState",
        "States": {"TestState": {"Type": "Task", "QueryLanguage": "JSONata",
                                 "Resource": "arn:aws:states:::lambda:invoke",
                                 "Arguments": {"FunctionName": "foo", "Payload": "bar"}, "End": True}},
    },
    "Output": "{% $states %}", "End": True,
}  # fmt: skip
READER_MACHINE = {
    "QueryLanguage": "JSONata", "StartAt": "State0",
    "States": {"State0": {
        "Type": "Map", "MaxConcurrency": 1,
        "ItemReader": {"ReaderConfig": {"InputType": "JSON"}, "Resource": "arn:aws:states:::s3:getObject",
                       "Arguments": {"Bucket": "{% $states.input.Bucket %}",
                                     "Key": "{% $states.input.Key %}"}},
        "ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"},
                          "StartAt": "HandleItem", "States": {"HandleItem": {"Type": "Pass", "End": True}}},
        "End": True}},
}  # fmt: skip
MOCKED_ERROR = {"errorOutput": {"error": "MockException", "cause": "Mock the error cause."}}


def test_error_caused_by_state_fails_the_map_with_the_mocked_error(sfn: Any) -> None:
    """``test_map_state_error_caused_by_state``: FAILED with the mock's error; at DEBUG the input and the
    Map's maxConcurrency (0: unset)."""
    answer = sfn.test_state(
        definition=json.dumps(JSONATA_MAP), roleArn=ROLE, input=json.dumps({"Values": [1, 1, 1]}),
        stateConfiguration={"errorCausedByState": "TestState"}, inspectionLevel="DEBUG", mock=MOCKED_ERROR,
    )  # fmt: skip
    assert (answer["status"], answer["error"], answer["cause"]) == (
        "FAILED",
        "MockException",
        "Mock the error cause.",
    )
    assert json.loads(answer["inspectionData"]["input"]) == {"Values": [1, 1, 1]}
    assert answer["inspectionData"]["maxConcurrency"] == 0


@pytest.mark.parametrize("failures", [0, 2])
def test_map_item_reader_data_stands_for_the_reader(sfn: Any, failures: int) -> None:
    """``test_state_machine_configuration_map_iteration_item_reader`` and ``..._item_reader_with_error``:
    with ``mapItemReaderData`` the reader is not read (no bucket exists); a result mock is the output, an
    error mock fails the Map with its error whatever the failure count."""
    given = {"stateName": "State0", "definition": json.dumps(READER_MACHINE), "roleArn": ROLE,
             "input": json.dumps({"Bucket": "test-bucket", "Key": "test-key"}),
             "inspectionLevel": "DEBUG"}  # fmt: skip
    read = sfn.test_state(**given, stateConfiguration={"mapItemReaderData": json.dumps([1, 2, 3])},
                          mock={"result": json.dumps([1, 4, 9])})  # fmt: skip
    assert (read["status"], json.loads(read["output"])) == ("SUCCEEDED", [1, 4, 9])
    assert read["inspectionData"]["maxConcurrency"] == 1
    configuration = {"mapIterationFailureCount": failures, "errorCausedByState": "HandleItem",
                     "mapItemReaderData": json.dumps([1, 2, 3])}  # fmt: skip
    failed = sfn.test_state(**given, stateConfiguration=configuration, mock=MOCKED_ERROR)
    assert (failed["status"], failed["error"], failed["cause"]) == (
        "FAILED",
        "MockException",
        "Mock the error cause.",
    )


# More answers recorded on AWS (LocalStack's AWS-validated snapshots test_state/test_test_state_scenarios,
# test_test_state_mock_scenarios and test_state_configuration, read 2026-12-04).
CATCH_ALL_STATES = {
    "QueryLanguage": "JSONata", "Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
    "Arguments": {"FunctionName": "foo", "Payload": "bar"},
    "Catch": [{"ErrorEquals": ["MockException"], "Output": "{% $states %}", "Next": "HandleMockError"}],
    "End": True,
}  # fmt: skip
BRANCHES = [{"StartAt": f"B{i}", "States": {f"B{i}": {"Type": "Pass", "End": True}}} for i in (1, 2)]


def _debug(sfn: Any, state: dict[str, Any], given: Any, **extra: Any) -> dict[str, Any]:
    answer: dict[str, Any] = sfn.test_state(
        definition=json.dumps(state), input=json.dumps(given), inspectionLevel="DEBUG", **extra
    )
    return answer


def _inspected(answer: dict[str, Any]) -> dict[str, Any]:
    return {key: json.loads(value) if isinstance(value, str) else value
            for key, value in answer["inspectionData"].items()}  # fmt: skip


def test_a_caught_error_in_aws_frame(sfn: Any) -> None:
    """``test_state_task_catch_error``: the state runs as ``StateName``, its Context object is an Express
    execution's without RedriveCount, with a null RoleArn when the request names no role; in the Catch,
    ``$states`` holds input, context and errorOutput (no result); the Task's arguments are inspected although
    its mock threw."""
    thrown = {"error": "MockException", "cause": "Mock the cause of the error."}
    answer = _debug(sfn, CATCH_ALL_STATES, {"Value": "HelloWorld"}, mock={"errorOutput": thrown})
    assert (answer["status"], answer["nextState"]) == ("CAUGHT_ERROR", "HandleMockError")
    states = json.loads(answer["output"])
    assert set(states) == {"input", "context", "errorOutput"}
    assert states["errorOutput"] == {"Error": "MockException", "Cause": "Mock the cause of the error."}
    execution, state = states["context"]["Execution"], states["context"]["State"]
    assert ":express:" in execution["Id"] and "RedriveCount" not in execution and execution["RoleArn"] is None
    assert (state["Name"], state["RetryCount"]) == ("StateName", 0)
    assert _inspected(answer) == {"input": {"Value": "HelloWorld"}, "afterArguments": {"FunctionName": "foo",
                                  "Payload": "bar"}, "errorDetails": {"catchIndex": 0}}  # fmt: skip


def test_an_exhausted_retrier_fails_with_its_index(sfn: Any) -> None:
    """``test_state_configuration_retrier_retry_count``: at retrierRetryCount = MaxAttempts the answer is
    FAILED with errorDetails {retryIndex}."""
    state = {**CATCH_ALL_STATES, "Retry": [{"ErrorEquals": ["MockException"], "MaxAttempts": 5}]}
    state.pop("Catch")
    answer = _debug(sfn, state, {}, stateConfiguration={"retrierRetryCount": 5},
                    mock={"errorOutput": {"error": "MockException", "cause": "c"}})  # fmt: skip
    assert (answer["status"], _inspected(answer)["errorDetails"]) == ("FAILED", {"retryIndex": 0})


@pytest.mark.parametrize(
    ("state", "fields"),
    [
        ({"Type": "Pass", "End": True},
         {"input", "afterInputPath", "afterParameters", "afterResultSelector", "afterResultPath"}),
        ({"Type": "Pass", "Result": {"resultKey": "result value"}, "End": True},
         {"input", "result", "afterResultSelector", "afterResultPath"}),
    ],
    ids=["no-result", "result"],
)  # fmt: skip
def test_a_pass_states_inspection(sfn: Any, state: dict[str, Any], fields: set[str]) -> None:
    """``test_base_inspection_level_debug[BASE_PASS_STATE]`` and ``[BASE_RESULT_PASS_STATE]``."""
    assert set(_debug(sfn, state, {"Value": "HelloWorld"})["inspectionData"]) == fields


@pytest.mark.parametrize(
    ("state", "fields"),
    [
        ({"Type": "Parallel", "Branches": BRANCHES, "End": True},
         {"input", "afterResultSelector", "afterResultPath"}),
        ({"Type": "Parallel", "QueryLanguage": "JSONata", "Branches": BRANCHES, "End": True}, {"input"}),
        ({"Type": "Map", "QueryLanguage": "JSONata", "Items": "{% $states.input.Values %}",
          "MaxConcurrency": "{% $variable := 1 %}", "ItemProcessor": BRANCHES[0], "End": True},
         {"input", "maxConcurrency"}),
    ],
    ids=["parallel", "jsonata-parallel", "jsonata-map"],
)  # fmt: skip
def test_a_mocked_parallel_or_maps_inspection(sfn: Any, state: dict[str, Any], fields: set[str]) -> None:
    """``test_base_parallel_state_mock_success``, ``test_io_jsonata_parallel_state_mock_success``,
    ``test_base_map_state_inspect[MAX_CONCURRENCY-DEBUG]``: no arguments or raw result; a JSONata
    MaxConcurrency evaluated."""
    answer = _debug(sfn, state, {"Values": [1, 2]}, mock={"result": json.dumps([1, 1])})
    assert (answer["status"], set(answer["inspectionData"])) == ("SUCCEEDED", fields)
    if state["Type"] == "Map":
        assert answer["inspectionData"]["maxConcurrency"] == 1


def test_failures_without_a_threshold_do_not_fail_the_map(sfn: Any) -> None:
    """``test_map_state_failure_count[...-BASE_MAP_STATE]``: no ToleratedFailure*: SUCCEEDED with 2."""
    state = {"Type": "Map", "QueryLanguage": "JSONata", "Items": "{% $states.input.Values %}",
             "ItemProcessor": {**BRANCHES[0],
                               "ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}},
             "End": True}  # fmt: skip
    answer = _debug(sfn, state, {"Values": [1, 2, 3]}, stateConfiguration={"mapIterationFailureCount": 2},
                    mock={"result": json.dumps([0, 0, 1])})  # fmt: skip
    assert (answer["status"], json.loads(answer["output"])) == ("SUCCEEDED", [0, 0, 1])


def test_an_api_gateway_tasks_arguments_are_all_kept(sfn: Any) -> None:
    """``test_localstack_blogpost_scenario`` ("Ask for Approval"): every field of the API Gateway
    integration is passed on (developer guide "Create API Gateway REST APIs with Step Functions")."""
    arguments = {"Method": "POST", "ApiEndpoint": "example.execute-api.us-east-1.amazonaws.com",
                 "Path": "/approval", "RequestBody": {"cost": 10}, "AuthType": "NO_AUTH"}  # fmt: skip
    state = {"Type": "Task", "QueryLanguage": "JSONata", "Resource": "arn:aws:states:::apigateway:invoke",
             "Arguments": arguments, "End": True}  # fmt: skip
    answer = _debug(sfn, state, {"cost": 10}, mock={"result": '{"approval": true }'})
    assert _inspected(answer)["afterArguments"] == arguments


def test_what_aws_refuses_of_a_mocked_map_or_parallel(sfn: Any) -> None:
    """As recorded on AWS in LocalStack's AWS-validated snapshot test_state/test_state_mock_validation (read
    2026-12-04): an empty Parallel is a schema error at ``/States/StateName/Branches``; a failure count
    without a mock, or above the Map's iterations, is refused in AWS's words."""
    empty = {"Type": "Parallel", "Branches": [], "End": True}
    with pytest.raises(sfn.exceptions.InvalidDefinition) as refused:
        sfn.test_state(definition=json.dumps(empty), mock={"result": "[]"})
    assert refused.value.response["Error"]["Message"] == (
        "Invalid State Machine Definition: 'SCHEMA_VALIDATION_FAILED: Value cannot be empty at "
        "/States/StateName/Branches'"
    )
    given = {
        "definition": json.dumps(JSONATA_MAP),
        "roleArn": ROLE,
        "input": json.dumps({"Values": [1, 1, 1]}),
    }
    with pytest.raises(sfn.exceptions.ValidationException, match=r"^.*TestState does not support "
                       r"MapIterationFailureCount when a mock is not specified\.$"):  # fmt: skip
        sfn.test_state(**given, stateConfiguration={"mapIterationFailureCount": 0})
    with pytest.raises(sfn.exceptions.ValidationException, match="must be less than or equal to the number"):
        sfn.test_state(**given, stateConfiguration={"mapIterationFailureCount": 4},
                       mock={"result": json.dumps([1, 1, 1])})  # fmt: skip


def test_a_state_inside_a_map_is_tested_by_its_name_and_schema_errors_keep_their_path(sfn: Any) -> None:
    """As recorded on AWS in LocalStack's AWS-validated snapshot test_state/test_test_state_machine_scenarios
    (read 2026-12-04): ``stateName`` finds a state of a Map's ItemProcessor (``HandleItem``); a whole
    definition's schema error is reported at the state's own path."""
    machine = {"StartAt": "State0", "States": {"State0": {
        "Type": "Map", "ItemProcessor": {"StartAt": "HandleItem",
                                         "States": {"HandleItem": {"Type": "Pass", "End": True}}},
        "End": True}}}  # fmt: skip
    answer = sfn.test_state(definition=json.dumps(machine), stateName="HandleItem", input='{"Value": 1}')
    assert (answer["status"], json.loads(answer["output"])) == ("SUCCEEDED", {"Value": 1})
    broken = {
        "StartAt": "A",
        "States": {"A": {"Type": "Pass", "Next": "B"}, "B": {"Type": "Nope", "End": True}},
    }
    with pytest.raises(sfn.exceptions.InvalidDefinition) as refused:
        sfn.test_state(definition=json.dumps(broken), stateName="B", input="{}")
    assert refused.value.response["Error"]["Message"].endswith(
        "[Task, Wait, Pass, Succeed, Fail, Choice, Parallel, Map] at /States/B/Type'"
    )
