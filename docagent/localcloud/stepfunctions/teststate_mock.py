"""TestState's checks of a request's ``mock`` before the state runs.

As of 2026-12-04, AWS API reference "MockInput": ``fieldValidationMode`` is STRICT (the default: "All
required fields must be present, and all present fields must conform to the API's schema"), PRESENT
("All present fields must conform to the API's schema") or NONE. "TestState" (and the CLI's
``test-state``): "TestState only supports the following when a mock is specified: Activity tasks, .sync
or .waitForTaskToken service integration patterns, Parallel, or Map states". The API's schema is the
service's output shape in botocore's model (the model the SDK integrations answer with), its member names
as Step Functions spells them (``ETag``, ``Md5OfMessageBody``; the service's own ``MD5OfMessageBody`` is
taken as well). A ``.sync`` task's result is the describe call Step Functions polls with
(DescribeExecution, DescribeTasks, DescribeJobs). Fields the shape does not name are accepted (newer API
versions add fields). The messages are AWS's as recorded by LocalStack's TestState tests (their
``test_state`` snapshots); the numeric minimum's wording is ours (unconfirmed).
"""

from __future__ import annotations

import json
from typing import Any

from botocore.model import ListShape, MapShape, OperationNotFoundError, Shape, StructureShape
from moto.stepfunctions.parser.api import InvalidDefinition

from docagent.localcloud.stepfunctions import resources
from docagent.localcloud.stepfunctions.executions import AwsError
from docagent.localcloud.stepfunctions.resources import sfn_cased

PREFIX = "Mock result schema validation error: "
REFUSE_A_MOCK = ("Pass", "Succeed", "Fail", "Choice", "Wait")
NEED_A_MOCK = (
    "TestState API does not support Map or Parallel states. Supported state types include: "
    "[Task, Wait, Pass, Succeed, Fail, Choice]"
)
# The call a .sync task's result comes from.
SYNC_DESCRIBE = {"stepfunctions": "DescribeExecution", "ecs": "DescribeTasks", "batch": "DescribeJobs"}
NOT_MODELLED = {"http", "apigateway", "eks"}  # no SDK output shape (developer guide "API Gateway" note)


def _invalid(message: str) -> AwsError:
    return AwsError("ValidationException", message)


def output_shape(resource: str) -> Shape | None:
    """The botocore output shape of a service integration's ``Resource`` (None: none to check against)."""
    found = resources.integration(resource)
    if found is None or found.service in NOT_MODELLED or not found.action:
        return None  # a Lambda function's or an activity's ARN, or no SDK shape
    model = resources.service_model(found.service)
    if model is None:
        return None
    operation = SYNC_DESCRIBE.get(found.service) if found.pattern.startswith("sync") else None
    try:
        shape: Shape | None = model.operation_model(
            operation or found.action[:1].upper() + found.action[1:]
        ).output_shape
    except OperationNotFoundError:
        return None
    return shape


def _type_error(field: str | None, expected: str) -> AwsError:
    return _invalid(f"{PREFIX}Field '{field}' must be {expected}")


