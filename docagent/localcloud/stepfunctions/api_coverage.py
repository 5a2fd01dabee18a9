"""Which Step Functions actions and parameters the local cloud serves, and how: the table behind
docs/sfn-api-coverage.md, and the guard that refuses what it does not honour.

The actions and their parameters come from botocore's service model (the API as AWS defines it); the status
of each parameter is declared here, next to the code that honours it. A parameter is ``honoured`` (as the AWS
API reference documents it), ``refused`` (a request that uses it is answered with a ValidationException that
names it, never silently ignored; the guard below), or a known ``gap`` (served, with the gap named; the
page's hand-written part lists the behaviour that remains different). An action not declared here is
``not served``.

Regenerate the page with ``python -m docagent.localcloud.stepfunctions.api_coverage --write``;
tests/unit/test_sfn_api_coverage.py fails when the page drifts from this table or from botocore's model.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import botocore.session
from moto.stepfunctions.responses import StepFunctionResponse

from docagent.localcloud.stepfunctions import versions
from docagent.localcloud.stepfunctions.executions import AwsError

PAGE = Path(__file__).resolve().parents[3] / "docs" / "sfn-api-coverage.md"
HONOURED, REFUSED, GAP, NOT_SERVED = "honoured", "refused", "gap", "not served"


@dataclass(frozen=True)
class Rule:
    status: str
    note: str = ""
    # For ``refused``: whether a request's value is refused (None: any value that is present).
    refuses: Callable[[Any, dict[str, Any]], bool] | None = None


def _h(note: str = "") -> Rule:
    return Rule(HONOURED, note)


def _metadata_only(value: Any, request: dict[str, Any]) -> bool:
    return value not in (None, "ALL_DATA")


_INCLUDED_DATA = Rule(REFUSED, "ALL_DATA (the default) honoured; METADATA_ONLY refused", _metadata_only)
_STORED = "stored and described back; no KMS locally"
_ARN = "the resource's ARN"

# Per action, per parameter (botocore's names). Actions absent here are not served.
SERVED: dict[str, dict[str, Rule]] = {
    "CreateActivity": {"name": _h(), "tags": _h(), "encryptionConfiguration": _h(_STORED)},
    "CreateStateMachine": {
        "name": _h("AWS's name rules (InvalidName)"),
        "definition": _h("validated (InvalidDefinition, SCHEMA_VALIDATION_FAILED ...)"),
        "roleArn": _h("stored; IAM is not enforced locally"),
        "type": _h(),
        "loggingConfiguration": _h("checked as AWS checks it (one destination, an existing log group)"),
        "tags": _h(),
        "tracingConfiguration": _h("stored and described back; no X-Ray locally"),
        "publish": _h(),
        "versionDescription": _h(),
        "encryptionConfiguration": _h(_STORED),
    },
    "CreateStateMachineAlias": {"description": _h(), "name": _h(), "routingConfiguration": _h()},
    "DeleteActivity": {"activityArn": _h()},
    "DeleteStateMachine": {"stateMachineArn": _h()},
    "DeleteStateMachineAlias": {"stateMachineAliasArn": _h()},
    "DeleteStateMachineVersion": {
        "stateMachineVersionArn": _h("a version that is gone: no error, as on AWS")
    },
    "DescribeActivity": {"activityArn": _h()},
    "DescribeExecution": {
        "executionArn": _h(
            "also a Distributed Map child's ARN; an Express execution's: InvalidArn, as on AWS"
        ),
        "includedData": _INCLUDED_DATA,
    },
    "DescribeMapRun": {"mapRunArn": _h()},
    "DescribeStateMachine": {"stateMachineArn": _h(), "includedData": _INCLUDED_DATA},
    "DescribeStateMachineAlias": {"stateMachineAliasArn": _h()},
    "DescribeStateMachineForExecution": {
        "executionArn": _h("a child's answer carries mapRunArn and label"),
        "includedData": _INCLUDED_DATA,
    },
    "GetActivityTask": {
        "activityArn": _h(),
        "workerName": _h("recorded in ActivityStarted"),
    },
    "GetExecutionHistory": {
        "executionArn": _h("also a Distributed Map child's ARN"),
        "maxResults": _h("0: 100; at most 1000"),
        "reverseOrder": _h(),
        "nextToken": _h("another request's token: InvalidToken"),
        "includeExecutionData": _h(),
    },
    "ListActivities": {"maxResults": _h(), "nextToken": _h()},
    "ListExecutions": {
        "stateMachineArn": _h("an EXPRESS state machine: StateMachineTypeNotSupported, as on AWS"),
        "statusFilter": _h(),
        "maxResults": _h(),
        "nextToken": _h(),
        "mapRunArn": _h("a Map Run's children; with stateMachineArn: ValidationException"),
        "redriveFilter": _h("a state machine's executions or a Map Run's children"),
    },
    "ListMapRuns": {
        "executionArn": _h(),
        "maxResults": _h(),
        "nextToken": _h("another request's token: InvalidToken"),
    },
    "ListStateMachineAliases": {"stateMachineArn": _h(), "nextToken": _h(), "maxResults": _h()},
    "ListStateMachineVersions": {
        "stateMachineArn": _h("newest first (versions.py)"),
        "nextToken": _h("another request's token: InvalidToken"),
        "maxResults": _h(),
    },
    "ListStateMachines": {"maxResults": _h(), "nextToken": _h()},
    "ListTagsForResource": {"resourceArn": _h(_ARN)},
    "PublishStateMachineVersion": {
        "stateMachineArn": _h("an unchanged state machine answers its latest version, as on AWS"),
        "revisionId": _h("another revision: ConflictException, in AWS's words"),
        "description": _h(),
    },
    "RedriveExecution": {
        "executionArn": _h("a Map Run child: ExecutionNotRedrivable (redrive its parent)"),
        "clientToken": _h("kept while the cloud runs; not across a restart (README)"),
    },
    "SendTaskFailure": {
        "taskToken": _h("a closed execution's token: TaskTimedOut"),
        "error": _h(),
        "cause": _h(),
    },
    "SendTaskHeartbeat": {"taskToken": _h("a closed execution's token: TaskTimedOut")},
    "SendTaskSuccess": {"taskToken": _h("a closed execution's token: TaskTimedOut"), "output": _h()},
    "StartExecution": {
        "stateMachineArn": _h(
            "also a version's or alias's ARN, and `ARN#TestCase` (Step Functions Local mocks)"
        ),
        "name": _h("a UUID when absent; AWS's name rules"),
        "input": _h(),
        "traceHeader": _h("kept and described back (the start that created the execution); no X-Ray locally"),
    },
    "StartSyncExecution": {
        "stateMachineArn": _h("EXPRESS only (StateMachineTypeNotSupported)"),
        "name": _h("a UUID when absent; AWS's name rules"),
        "input": _h(),
        "traceHeader": _h("described back; no X-Ray locally"),
        "includedData": _INCLUDED_DATA,
    },
    "StopExecution": {
        "executionArn": _h("a Map Run child: ValidationException (README deviation)"),
        "error": _h(),
        "cause": _h(),
    },
    "TagResource": {"resourceArn": _h(_ARN), "tags": _h()},
    "TestState": {
        "definition": _h(),
        "roleArn": _h("IAM is not enforced locally"),
        "input": _h(),
        "inspectionLevel": _h("TRACE: an HTTP Task's request and response"),
        "revealSecrets": _h(
            "an HTTP Task's connection additions shown only with it; refused with a mock, as on AWS"
        ),
        "variables": _h(),
        "stateName": _h(),
        "mock": _h("result checked against botocore's output shape (STRICT, PRESENT, NONE)"),
        "context": _h("$$ is exactly the object given; refused as AWS refuses"),
        "stateConfiguration": Rule(
            GAP,
            "retrierRetryCount and errorCausedByState honoured; mapIterationFailureCount only against a "
            "Distributed Map's threshold (an Inline Map's failed iterations are not modelled); "
            "mapItemReaderData only counts the items",
        ),
    },
    "UntagResource": {"resourceArn": _h(_ARN), "tagKeys": _h()},
    "UpdateMapRun": {
        "mapRunArn": _h(),
        "maxConcurrency": Rule(GAP, "described back; the running Map Run keeps its workers"),
        "toleratedFailurePercentage": Rule(GAP, "described back; the running threshold keeps the state's"),
        "toleratedFailureCount": Rule(GAP, "described back; the running threshold keeps the state's"),
    },
    "UpdateStateMachine": {
        "stateMachineArn": _h(),
        "definition": _h("validated"),
        "roleArn": _h(),
        "loggingConfiguration": _h("checked as AWS checks it (one destination, an existing log group)"),
        "tracingConfiguration": _h("stored and described back"),
        "publish": _h(),
        "versionDescription": _h(),
        "encryptionConfiguration": _h(_STORED),
    },
    "UpdateStateMachineAlias": {
        "stateMachineAliasArn": _h(),
        "description": _h(),
        "routingConfiguration": _h(),
    },
    "ValidateStateMachineDefinition": {
        "definition": _h(),
        "type": _h("EXPRESS: .sync, .waitForTaskToken and activities refused"),
        "severity": _h(),
        "maxResults": _h(),
    },
}


@functools.cache
def model_parameters() -> dict[str, list[str]]:
    """Every Step Functions action and its request parameters, from botocore's service model."""
    model = botocore.session.get_session().get_service_model("stepfunctions")
    parameters: dict[str, list[str]] = {}
    for name in model.operation_names:
        shape = model.operation_model(name).input_shape
        parameters[name] = list(shape.members) if shape is not None else []
    return parameters


