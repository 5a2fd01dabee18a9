"""The optimized integrations' results carry the SDK's response metadata, as recorded on AWS.

Source: LocalStack's AWS-validated snapshots (real AWS answers) services/test_lambda_task_service,
test_sqs_task_service, test_sns_task_service, test_dynamodb_task_service, test_sfn_task_service and
test_events_task_service, read 2026-12-04: ``SdkHttpMetadata`` (``AllHttpHeaders``: each header with a list
of values; ``HttpHeaders``: one value each, names sorted regardless of case; ``HttpStatusCode``) and
``SdkResponseMetadata`` (``RequestId``), each service with its own headers; events:putEvents and the
aws-sdk integrations have none. AWS does not document these members."""

from __future__ import annotations

import email.utils
import json
import uuid
import zlib
from typing import Any

import pytest

from tests.integration.conftest import run_to_end

pytestmark = pytest.mark.integration

ROLE = "arn:aws:iam::123456789012:role/local"
CHILD = {"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}}
ECHO = "def handler(event, context):\n    return event\n"


def _result(aws: Any, resource: str, parameters: dict[str, Any]) -> dict[str, Any]:
    machine = {"StartAt": "T", "States": {"T": {"Type": "Task", "Resource": resource,
                                                "Parameters": parameters, "End": True}}}  # fmt: skip
    done, _ = run_to_end(aws, machine)
    assert done["status"] == "SUCCEEDED", done.get("cause")
    output: dict[str, Any] = json.loads(done["output"])
    return output


def _check_metadata(output: dict[str, Any], headers: list[str], content_type: str) -> dict[str, str]:
    metadata = output["SdkHttpMetadata"]
    assert list(metadata) == ["AllHttpHeaders", "HttpHeaders", "HttpStatusCode"]
    assert metadata["HttpStatusCode"] == 200
    assert list(metadata["AllHttpHeaders"]) == headers
    single = metadata["HttpHeaders"]
    assert list(single) == sorted(headers, key=str.lower)
    assert metadata["AllHttpHeaders"] == {name: [value] for name, value in single.items()}
    request_id = output["SdkResponseMetadata"]["RequestId"]
    assert request_id and single["x-amzn-RequestId"] == request_id
    assert single["Content-Type"] == content_type
    assert int(single["Content-Length"]) > 0
    assert email.utils.parsedate_to_datetime(single["Date"]).tzinfo is not None
    return dict(single)


def test_sqs_send_message(aws: Any) -> None:
    url = aws("sqs").create_queue(QueueName=f"meta-{uuid.uuid4().hex[:8]}")["QueueUrl"]
    output = _result(aws, "arn:aws:states:::sqs:sendMessage", {"QueueUrl": url, "MessageBody": "hi"})
    assert {"MD5OfMessageBody", "MessageId"} <= set(output)
    headers = _check_metadata(output, ["x-amzn-RequestId", "connection", "Content-Length", "Date",
                                       "Content-Type"], "application/x-amz-json-1.0")  # fmt: skip
    assert headers["connection"] == "keep-alive"


def test_sns_publish(aws: Any) -> None:
    topic = aws("sns").create_topic(Name=f"meta-{uuid.uuid4().hex[:8]}")["TopicArn"]
    output = _result(aws, "arn:aws:states:::sns:publish", {"TopicArn": topic, "Message": "hi"})
    assert "MessageId" in output
    _check_metadata(output, ["x-amzn-RequestId", "connection", "Content-Length", "Date", "Content-Type"],
                    "text/xml")  # fmt: skip


def test_dynamodb_put_item(aws: Any) -> None:
    table = f"meta-{uuid.uuid4().hex[:8]}"
    aws("dynamodb").create_table(
        TableName=table,
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    item = {"id": {"S": "a"}}
    output = _result(aws, "arn:aws:states:::dynamodb:putItem", {"TableName": table, "Item": item})
    assert set(output) == {"SdkHttpMetadata", "SdkResponseMetadata"}  # putItem answers {} (as recorded)
    names = [
        "Server",
        "Connection",
        "x-amzn-RequestId",
        "x-amz-crc32",
        "Content-Length",
        "Date",
        "Content-Type",
    ]
    headers = _check_metadata(output, names, "application/x-amz-json-1.0")
    assert headers["Server"] == "Server"
    assert headers["x-amz-crc32"] == str(zlib.crc32(b"{}"))  # the CRC32 of putItem's body, {}


def test_states_start_execution(aws: Any) -> None:
    child = aws("stepfunctions").create_state_machine(
        name=f"meta-{uuid.uuid4().hex[:8]}", definition=json.dumps(CHILD), roleArn=ROLE
    )["stateMachineArn"]
    output = _result(aws, "arn:aws:states:::states:startExecution", {"StateMachineArn": child})
    assert {"ExecutionArn", "StartDate"} <= set(output)
    _check_metadata(output, ["x-amzn-RequestId", "connection", "Content-Length", "Date", "Content-Type"],
                    "application/x-amz-json-1.0")  # fmt: skip


def test_lambda_invoke(aws: Any, make_function: Any) -> None:
    name = make_function(ECHO)
    output = _result(aws, "arn:aws:states:::lambda:invoke", {"FunctionName": name, "Payload": {"a": 1}})
    assert (output["Payload"], output["StatusCode"], output["ExecutedVersion"]) == ({"a": 1}, 200, "$LATEST")
    headers = _check_metadata(output, ["X-Amz-Executed-Version", "x-amzn-Remapped-Content-Length",
                                       "Connection", "x-amzn-RequestId", "Content-Length", "Date",
                                       "X-Amzn-Trace-Id", "Content-Type"], "application/json")  # fmt: skip
    assert headers["X-Amz-Executed-Version"] == "$LATEST"
    assert headers["X-Amzn-Trace-Id"].startswith("root=1-")


def test_events_and_aws_sdk_results_have_none(aws: Any) -> None:
    events = _result(aws, "arn:aws:states:::events:putEvents",
                     {"Entries": [{"Source": "s", "DetailType": "d", "Detail": "{}"}]})  # fmt: skip
    assert "SdkHttpMetadata" not in events and events["FailedEntryCount"] == 0
    url = aws("sqs").create_queue(QueueName=f"meta-{uuid.uuid4().hex[:8]}")["QueueUrl"]
    sdk = _result(aws, "arn:aws:states:::aws-sdk:sqs:sendMessage", {"QueueUrl": url, "MessageBody": "hi"})
    assert "SdkHttpMetadata" not in sdk and "SdkResponseMetadata" not in sdk


def test_ecs_run_task(aws: Any) -> None:
    ecs = aws("ecs")
    cluster = ecs.create_cluster(clusterName=f"meta-{uuid.uuid4().hex[:8]}")["cluster"]["clusterArn"]
    family = f"meta-{uuid.uuid4().hex[:8]}"
    ecs.register_task_definition(family=family, containerDefinitions=[{"name": "c", "image": "busybox",
                                                                        "memory": 128}])  # fmt: skip
    output = _result(aws, "arn:aws:states:::ecs:runTask", {"Cluster": cluster, "TaskDefinition": family,
                                                           "LaunchType": "FARGATE"})  # fmt: skip
    assert "Tasks" in output and "Failures" in output
    _check_metadata(output, ["x-amzn-RequestId", "Content-Length", "Date", "Content-Type"],
                    "application/x-amz-json-1.1")  # fmt: skip
