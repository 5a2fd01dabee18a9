"""StartSyncExecution with the standard AWS CLI (AWS API reference "StartSyncExecution", looked up
2026-12-04): an Express state machine runs to its end and the answer carries its status and output; a
failed run is still 200 OK with error and cause; a STANDARD state machine is StateMachineTypeNotSupported.

The CLI sends StartSyncExecution to a ``sync-`` host prefix; AWS_DISABLE_HOST_PREFIX_INJECTION (botocore's
``disable_host_prefix_injection``) keeps it on the local endpoint."""

from __future__ import annotations

import json
import os
import uuid
from typing import Any

import pytest

from docagent.localcloud.server import LocalCloud
from tests.integration.conftest import run_aws_cli

pytestmark = pytest.mark.integration

ROLE = "arn:aws:iam::123456789012:role/local"
ADD = {
    "StartAt": "Add",
    "States": {"Add": {"Type": "Pass", "Parameters": {"sum.$": "States.MathAdd($.a, $.b)"}, "End": True}},
}
FAIL = {
    "StartAt": "Boom",
    "States": {"Boom": {"Type": "Fail", "Error": "Custom.Boom", "Cause": "on purpose"}},
}


@pytest.fixture(autouse=True)
def _no_host_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(os.environ, "AWS_DISABLE_HOST_PREFIX_INJECTION", "true")


def _machine(aws: Any, definition: dict[str, Any], kind: str) -> str:
    arn: str = aws("stepfunctions").create_state_machine(
        name=f"sync-{uuid.uuid4().hex[:8]}", definition=json.dumps(definition), roleArn=ROLE, type=kind
    )["stateMachineArn"]
    return arn


def _sync(cloud: LocalCloud, arn: str, payload: str) -> tuple[int, Any, str]:
    return run_aws_cli(
        cloud, "stepfunctions", "start-sync-execution", "--state-machine-arn", arn, "--input", payload
    )


def test_an_express_machine_runs_to_its_output(cloud: LocalCloud, aws: Any) -> None:
    arn = _machine(aws, ADD, "EXPRESS")
    code, answer, stderr = _sync(cloud, arn, '{"a": 40, "b": 2}')
    assert code == 0, stderr
    assert answer["status"] == "SUCCEEDED"
    assert json.loads(answer["output"]) == {"sum": 42}
    assert answer["stateMachineArn"] == arn
    assert ":express:" in answer["executionArn"]
    assert answer["billingDetails"]["billedDurationInMilliseconds"] >= 100


def test_a_failed_run_is_answered_with_its_error(cloud: LocalCloud, aws: Any) -> None:
    code, answer, stderr = _sync(cloud, _machine(aws, FAIL, "EXPRESS"), "{}")
    assert code == 0, stderr
    assert (answer["status"], answer["error"], answer["cause"]) == ("FAILED", "Custom.Boom", "on purpose")
    assert "output" not in answer


def test_a_standard_machine_is_refused(cloud: LocalCloud, aws: Any) -> None:
    code, _, stderr = _sync(cloud, _machine(aws, ADD, "STANDARD"), "{}")
    assert code != 0
    assert "StateMachineTypeNotSupported" in stderr


def test_input_that_is_not_json_is_refused(cloud: LocalCloud, aws: Any) -> None:
    code, _, stderr = _sync(cloud, _machine(aws, ADD, "EXPRESS"), "{not json")
    assert code != 0
    assert "InvalidExecutionInput" in stderr
    assert "Invalid State Machine Execution Input" in stderr


@pytest.mark.parametrize(
    ("resource", "refused"),
    [
        ("arn:aws:states:::lambda:invoke.waitForTaskToken", "'.waitForTaskToken' service integration "),
        ("arn:aws:states:::states:startExecution.sync:2", "'.sync' service integration"),
        ("arn:aws:states:us-east-1:123456789012:activity:a", "Activity ARN"),
    ],
)
def test_an_express_machine_refuses_callback_patterns(aws: Any, resource: str, refused: str) -> None:
    """Developer guide "Choosing workflow type": Express workflows support neither .sync nor
    .waitForTaskToken nor activities; AWS's wording as recorded in LocalStack's AWS-validated snapshot
    test_sfn_api_express (read 2026-12-04; the .waitForTaskToken message ends with a space)."""
    definition = {"StartAt": "T", "States": {"T": {"Type": "Task", "Resource": resource, "End": True}}}
    with pytest.raises(aws("stepfunctions").exceptions.InvalidDefinition) as raised:
        _machine(aws, definition, "EXPRESS")
    assert str(raised.value.response["Error"]["Message"]) == (
        "Invalid State Machine Definition: 'SCHEMA_VALIDATION_FAILED: Express state machine does not support "
        f"{refused} at /States/T/Resource'"
    )


def test_validate_with_type_express_reports_the_express_rules(aws: Any) -> None:
    """API reference "ValidateStateMachineDefinition": ``type`` selects the rules; EXPRESS refuses
    callback patterns, as CreateStateMachine does."""
    resource = "arn:aws:states:::lambda:invoke.waitForTaskToken"
    definition = json.dumps(
        {"StartAt": "T", "States": {"T": {"Type": "Task", "Resource": resource, "End": True}}}
    )
    sfn = aws("stepfunctions")
    assert sfn.validate_state_machine_definition(definition=definition, type="STANDARD")["result"] == "OK"
    answer = sfn.validate_state_machine_definition(definition=definition, type="EXPRESS")
    assert answer["result"] == "FAIL"
    assert answer["diagnostics"][0] == {
        "severity": "ERROR", "code": "SCHEMA_VALIDATION_FAILED",
        "message": "Express state machine does not support '.waitForTaskToken' service integration ",
        "location": "/States/T/Resource",
    }  # fmt: skip


def test_an_express_machines_async_execution_is_not_kept(aws: Any) -> None:
    """Developer guide "Choosing workflow type" (Express history goes to CloudWatch Logs); as recorded on
    AWS in LocalStack's AWS-validated snapshot test_sfn_api_express ``test_start_async_describe_history_
    execution`` (read 2026-12-04): an ``:express:`` ARN, ListExecutions not supported, Describe/Stop/
    GetExecutionHistory refused as InvalidArn."""
    sfn = aws("stepfunctions")
    arn = _machine(aws, {"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}}, "EXPRESS")
    started = sfn.start_execution(stateMachineArn=arn, input="{}")["executionArn"]
    assert started.startswith(arn.replace(":stateMachine:", ":express:") + ":")
    with pytest.raises(sfn.exceptions.StateMachineTypeNotSupported):
        sfn.list_executions(stateMachineArn=arn)
    for call in (sfn.describe_execution, sfn.stop_execution, sfn.get_execution_history):
        with pytest.raises(sfn.exceptions.InvalidArn) as refused:
            call(executionArn=started)
        assert refused.value.response["Error"]["Message"] == (
            "Invalid Arn: 'Resource type not valid in this context: express'"
        )