def rule_for(action: str, parameter: str) -> Rule:
    served = SERVED.get(action)
    if served is None:
        return Rule(NOT_SERVED)
    return served.get(
        parameter, Rule(GAP, "not declared in docagent/localcloud/stepfunctions/api_coverage.py")
    )


# The page's hand-written part starts at this heading and is kept as it is: the behaviour (not the API's
# parameters) that remains different from AWS, each item with its reason.
BEHAVIOUR = "## What remains different"


def _behaviour_section() -> str:
    text = PAGE.read_text() if PAGE.exists() else ""
    start = text.find(BEHAVIOUR)
    return "\n" + text[start:] if start >= 0 else ""


def render() -> str:
    """docs/sfn-api-coverage.md, from botocore's model and the table above (its hand-written part after
    ``BEHAVIOUR`` kept)."""
    actions = model_parameters()
    served = [action for action in actions if action in SERVED]
    lines = [
        "# Step Functions API on the local cloud: actions and parameters",
        "",
        "Generated by `python -m docagent.localcloud.stepfunctions.api_coverage --write` from botocore's",
        "service model and the table in `docagent/localcloud/stepfunctions/api_coverage.py`;",
        "`tests/unit/test_sfn_api_coverage.py` fails when this page drifts.",
        "A parameter is **honoured** as the AWS API reference documents it,",
        "**refused** (the request is answered with a ValidationException naming it, never silently",
        "ignored), or a **gap** (served, with the gap named). The behaviour that remains different from",
        "AWS, and why, is listed [after the table](#what-remains-different).",
        "An action not served is answered with UnknownOperationException naming it.",
        "",
        f"{len(served)} of {len(actions)} actions served.",
        "",
        "| action | parameter | status | note |",
        "| --- | --- | --- | --- |",
    ]
    for action, parameters in actions.items():
        if action not in SERVED:
            lines.append(f"| {action} | (all) | {NOT_SERVED} | |")
            continue
        for parameter in parameters:
            rule = rule_for(action, parameter)
            lines.append(f"| {action} | {parameter} | {rule.status} | {rule.note} |")
    return "\n".join(lines) + "\n" + _behaviour_section()


