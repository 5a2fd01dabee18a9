"""AWS SDK and Step Functions service integrations: requests, results and error names as AWS makes them.

Developer guide "Integrating other services with AWS SDK integrations" (looked up 2026-12-04): a task's
``Parameters`` name the API's request fields in Step Functions' PascalCase (``StateMachineArn`` for
StartExecution's ``stateMachineArn``), the result's fields come back in PascalCase, and a streamed body
(``s3:getObject``'s ``Body``) as text; a service error is ``<Service>.<ErrorCode>Exception`` with the
service named as the SDK's client (``S3.NoSuchBucketException``, ``SecretsManager.ResourceNotFoundException``,
``Sfn.InvalidTokenException``, ``DynamoDb....``).

moto's interpreter (LocalStack's port) has the translation helpers (``_to_boto_request``,
``_from_boto_response``) but left the two methods that use them empty, so ``aws-sdk:sfn:startExecution`` and
``states:startExecution`` sent ``StateMachineArn`` as it was (botocore: KeyError 'StateMachineArn') and
``aws-sdk:s3:getObject`` returned a stream (cannot pickle). Here they look the operation up in botocore's
model. The AWS SDK, Step Functions and ECS integrations are translated (moto's ECS integration reads the
translated result: ``ecs:runTask`` failed with KeyError 'Cluster'); the optimized Lambda, SQS, SNS,
DynamoDB and EventBridge integrations shape their own requests and results already.
"""

from __future__ import annotations

import base64
import datetime
import functools
import re
import uuid
from typing import Any, cast