def _check(value: Any, shape: Shape, strict: bool, field: str | None) -> None:
    """``value`` against ``shape``, in AWS's words as recorded in LocalStack's AWS-validated snapshots
    test_state/test_field_validation_mode and test_field_validation_mode_present (read 2026-12-04): a field
    is named as Step Functions spells it (``executionArn`` is an unknown field, not ``ExecutionArn``); a blob
    is a string (Lambda's ``Payload``, any JSON value in a task's result, excepted); lengths and numbers
    have their model's bounds."""
    kind = shape.type_name
    if kind == "document" or (kind == "blob" and field == "Payload"):
        return
    if isinstance(shape, StructureShape):
        if not isinstance(value, dict):
            raise (
                _type_error(field, "an object") if field else _invalid("Mocked result must be a JSON object.")
            )
        members = {sfn_cased(name): member for name, member in shape.members.items()}
        if strict:
            for name in shape.required_members:
                if sfn_cased(name) not in value:
                    raise _invalid(f"{PREFIX}Required field '{sfn_cased(name)}' is missing")
        for name, item in value.items():
            if name in members:
                _check(item, members[name], strict, name)
    elif isinstance(shape, ListShape):
        if not isinstance(value, list):
            raise _type_error(field, "an array")
        for item in value:
            _check(item, shape.member, strict, field)
    elif isinstance(shape, MapShape):
        if not isinstance(value, dict):
            raise _type_error(field, "an object")
        for item in value.values():
            _check(item, shape.value, strict, field)
    elif kind in ("string", "timestamp", "blob"):
        if not isinstance(value, str):
            raise _type_error(field, "a string")
        if getattr(shape, "enum", None) and value not in shape.enum:  # type: ignore[attr-defined]
            raise _invalid(f"{PREFIX}Field '{field}' is not an expected value")
        if kind != "timestamp" and len(value) < shape.metadata.get("min", 0):
            raise _invalid(f"{PREFIX}Field '{field}' is smaller than the minimum length")
    elif kind == "boolean":
        if not isinstance(value, bool):
            raise _type_error(field, "a boolean")
    elif kind in ("integer", "long", "float", "double"):
        whole = kind in ("integer", "long")
        if isinstance(value, bool) or not isinstance(value, int if whole else (int, float)):
            raise _type_error(field, "a number")
        minimum, maximum = shape.metadata.get("min"), shape.metadata.get("max")
        if minimum is not None and value < minimum:
            raise _invalid(f"{PREFIX}Field '{field}' is less than the minimum value")
        if maximum is not None and value > maximum:
            raise _invalid(f"{PREFIX}Field '{field}' exceeds the maximum value")


def validate_result(result: Any, resource: str, mode: str) -> None:
    """Refuse a mocked ``result`` of a Task with ``resource`` that its service's output shape refuses."""
    if mode == "NONE":
        return
    shape = output_shape(resource)
    if shape is not None:
        _check(result, shape, mode == "STRICT", None)


def check_unmocked(state: dict[str, Any], role_arn: str | None) -> None:
    """Refuse a Task TestState cannot call for real: without a role (AWS's message, as LocalStack records
    it), or one of the kinds TestState runs "only ... when a mock is specified" (wording ours)."""
    if state.get("Type") != "Task":
        return
    if not role_arn:
        raise _invalid("RoleArn must be specified when testing a Task state")
    resource = state.get("Resource")
    found = resources.integration(resource) if isinstance(resource, str) else None
    if (found is not None and found.pattern) or (isinstance(resource, str) and ":activity:" in resource):
        raise _invalid(
            "TestState only supports Activity tasks and the .sync or .waitForTaskToken service integration "
            "patterns when a mock is specified"
        )


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def check(state: dict[str, Any], mock: dict[str, Any] | None, reveal_secrets: bool) -> Any:
    """Refuse what AWS refuses of ``mock`` for ``state``; answer the parsed mocked result (None if none)."""
    kind = state.get("Type")
    if not mock:
        if kind in ("Map", "Parallel"):
            raise InvalidDefinition(NEED_A_MOCK)
        return None
    if kind in REFUSE_A_MOCK:
        raise _invalid(f"State type '{kind}' is not supported when a mock is specified")
    if reveal_secrets:
        raise _invalid("TestState does not support RevealSecrets when a mock is specified.")
    if "result" in mock and "errorOutput" in mock:
        raise _invalid("A test mock should have only one of the following fields: [result, errorOutput].")
    if "result" not in mock:
        return None
    try:
        result = json.loads(mock["result"])
    except (TypeError, ValueError):
        raise _invalid("Mocked result must be valid JSON") from None
    if kind == "Map":
        if "ResultWriter" in state and not isinstance(result, dict):
            raise _invalid("Mocked result must be a JSON object.")
        if "ResultWriter" not in state and not isinstance(result, list):
            raise _invalid("Mocked result must be an array.")
    elif kind == "Parallel":  # AWS's words, recorded in LocalStack's test_state_mock_validation snapshot
        if not isinstance(result, list):
            raise _invalid("Mocked result must be an array.")
        if len(result) != len(_list(state.get("Branches"))):
            raise _invalid(
                "Mocked result must contain the same number of items as number of Parallel branches."
            )
    elif kind == "Task" and isinstance(state.get("Resource"), str):
        validate_result(result, state["Resource"], str(mock.get("fieldValidationMode") or "STRICT"))
    return result