# -- the guard: a refused parameter is answered with a ValidationException --------------------------------


def refusal(action: str, request: dict[str, Any]) -> str | None:
    """Why the local cloud refuses ``request`` to ``action`` (None: it does not)."""
    for parameter, rule in SERVED.get(action, {}).items():
        if rule.status != REFUSED or parameter not in request:
            continue
        value = request[parameter]
        if rule.refuses is None or rule.refuses(value, request):
            where = f"{rule.note}; docs/sfn-api-coverage.md"
            return f"The local cloud does not support '{parameter}' in {action} ({where})"
    return None


@functools.cache
def _input_shape(action: str) -> Any:
    model = botocore.session.get_session().get_service_model("stepfunctions")
    return model.operation_model(action).input_shape if action in model.operation_names else None


def _constraint(name: str, value: Any, shape: Any) -> str | None:
    """What AWS's request validation says of ``value`` for member ``name`` (None: nothing): an enum, a
    number's bounds, a page token's length (as recorded on AWS in LocalStack's AWS-validated snapshot
    test_sfn_api ``test_state_machine_status_filter``, ``test_list_sms_pagination``,
    ``test_list_executions_pagination``, read 2026-12-04; the enum is listed in botocore's order, AWS lists
    it in its own)."""
    bounds = shape.metadata
    if shape.type_name == "string" and shape.enum and value not in shape.enum:
        return "Member must satisfy enum value set: [" + ", ".join(shape.enum) + "]"
    number = isinstance(value, int) and not isinstance(value, bool)
    if shape.type_name in ("integer", "long") and number and "max" in bounds and value > bounds["max"]:
        return f"Member must have value less than or equal to {bounds['max']}"
    if shape.type_name in ("integer", "long") and number and "min" in bounds and value < bounds["min"]:
        return f"Member must have value greater than or equal to {bounds['min']}"
    if name == "nextToken" and isinstance(value, str) and "max" in bounds and len(value) > bounds["max"]:
        return f"Member must have length less than or equal to {bounds['max']}"
    return None