from botocore.exceptions import ClientError
from botocore.model import OperationModel
from moto.core.utils import iso_8601_datetime_with_milliseconds
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service import (
    StateTaskService,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_api_gateway import (  # noqa: E501
    StateTaskServiceApiGateway,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_aws_sdk import (
    StateTaskServiceAwsSdk,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_dynamodb import (  # noqa: E501
    StateTaskServiceDynamoDB,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_ecs import (
    StateTaskServiceEcs,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_sfn import (
    StateTaskServiceSfn,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_sqs import (
    StateTaskServiceSqs,
)

from docagent.localcloud.stepfunctions import activities, http_task, resources, sdk_metadata, service_errors

_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+[A-Za-z]*")


@functools.cache
def error_service_name(service: str) -> str:
    """The service as AWS names it in an aws-sdk task's error: the SDK client's name from the service's
    ``serviceId``, each word capitalised (``S3``, ``SecretsManager``, ``Sfn``, ``DynamoDb``)."""
    model = resources.service_model(resources.BOTO_NAMES.get(service, service))
    if model is None:
        return service
    words = _WORDS.findall(str(model.metadata.get("serviceId", service)).replace("-", " "))
    return "".join(word[:1].upper() + word[1:].lower() for word in words)


def _translated(task: StateTaskService) -> bool:
    return isinstance(task, (StateTaskServiceAwsSdk, StateTaskServiceSfn, StateTaskServiceEcs))


def _operation_of(
    task: StateTaskService, boto_service_name: str | None = None, service_action_name: str | None = None
) -> OperationModel | None:
    """The botocore operation a service task calls (its service and action as the task names them)."""
    return resources.operation(
        task._get_boto_service_name(boto_service_name), task._get_boto_service_action(service_action_name)
    )


def _normalise_parameters(
    self: StateTaskService,
    parameters: dict[str, Any],
    boto_service_name: str | None = None,
    service_action_name: str | None = None,
) -> None:
    if not _translated(self):
        return
    found = _operation_of(self, boto_service_name, service_action_name)
    if found is not None and found.input_shape is not None:
        self._to_boto_request(parameters, found.input_shape)


def _calling(original: Any) -> Any:
    """The service call, after the request's required members are checked (not for a mocked task, which
    calls nothing)."""

    def eval_service_task(self: StateTaskService, env: Any, resource_runtime_part: Any,
                          normalised_parameters: dict[str, Any], state_credentials: Any) -> Any:  # fmt: skip
        found = _operation_of(self)
        if found is not None:
            service_errors.refuse_invalid_members(found, normalised_parameters)
        return original(self, env, resource_runtime_part, normalised_parameters, state_credentials)

    return eval_service_task


def _normalise_response(
    self: StateTaskService,
    response: Any,
    boto_service_name: str | None = None,
    service_action_name: str | None = None,
) -> None:
    if not _translated(self):
        return
    found = _operation_of(self, boto_service_name, service_action_name)
    if found is not None and found.output_shape is not None:
        self._from_boto_response(response, found.output_shape)
        _put_object_checksum_type(found, response)
    _timestamps_as_text(response)


def _put_object_checksum_type(found: OperationModel, response: Any) -> None:
    """S3 answers a PutObject that carried a checksum with its type: "For PutObject uploads, the checksum
    type is always FULL_OBJECT" (botocore's S3 model, PutObjectOutput ``ChecksumType``; recorded on AWS in
    LocalStack's AWS-validated snapshot services/test_aws_sdk_task_service ``test_s3_put_object``, read
    2026-12-04); moto's S3 leaves the header out unless the request named a type."""
    put_object = found.name == "PutObject" and found.service_model.service_name == "s3"
    if not put_object or not isinstance(response, dict):
        return
    if "ChecksumType" not in response and any(key.startswith("Checksum") for key in response):
        response["ChecksumType"] = "FULL_OBJECT"


def _timestamps_as_text(value: Any) -> None:
    """botocore's datetimes as ISO 8601 text in milliseconds (a result is JSON; TestState's mock validation
    takes a timestamp field as a string, AWS API reference "MockInput"). The exact format is ours."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in list(items):
        if isinstance(item, datetime.datetime):
            value[key] = iso_8601_datetime_with_milliseconds(item)
        else:
            _timestamps_as_text(item)


def _exception_name(norm_service_name: str, ex: Exception) -> str:
    """``S3.NoSuchBucketException`` for an error the service's model declares (botocore raised its class);
    an error code the model does not declare is the SDK client's base exception,
    ``SecretsManager.SecretsManagerException`` for a ValidationException, ``DynamoDb.DynamoDbException``
    (as recorded on AWS in LocalStack's AWS-validated snapshot error_handling/test_aws_sdk, read
    2026-12-04: an invalid secret name, a DynamoDB putItem without an item)."""
    name = type(ex).__name__
    if name == "ClientError" and isinstance(ex, ClientError):
        name = norm_service_name
    return (
        f"{norm_service_name}.{name}"
        if name.endswith("Exception")
        else f"{norm_service_name}.{name}Exception"
    )


def _from_error(self: StateTaskServiceAwsSdk, env: Any, ex: Exception) -> Any:
    """S3 names every request twice (``x-amz-id-2``, botocore's ``HostId``), and AWS's cause of an S3 error
    ends with "Extended Request ID: ..." (as recorded on AWS in LocalStack's AWS-validated snapshot
    error_handling/test_aws_sdk ``test_s3_no_such_key``, read 2026-12-04); moto's S3 sends none."""
    if isinstance(ex, ClientError) and self.resource.api_name == "s3":
        response: dict[str, Any] = cast(dict[str, Any], ex.response)  # botocore's TypedDict, keys optional
        response.setdefault("ResponseMetadata", {}).setdefault(
            "HostId", base64.b64encode(uuid.uuid4().bytes * 2).decode()
        )
    return _original_from_error(self, env, ex)


_original_from_error = StateTaskServiceAwsSdk._from_error


# The API Gateway integration's fields (developer guide "Create API Gateway REST APIs with Step
# Functions", looked up 2026-12-04); moto kept only ApiEndpoint and Method and dropped the others before
# the call (a Path or a RequestBody never reached the API).
API_GATEWAY_FIELDS = {"ApiEndpoint", "Method", "Headers", "Stage", "Path", "QueryParameters", "RequestBody",
                      "AllowNullValues", "AuthType"}  # fmt: skip


def install() -> None:
    """The service integrations as AWS runs them: the AWS SDK and Step Functions ones here, the optimized
    ones' response metadata (sdk_metadata.py), the HTTP Task (http_task.py), service errors
    (service_errors.py) and activities (activities.py)."""
    vars(StateTaskServiceApiGateway)["_SUPPORTED_API_PARAM_BINDINGS"]["invoke"] = API_GATEWAY_FIELDS
    sdk_metadata.install()
    http_task.install()
    service_errors.install()
    activities.install()
    for task in (StateTaskServiceAwsSdk, StateTaskServiceSfn, StateTaskServiceDynamoDB, StateTaskServiceSqs):
        task._eval_service_task = _calling(task._eval_service_task)  # type: ignore[method-assign]
    StateTaskService._to_sfn_cased = staticmethod(resources.sfn_cased)  # type: ignore[method-assign,assignment]
    StateTaskServiceAwsSdk._from_error = _from_error  # type: ignore[method-assign]
    StateTaskService._normalise_parameters = _normalise_parameters  # type: ignore[method-assign]
    StateTaskService._normalise_response = _normalise_response  # type: ignore[method-assign]
    StateTaskServiceAwsSdk._normalise_service_error_name = staticmethod(error_service_name)  # type: ignore[method-assign]
    StateTaskServiceAwsSdk._normalise_exception_name = staticmethod(_exception_name)  # type: ignore[method-assign]
