"""A service request refused as the service refuses it, and the optimized integrations' errors named as AWS
names them.

As recorded on AWS in LocalStack's AWS-validated snapshots (read 2026-12-04):
- error_handling/test_aws_sdk ``test_dynamodb_invalid_param`` and error_handling/test_task_service_dynamodb
  ``test_invalid_param``, ``test_put_item_invalid_table_name``: a missing required member and a member that
  does not match its pattern are a ValidationException "1 validation error detected: Value null at 'item'
  failed to satisfy constraint: Member must not be null" / "Value '/t' at 'tableName' failed to satisfy
  constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+" (the member named with a
  lower-case first letter; the task's client does not validate requests, and moto answered some with HTTP
  500);
- error_handling/test_task_service_dynamodb: the optimized DynamoDB integration names an error the
  operation declares ``DynamoDB.<Code>`` and any other ``DynamoDB.AmazonDynamoDBException`` (the Java SDK's
  base exception), its cause "<message> (Service: AmazonDynamoDBv2; Status Code: 400; Error Code: <Code>;
  Request ID: <id>; Proxy: null)";
- error_handling/test_task_service_sqs ``test_send_message_empty_body``: an empty MessageBody is
  ``SQS.AmazonSQSException`` "The request must contain the parameter MessageBody. (Service: AmazonSQS;
  Status Code: 400; Error Code: MissingParameter; Request ID: <id>; Proxy: null)"; an error SQS's model
  declares is ``SQS.<Shape>Exception``, as the Java SDK's class (moto named every one SdkClientException).
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from botocore.exceptions import ClientError
from botocore.model import OperationModel
from moto.stepfunctions.parser.api import HistoryEventType, TaskFailedEventDetails
from moto.stepfunctions.parser.asl.component.common.error_name.custom_error_name import CustomErrorName
from moto.stepfunctions.parser.asl.component.common.error_name.failure_event import FailureEvent
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_dynamodb import (  # noqa: E501
    StateTaskServiceDynamoDB,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_sqs import (
    StateTaskServiceSqs,
)

from docagent.localcloud.stepfunctions import resources
from docagent.localcloud.stepfunctions.map_run_memory import event_details

_NOT_NULL = "Member must not be null"


def _client_error(operation: str, code: str, message: str) -> ClientError:
    response: Any = {
        "Error": {"Code": code, "Message": message},
        "ResponseMetadata": {"HTTPStatusCode": 400, "RequestId": uuid.uuid4().hex.upper()},
    }
    return ClientError(response, operation)


def refuse_invalid_members(found: OperationModel, parameters: dict[str, Any]) -> None:
    """A request missing a required member, or with a string member off its pattern: ValidationException."""
    shape = found.input_shape
    if shape is None:
        return
    errors = []
    for name, member in shape.members.items():
        value, field = parameters.get(name), f"{name[:1].lower()}{name[1:]}"
        if value is None and name in shape.required_members:
            errors.append(f"Value null at '{field}' failed to satisfy constraint: {_NOT_NULL}")
        pattern = member.metadata.get("pattern")
        if isinstance(value, str) and pattern and not re.fullmatch(pattern, value):
            errors.append(
                f"Value '{value}' at '{field}' failed to satisfy constraint: Member must satisfy regular "
                f"expression pattern: {pattern}"
            )
    sqs_send = found.name == "SendMessage" and found.service_model.service_name == "sqs"
    if sqs_send and parameters.get("MessageBody") == "":
        raise _client_error(
            found.name, "MissingParameter", "The request must contain the parameter MessageBody."
        )
    if errors:
        count = f"{len(errors)} validation error{'s' if len(errors) > 1 else ''} detected"
        raise _client_error(found.name, "ValidationException", f"{count}: {'; '.join(errors)}")


def _declared(task: Any, code: str) -> bool:
    found = resources.operation(task._get_boto_service_name(), task._get_boto_service_action())
    return found is not None and any(error.name == code for error in found.error_shapes)


def _java_cause(ex: ClientError, service: str) -> str:
    metadata = ex.response.get("ResponseMetadata", {})
    details = "; ".join([
        f"Service: {service}", f"Status Code: {metadata.get('HTTPStatusCode', 400)}",
        f"Error Code: {ex.response.get('Error', {}).get('Code', '')}",
        f"Request ID: {metadata.get('RequestId') or uuid.uuid4().hex.upper()}", "Proxy: null",
    ])  # fmt: skip
    return f"{ex.response.get('Error', {}).get('Message', '')} ({details})"


def _dynamodb_error(self: StateTaskServiceDynamoDB, client_error: ClientError) -> tuple[str, str]:
    code = str(client_error.response.get("Error", {}).get("Code", ""))
    name = code if _declared(self, code) else "AmazonDynamoDBException"
    return f"DynamoDB.{name}", _java_cause(client_error, "AmazonDynamoDBv2")


def _sqs_from_error(original: Any) -> Any:
    def from_error(self: StateTaskServiceSqs, env: Any, ex: Exception) -> Any:
        if not isinstance(ex, ClientError):
            return original(self, env, ex)
        shape = type(ex).__name__
        name = (
            "AmazonSQSException" if shape == "ClientError" else shape.removesuffix("Exception") + "Exception"
        )
        error = f"SQS.{name}"
        return FailureEvent(
            env=env,
            error_name=CustomErrorName(error),
            event_type=HistoryEventType.TaskFailed,
            event_details=event_details(
                taskFailedEventDetails=TaskFailedEventDetails(
                    error=error,
                    cause=_java_cause(ex, "AmazonSQS"),
                    resource=self._get_sfn_resource(),
                    resourceType=self._get_sfn_resource_type(),
                )
            ),
        )

    return from_error


def install() -> None:
    StateTaskServiceDynamoDB._error_cause_from_client_error = _dynamodb_error  # type: ignore[method-assign,assignment]
    StateTaskServiceSqs._from_error = _sqs_from_error(StateTaskServiceSqs._from_error)  # type: ignore[method-assign]