def constraint_refusal(action: str, request: dict[str, Any]) -> str | None:
    """AWS's "N validation error(s) detected: Value 'V' at 'name' failed to satisfy constraint: ..."."""
    shape = _input_shape(action)
    members = shape.members if shape is not None else {}
    errors = [
        f"Value '{value}' at '{name}' failed to satisfy constraint: {found}"
        for name, value in request.items()
        if name in members and (found := _constraint(name, value, members[name]))
    ]
    if not errors:
        return None
    return f"{len(errors)} validation error{'s' if len(errors) > 1 else ''} detected: {'; '.join(errors)}"


def _call_action(self: StepFunctionResponse) -> Any:
    try:
        request = json.loads(self.body or "{}")
    except ValueError:
        request = {}
    action = self._get_action()
    if action in model_parameters() and action not in SERVED:  # moto answered some of these with HTTP 500
        raise AwsError(
            "UnknownOperationException", f"The local cloud does not serve {action} (docs/sfn-api-coverage.md)"
        )
    problem = refusal(action, request) if isinstance(request, dict) else None
    problem = problem or (constraint_refusal(action, request) if isinstance(request, dict) else None)
    if problem is not None:
        raise AwsError("ValidationException", problem)
    return _original_call_action(self)


_original_call_action = StepFunctionResponse.call_action


def install() -> None:
    StepFunctionResponse.call_action = _call_action  # type: ignore[method-assign,assignment]
    versions.install()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="write docs/sfn-api-coverage.md (the Step Functions API table)"
    )
    parser.add_argument("--write", action="store_true", help=f"write {PAGE} (else print it)")
    args = parser.parse_args(argv)
    text = render()
    if args.write:
        PAGE.write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
