"""Service integrations and runtime failures on the local cloud as AWS answers them.

Sources (looked up 2026-12-04): developer guide "Start workflow executions from a task state"
(``states:startExecution`` with ``StateMachineArn`` and ``Input``), "AWS SDK integrations" (PascalCase
parameters and results; errors ``<Service>.<Code>Exception`` named as the SDK client, e.g.
``S3.NoSuchBucketException``, ``Sfn.InvalidTokenException``), "Transforming data with JSONata" (an unusable
JSONata value is ``States.QueryEvaluationError``)."""

from __future__ import annotations

import json
import re
import time
import uuid
from typing import Any

import pytest

from tests.integration.conftest import aws_cli, run_to_end

pytestmark = pytest.mark.integration

ROLE = "arn:aws:iam::123456789012:role/local"
CHILD = {"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}}


def _run(aws: Any, state: dict[str, Any], payload: Any = None, language: str = "JSONPath") -> dict[str, Any]:
    machine = {"QueryLanguage": language, "StartAt": "T", "States": {"T": {**state, "End": True}}}
    return run_to_end(aws, machine, payload)[0]


@pytest.fixture(scope="module")
def child(aws: Any) -> str:
    arn: str = aws("stepfunctions").create_state_machine(
        name=f"child-{uuid.uuid4().hex[:8]}", definition=json.dumps(CHILD), roleArn=ROLE
    )["stateMachineArn"]
    return arn


@pytest.mark.parametrize("resource", ["arn:aws:states:::states:startExecution",
                                      "arn:aws:states:::aws-sdk:sfn:startExecution"])  # fmt: skip
def test_a_task_starts_another_state_machine(aws: Any, child: str, resource: str) -> None:
    done = _run(aws, {"Type": "Task", "Resource": resource,
                      "Parameters": {"StateMachineArn": child, "Input": "{\"a\": 1}"}})  # fmt: skip
    assert done["status"] == "SUCCEEDED", done.get("cause")
    output = json.loads(done["output"])
    assert output["ExecutionArn"].startswith(child.replace(":stateMachine:", ":execution:"))
    assert isinstance(output["StartDate"], str)
    started = aws("stepfunctions").describe_execution(executionArn=output["ExecutionArn"])
    assert json.loads(started["input"]) == {"a": 1}


def test_s3_get_object_returns_its_body(aws: Any) -> None:
    """AWS's members, as recorded on AWS (LocalStack's AWS-validated snapshot services/
    test_aws_sdk_task_service ``test_s3_get_object``, read 2026-12-04): AcceptRanges, ContentLength,
    ContentType, ETag, LastModified, Metadata, ServerSideEncryption, Body; no checksum."""
    bucket = f"integ-{uuid.uuid4().hex[:8]}"
    aws("s3").create_bucket(Bucket=bucket)
    aws("s3").put_object(Bucket=bucket, Key="note.txt", Body=b"hello")
    done = _run(aws, {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:s3:getObject",
                      "Parameters": {"Bucket": bucket, "Key": "note.txt"}})  # fmt: skip
    assert done["status"] == "SUCCEEDED", done.get("cause")
    output = json.loads(done["output"])
    assert (output["Body"], output["ContentLength"]) == ("hello", 5)
    expected = {"AcceptRanges", "Body", "ContentLength", "ContentType", "ETag", "LastModified", "Metadata",
                "ServerSideEncryption"}  # fmt: skip
    assert set(output) == expected, output


@pytest.mark.parametrize(
    ("resource", "parameters", "error", "service"),
    [
        (
            "aws-sdk:s3:getObject",
            {"Bucket": "integ-no-such-bucket", "Key": "k"},
            "S3.NoSuchBucketException",
            "S3",
        ),
        (
            "aws-sdk:sfn:sendTaskSuccess",
            {"TaskToken": "nope", "Output": "{}"},
            "Sfn.InvalidTokenException",
            "Sfn",
        ),
    ],
)
def test_a_service_error_keeps_the_services_casing(
    aws: Any, resource: str, parameters: dict[str, Any], error: str, service: str
) -> None:
    done = _run(aws, {"Type": "Task", "Resource": f"arn:aws:states:::{resource}", "Parameters": parameters})
    assert (done["status"], done["error"]) == ("FAILED", error)
    assert f"(Service: {service}, Status Code: " in done["cause"]


def test_s3_put_object_answers_as_aws_does(aws: Any) -> None:
    """As recorded on AWS (LocalStack's AWS-validated snapshot services/test_aws_sdk_task_service
    ``test_s3_put_object``, read 2026-12-04): the result's members keep the model's spelling
    (``ChecksumCRC32``) and the object is SSE-S3 encrypted by default (S3 User Guide "Using server-side
    encryption with Amazon S3 managed keys (SSE-S3)": every new upload since 2023-01-05)."""
    bucket = f"integ-{uuid.uuid4().hex[:8]}"
    aws("s3").create_bucket(Bucket=bucket)
    done = _run(aws, {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:s3:putObject",
                      "Parameters": {"Bucket": bucket, "Key": "file-key", "Body.$": "$.Body"}},
                {"Body": {"Dict": "Value"}})  # fmt: skip
    assert done["status"] == "SUCCEEDED", done.get("cause")
    output = json.loads(done["output"])
    assert (output["ETag"], output["ServerSideEncryption"]) == (
        '"49e31cee5aec8faf3345893addb14346"',
        "AES256",
    )
    # The recorded members: the checksum, its type ("For PutObject uploads, the checksum type is always
    # FULL_OBJECT", botocore's S3 model, PutObjectOutput ChecksumType), the ETag and the encryption.
    assert set(output) == {"ChecksumCRC32", "ChecksumType", "ETag", "ServerSideEncryption"}, output
    assert output["ChecksumType"] == "FULL_OBJECT"
    assert aws("s3").head_object(Bucket=bucket, Key="file-key")["ServerSideEncryption"] == "AES256"


def test_an_s3_errors_cause_names_both_request_ids(aws: Any) -> None:
    """As recorded on AWS (LocalStack's AWS-validated snapshot error_handling/test_aws_sdk
    ``test_s3_no_such_key``, read 2026-12-04): "The specified key does not exist. (Service: S3, Status Code:
    404, Request ID: ..., Extended Request ID: ...)"."""
    bucket = f"integ-{uuid.uuid4().hex[:8]}"
    aws("s3").create_bucket(Bucket=bucket)
    done = _run(aws, {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:s3:getObject",
                      "Parameters": {"Bucket": bucket, "Key": "no_such_key.json"}})  # fmt: skip
    assert (done["status"], done["error"]) == ("FAILED", "S3.NoSuchKeyException")
    pattern = (
        r"The specified key does not exist\. "
        r"\(Service: S3, Status Code: 404, Request ID: \S+, Extended Request ID: \S+\)"
    )
    assert re.fullmatch(pattern, done["cause"]), done["cause"]


def test_an_invalid_secret_name_is_the_clients_base_exception(aws: Any) -> None:
    """As recorded on AWS (LocalStack's AWS-validated snapshot error_handling/test_aws_sdk
    ``test_invalid_secret_name``, read 2026-12-04): a ValidationException, which the service's model does not
    declare, is the SDK client's base exception; the name rule is API reference "CreateSecret"'s."""
    catch = [{"ErrorEquals": ["States.TaskFailed"], "ResultPath": "$.TaskFailedError", "Next": "Handler"}]
    machine = {"StartAt": "CreateSecret", "States": {
        "CreateSecret": {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:secretsmanager:createSecret",
                         "Parameters": {"Name.$": "$.Name", "SecretString.$": "$.SecretString"},
                         "Catch": catch, "End": True},
        "Handler": {"Type": "Pass", "End": True}}}  # fmt: skip
    done, _ = run_to_end(aws, machine, {"Name": "Invalid Name", "SecretString": "HelloWorld"})
    failed = json.loads(done["output"])["TaskFailedError"]
    assert failed["Error"] == "SecretsManager.SecretsManagerException"
    assert failed["Cause"].startswith(
        "Invalid name. Must be a valid name containing alphanumeric characters, or any of the following: "
        "-/_+=.@! (Service: SecretsManager, Status Code: 400, Request ID: "
    )


def test_a_request_without_a_required_member(aws: Any) -> None:
    """As recorded on AWS (the same snapshot, ``test_dynamodb_invalid_param``): putItem without an Item."""
    done = _run(aws, {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:dynamodb:putItem",
                      "Parameters": {"TableName": "integ-no-table"}})  # fmt: skip
    assert (done["status"], done["error"]) == ("FAILED", "DynamoDb.DynamoDbException")
    assert done["cause"].startswith(
        "1 validation error detected: Value null at 'item' failed to satisfy constraint: Member must not be "
        "null (Service: DynamoDb, Status Code: 400, Request ID: "
    )


def test_a_map_over_a_value_that_is_not_an_array_prints_it(aws: Any) -> None:
    processor = {"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}}
    done = _run(aws, {"Type": "Map", "ItemsPath": "$.items", "ItemProcessor": processor}, {"items": {"a": 1}})
    assert done["status"] == "FAILED"
    assert done["cause"].endswith('Map state input must be an array but was: {"a":1}')


def test_a_jsonata_wait_timestamp_that_is_not_one_is_a_query_evaluation_error(aws: Any) -> None:
    """AWS's words as recorded on AWS (LocalStack's AWS-validated snapshot scenarios/test_base_scenarios
    ``test_wait_timestamp_jsonata``, read 2026-12-04)."""
    done = _run(aws, {"Type": "Wait", "Timestamp": "{% $states.input.when %}"}, {"when": "soon"}, "JSONata")
    assert (done["status"], done["error"]) == ("FAILED", "States.QueryEvaluationError")
    assert done["cause"] == (
        "An error occurred while executing the state 'T' (entered at the event id #2). The Timestamp field "
        "cannot be parsed as an ISO-8601 extended offset date-time format string: soon"
    )


def test_list_executions_redrive_filter_through_the_cli(aws: Any, cloud: Any) -> None:
    """API reference "ListExecutions": redriveFilter lists a state machine's executions by whether they have
    been redriven; the AWS CLI sends it as --redrive-filter."""
    sfn = aws("stepfunctions")
    failing = {"StartAt": "Stop", "States": {"Stop": {"Type": "Fail", "Error": "E", "Cause": "c"}}}
    arn = sfn.create_state_machine(
        name=f"redrive-{uuid.uuid4().hex[:8]}", definition=json.dumps(failing), roleArn=ROLE
    )["stateMachineArn"]
    first, second = (sfn.start_execution(stateMachineArn=arn)["executionArn"] for _ in range(2))
    for execution in (first, second):
        while sfn.describe_execution(executionArn=execution)["status"] == "RUNNING":
            time.sleep(0.05)
    sfn.redrive_execution(executionArn=first)

    def listed(choice: str) -> set[str]:
        answer = aws_cli(cloud, "stepfunctions", "list-executions", "--state-machine-arn", arn,
                         "--redrive-filter", choice)  # fmt: skip
        return {item["executionArn"] for item in answer["executions"]}

    assert listed("REDRIVEN") == {first}
    assert listed("NOT_REDRIVEN") == {second}


DISTRIBUTED = {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}
PASS_THROUGH = {"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}}


def test_a_distributed_map_with_the_legacy_iterator_and_parameters(aws: Any) -> None:
    """Developer guide "Map state": ItemProcessor replaces Iterator and ItemSelector replaces Parameters;
    the legacy fields still work, also in DISTRIBUTED mode."""
    iterator = {**PASS_THROUGH, "ProcessorConfig": DISTRIBUTED}
    plain = _run(aws, {"Type": "Map", "ItemsPath": "$.items", "Iterator": iterator}, {"items": [1, 2]})
    assert json.loads(plain["output"]) == [1, 2]
    selected = _run(aws, {"Type": "Map", "ItemsPath": "$.items", "Iterator": iterator,
                          "Parameters": {"v.$": "$$.Map.Item.Value"}}, {"items": [1, 2]})  # fmt: skip
    assert json.loads(selected["output"]) == [{"v": 1}, {"v": 2}]


def test_max_items_per_batch_from_jsonata_and_from_a_variable(aws: Any) -> None:
    """Developer guide "ItemBatcher": MaxItemsPerBatch may be a JSONata expression; MaxItemsPerBatchPath
    a reference path (here a variable)."""
    processor = {**PASS_THROUGH, "ProcessorConfig": DISTRIBUTED}
    jsonata_map = {"Type": "Map", "Items": "{% $states.input.items %}", "ItemProcessor": processor,
                   "ItemBatcher": {"MaxItemsPerBatch": "{% 1 + 1 %}"}}  # fmt: skip
    done = _run(aws, jsonata_map, {"items": [1, 2, 3]}, "JSONata")
    assert json.loads(done["output"]) == [{"Items": [1, 2]}, {"Items": [3]}]
    sfn = aws("stepfunctions")
    machine = {
        "StartAt": "Set",
        "States": {
            "Set": {"Type": "Pass", "Assign": {"size": 3}, "Next": "M"},
            "M": {"Type": "Map", "ItemsPath": "$.items", "ItemProcessor": processor,
                  "ItemBatcher": {"MaxItemsPerBatchPath": "$size"}, "End": True},
        },
    }  # fmt: skip
    arn = sfn.create_state_machine(
        name=f"batch-{uuid.uuid4().hex[:8]}", definition=json.dumps(machine), roleArn=ROLE
    )["stateMachineArn"]
    execution = sfn.start_execution(stateMachineArn=arn, input=json.dumps({"items": [1, 2, 3, 4]}))
    while (described := sfn.describe_execution(executionArn=execution["executionArn"]))[
        "status"
    ] == "RUNNING":
        time.sleep(0.05)
    assert json.loads(described["output"]) == [{"Items": [1, 2, 3]}, {"Items": [4]}]


def test_an_item_batcher_from_jsonata_over_an_item_reader(aws: Any) -> None:
    """AWS's run as recorded on AWS (LocalStack's AWS-validated snapshot scenarios/test_base_scenarios
    ``test_map_item_batching_base_json_max_per_batch_jsonata``, read 2026-12-04): MaxItemsPerBatch and
    MaxInputBytesPerBatch from the input, the reader's MaxItems, a BatchInput template; each batch is
    ``{"BatchInput": ..., "Items": [...]}`` in that order."""
    bucket = f"integ-{uuid.uuid4().hex[:8]}"
    aws("s3").create_bucket(Bucket=bucket)
    items = [{"verdict": verdict} for verdict in ("true", "false", "mostly-true")]
    aws("s3").put_object(Bucket=bucket, Key="file.json", Body=json.dumps(items).encode())
    reader = {
        "ReaderConfig": {"InputType": "JSON", "MaxItems": 2},
        "Resource": "arn:aws:states:::s3:getObject",
        "Arguments": {"Bucket": "{% $states.input.Bucket %}", "Key": "{% $states.input.Key %}"},
    }
    batcher = {"MaxItemsPerBatch": "{% $states.input.MaxItemsPerBatch %}",
               "MaxInputBytesPerBatch": "{% $states.input.MaxInputBytesPerBatch %}",
               "BatchInput": {"Source": "{% $states.input.Key %}"}}  # fmt: skip
    state = {"Type": "Map", "ItemReader": reader, "ItemBatcher": batcher,
             "ItemProcessor": {**PASS_THROUGH, "ProcessorConfig": DISTRIBUTED}}  # fmt: skip
    given = {"Bucket": bucket, "Key": "file.json", "MaxItemsPerBatch": 2, "MaxInputBytesPerBatch": 150_000}
    done = _run(aws, state, given, "JSONata")
    assert done["status"] == "SUCCEEDED", done.get("cause")
    batches = json.loads(done["output"])
    assert batches == [{"BatchInput": {"Source": "file.json"}, "Items": items[:2]}]
    assert list(batches[0]) == ["BatchInput", "Items"]


def test_the_context_objects_times_are_in_milliseconds_with_z(aws: Any) -> None:
    """Developer guide "Accessing execution data from the Context object": "EnteredTime":
    "2019-03-26T20:14:13.192Z" (as StartTime)."""
    done = _run(aws, {"Type": "Pass", "Parameters": {"entered.$": "$$.State.EnteredTime",
                                                     "started.$": "$$.Execution.StartTime"}})  # fmt: skip
    times = json.loads(done["output"])
    pattern = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$"
    assert all(re.match(pattern, value) for value in times.values()), times


def test_start_execution_of_a_missing_state_machine(aws: Any) -> None:
    """As recorded on AWS (LocalStack's AWS-validated snapshot error_handling/test_task_service_sfn
    ``test_start_execution_no_such_arn``, read 2026-12-04): the optimized integration names the error
    ``StepFunctions.StateMachineDoesNotExistException``, its cause the Java SDK's form."""
    missing = "arn:aws:states:us-east-1:123456789012:stateMachine:no-such-machine"
    done = _run(aws, {"Type": "Task", "Resource": "arn:aws:states:::states:startExecution",
                      "Parameters": {"StateMachineArn": missing, "Name": "TestStartTarget"}})  # fmt: skip
    assert (done["status"], done["error"]) == ("FAILED", "StepFunctions.StateMachineDoesNotExistException")
    pattern = (
        rf"State Machine Does Not Exist: '{re.escape(missing)}' \(Service: AWSStepFunctions; "
        r"Status Code: 400; Error Code: StateMachineDoesNotExist; Request ID: \S+; Proxy: null\)"
    )
    assert re.fullmatch(pattern, done["cause"]), done["cause"]


def test_a_fail_states_error_and_cause_from_intrinsic_functions(aws: Any) -> None:
    """Developer guide "Fail workflow state": ErrorPath and CausePath may be "a reference path or an
    intrinsic function"; as recorded on AWS in LocalStack's AWS-validated snapshot base/test_base
    ``test_state_fail_intrinsic`` (read 2026-12-04)."""
    cause = "States.Format('This is a custom error message for {}, caused by {}.', $.Error, $.Cause)"
    fail = {"Type": "Fail", "ErrorPath": "States.Format('{}', $.Error)", "CausePath": cause}
    machine = {"StartAt": "FailState", "States": {"FailState": fail}}
    done, _ = run_to_end(aws, machine, {"Error": "error string", "Cause": "cause string"})
    assert (done["status"], done["error"], done["cause"]) == (
        "FAILED",
        "error string",
        "This is a custom error message for error string, caused by cause string.",
    )


@pytest.mark.parametrize(
    ("resource", "parameters", "error", "cause"),
    [
        ("dynamodb:putItem", {"TableName": "integ-no-table"}, "DynamoDB.AmazonDynamoDBException",
         r"1 validation error detected: Value null at 'item' failed to satisfy constraint: Member must not "
         r"be null \(Service: AmazonDynamoDBv2; Status Code: 400; Error Code: ValidationException; Request "
         r"ID: \S+; Proxy: null\)"),
        ("dynamodb:putItem", {"TableName": "integ-no-table", "Item": {"id": {"S": "1"}}},
         "DynamoDB.ResourceNotFoundException",
         r"Requested resource not found \(Service: AmazonDynamoDBv2; Status Code: 400; Error Code: "
         r"ResourceNotFoundException; Request ID: \S+; Proxy: null\)"),
        ("sqs:sendMessage", {"QueueUrl": "QUEUE", "MessageBody": ""}, "SQS.AmazonSQSException",
         r"The request must contain the parameter MessageBody\. \(Service: AmazonSQS; Status Code: 400; "
         r"Error Code: MissingParameter; Request ID: \S+; Proxy: null\)"),
    ],
)  # fmt: skip
def test_an_optimized_integrations_error_as_the_java_sdk_names_it(
    aws: Any, resource: str, parameters: dict[str, Any], error: str, cause: str
) -> None:
    """As recorded on AWS in LocalStack's AWS-validated snapshots error_handling/test_task_service_dynamodb
    (``test_invalid_param``, ``test_put_item_no_such_table``) and test_task_service_sqs
    (``test_send_message_empty_body``), read 2026-12-04."""
    if parameters.get("QueueUrl") == "QUEUE":
        parameters = {
            **parameters,
            "QueueUrl": aws("sqs").create_queue(QueueName="integ-empty-body")["QueueUrl"],
        }
    done = _run(aws, {"Type": "Task", "Resource": f"arn:aws:states:::{resource}", "Parameters": parameters})
    assert (done["status"], done["error"]) == ("FAILED", error)
    assert re.fullmatch(cause, done["cause"]), done["cause"]
