"""TestState's checks of a mock (AWS API reference "MockInput" and "TestState", looked up 2026-12-04):
fieldValidationMode STRICT (required fields present, present fields of the right type), PRESENT (present
fields only), NONE; the mocked result checked against the service's output shape in botocore's model; the
states that refuse or need a mock. Messages as AWS answers them (LocalStack's recorded TestState
snapshots)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from moto.stepfunctions.parser.api import InvalidDefinition

from docagent.localcloud.stepfunctions.executions import AwsError
from docagent.localcloud.stepfunctions.resources import sfn_cased
from docagent.localcloud.stepfunctions.teststate_mock import check, output_shape

TASK = "arn:aws:states:::"


def _task(resource: str) -> dict[str, Any]:
    return {"Type": "Task", "Resource": resource, "End": True}


def _mock(result: Any, mode: str | None = None) -> dict[str, Any]:
    mock: dict[str, Any] = {"result": json.dumps(result)}
    if mode:
        mock["fieldValidationMode"] = mode
    return mock


def _refusal(state: dict[str, Any], mock: dict[str, Any] | None, reveal: bool = False) -> str:
    with pytest.raises(AwsError) as raised:
        check(state, mock, reveal)
    assert raised.value.error_type == "ValidationException"
    return str(raised.value.message)


# Every service integration the local cloud runs (moto's StateTaskServiceFactory), with a result its
# output shape accepts, one that misses a required field (STRICT refuses, PRESENT accepts) and one with a
# field of the wrong type (both refuse).
CASES = [
    (
        "sqs:sendMessage",
        {"MessageId": "m", "MD5OfMessageBody": "x"},
        {},
        {"MessageId": 3},
        "MessageId",
        "a string",
    ),
    ("sns:publish", {"MessageId": "m"}, {}, {"MessageId": True}, "MessageId", "a string"),
    ("dynamodb:putItem", {}, {}, {"Attributes": []}, "Attributes", "an object"),
    ("events:putEvents", {"FailedEntryCount": 0, "Entries": []}, {}, {"Entries": {}}, "Entries", "an array"),
    (
        "states:startExecution",
        {"ExecutionArn": "a", "StartDate": "2026-12-04T00:00:00Z"},
        {"ExecutionArn": "a"},
        {"ExecutionArn": 1, "StartDate": "d"},
        "ExecutionArn",
        "a string",
    ),
    (
        "aws-sdk:s3:getObject",
        {"Body": "text", "ContentLength": 4},
        {},
        {"ContentLength": "4"},
        "ContentLength",
        "a number",
    ),
    (
        "aws-sdk:sfn:startExecution",
        {"ExecutionArn": "a", "StartDate": "d"},
        {"StartDate": "d"},
        {"ExecutionArn": "a", "StartDate": 5},
        "StartDate",
        "a string",
    ),
    ("glue:startJobRun", {"JobRunId": "j"}, {}, {"JobRunId": 1}, "JobRunId", "a string"),
    (
        "batch:submitJob",
        {"JobArn": "a", "JobName": "n", "JobId": "i"},
        {"JobArn": "a"},
        {"JobName": [], "JobId": "i"},
        "JobName",
        "a string",
    ),
    ("ecs:runTask", {"Tasks": []}, {}, {"Tasks": "none"}, "Tasks", "an array"),
]


@pytest.mark.parametrize(("resource", "good", "missing", "wrong", "field", "expected"), CASES)
def test_each_integration_is_checked_against_its_output_shape(  # noqa: PLR0917
    resource: str,
    good: dict[str, Any],
    missing: dict[str, Any],
    wrong: dict[str, Any],
    field: str,
    expected: str,
) -> None:
    state = _task(TASK + resource)
    for mode in (None, "STRICT", "PRESENT", "NONE"):
        assert check(state, _mock(good, mode), False) == good
    assert _refusal(state, _mock(wrong, "PRESENT")) == (
        f"Mock result schema validation error: Field '{field}' must be {expected}"
    )
    assert check(state, _mock(wrong, "NONE"), False) == wrong
    assert check(state, _mock(missing, "PRESENT"), False) == missing
    shape = output_shape(TASK + resource)
    assert shape is not None
    if shape.required_members:
        assert _refusal(state, _mock(missing)).startswith(
            "Mock result schema validation error: Required field '"
        )


def test_strict_names_the_missing_required_field() -> None:
    state = _task(TASK + "states:startExecution")
    assert _refusal(state, _mock({"ExecutionArn": "a"}, "STRICT")) == (
        "Mock result schema validation error: Required field 'StartDate' is missing"
    )


def test_an_enum_and_a_numeric_minimum_are_checked() -> None:
    state = _task(TASK + "aws-sdk:s3:getObject")
    assert _refusal(state, _mock({"StorageClass": "COLD"})) == (
        "Mock result schema validation error: Field 'StorageClass' is not an expected value"
    )
    assert check(state, _mock({"StorageClass": "STANDARD"}), False) == {"StorageClass": "STANDARD"}


def test_lambda_payload_is_any_json_and_unknown_fields_are_accepted() -> None:
    state = _task(TASK + "lambda:invoke")
    result = {"StatusCode": 200, "Payload": {"total": 42}, "SomethingNew": 1}
    assert check(state, _mock(result), False) == result
    assert _refusal(state, _mock({"StatusCode": "200"})) == (
        "Mock result schema validation error: Field 'StatusCode' must be a number"
    )


def test_a_sync_task_is_checked_against_the_describe_call() -> None:
    state = _task(TASK + "states:startExecution.sync:2")
    assert "Required field 'ExecutionArn'" in _refusal(state, _mock({}))
    shape = output_shape(TASK + "ecs:runTask.sync")
    assert shape is not None and shape.name == "DescribeTasksResponse"


def test_member_names_as_step_functions_spells_them_or_as_the_service_does() -> None:
    """A result's member is the model's name with a capital first letter (AWS records ``MD5OfMessageBody``
    for sqs:sendMessage and ``ChecksumCRC32`` for s3:putObject: LocalStack's AWS-validated snapshots,
    read 2026-12-04)."""
    names = [
        sfn_cased(name) for name in ("ETag", "Body", "MD5OfMessageBody", "ChecksumCRC32", "executionArn")
    ]
    assert names == ["ETag", "Body", "MD5OfMessageBody", "ChecksumCRC32", "ExecutionArn"]
    state = _task(TASK + "sqs:sendMessage")
    refused = _refusal(state, _mock({"MD5OfMessageBody": 5}))
    assert refused == "Mock result schema validation error: Field 'MD5OfMessageBody' must be a string"


@pytest.mark.parametrize("kind", ["Pass", "Succeed", "Fail", "Choice", "Wait"])
def test_states_that_refuse_a_mock(kind: str) -> None:
    assert (
        _refusal({"Type": kind}, _mock({}))
        == f"State type '{kind}' is not supported when a mock is specified"
    )
    assert check({"Type": kind}, None, False) is None


@pytest.mark.parametrize("kind", ["Map", "Parallel"])
def test_map_and_parallel_need_a_mock(kind: str) -> None:
    with pytest.raises(InvalidDefinition) as raised:
        check({"Type": kind}, None, False)
    assert "TestState API does not support Map or Parallel states" in str(raised.value)


def test_a_map_mock_is_an_array_or_with_a_result_writer_an_object() -> None:
    assert _refusal({"Type": "Map"}, _mock({"a": 1})) == "Mocked result must be an array."
    assert check({"Type": "Map"}, _mock([1, 2]), False) == [1, 2]
    assert _refusal({"Type": "Map", "ResultWriter": {}}, _mock([1])) == "Mocked result must be a JSON object."


def test_mock_request_refusals() -> None:
    state = _task(TASK + "lambda:invoke")
    both = {"result": "{}", "errorOutput": {"error": "E"}}
    assert (
        _refusal(state, both)
        == "A test mock should have only one of the following fields: [result, errorOutput]."
    )
    assert _refusal(state, {"result": "{nope"}) == "Mocked result must be valid JSON"
    assert (
        _refusal(state, _mock({}), reveal=True)
        == "TestState does not support RevealSecrets when a mock is specified."
    )
    assert check(state, {"errorOutput": {"error": "E"}}, False) is None


def test_a_parallel_mock_is_an_array_with_one_item_per_branch() -> None:
    """AWS's words as recorded in LocalStack's AWS-validated snapshot test_state/test_state_mock_validation
    (read 2026-12-04): ``test_mock_result_is_not_array_on_parallel_state`` and
    ``test_mock_result_array_size_mismatch_on_parallel_state``."""
    branch = {"StartAt": "B", "States": {"B": {"Type": "Pass", "End": True}}}
    state = {"Type": "Parallel", "Branches": [branch, branch], "End": True}
    assert _refusal(state, _mock({"mock": "x"})) == "Mocked result must be an array."
    assert _refusal(state, _mock([{"branch1": "result"}])) == (
        "Mocked result must contain the same number of items as number of Parallel branches."
    )
    assert check(state, _mock([1, 2]), False) == [1, 2]


@pytest.mark.parametrize(
    ("resource", "result", "mode", "message"),
    [
        ("states:startExecution", {"executionArn": "a", "startDate": "b"}, "STRICT",
         "Required field 'ExecutionArn' is missing"),
        ("aws-sdk:kms:encrypt", {"CiphertextBlob": 123}, "STRICT", "Field 'CiphertextBlob' must be a string"),
        ("aws-sdk:kms:encrypt", {"CiphertextBlob": ""}, "STRICT",
         "Field 'CiphertextBlob' is smaller than the minimum length"),
        ("aws-sdk:lambda:getFunction", {"Configuration": {"MemorySize": 127}}, "STRICT",
         "Field 'MemorySize' is less than the minimum value"),
        ("aws-sdk:lambda:getFunction", {"Configuration": {"MemorySize": 32769}}, "PRESENT",
         "Field 'MemorySize' exceeds the maximum value"),
    ],
)  # fmt: skip
def test_field_names_blobs_and_bounds_as_aws_words_them(
    resource: str, result: dict[str, Any], mode: str, message: str
) -> None:
    """As recorded on AWS in LocalStack's AWS-validated snapshots test_state/test_field_validation_mode and
    test_field_validation_mode_present (read 2026-12-04): a field is named as Step Functions spells it (the
    model's ``executionArn`` is an unknown field: STRICT misses ``ExecutionArn``, PRESENT accepts it); a
    blob is a string; a length or a number out of the model's bounds. The maximum is botocore's model's
    (32768 MB for a Lambda function today; the recording, 10241, predates the raise)."""
    state = _task(TASK + resource)
    assert _refusal(state, _mock(result, mode)) == f"Mock result schema validation error: {message}"
    if mode == "STRICT" and resource == "states:startExecution":
        assert check(state, _mock(result, "PRESENT"), False) == result
