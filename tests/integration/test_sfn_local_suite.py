"""A test suite written for Step Functions Local, run unchanged against the local cloud.

It follows AWS "Testing state machines with Step Functions Local" (mocked service integrations): the
mock file comes from SFN_MOCK_CONFIG, a test case is chosen with `stateMachineArn#TestCase`, and the
assertions read the execution's history and output. Only the endpoint differs."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from docagent.localcloud.server import LocalCloud
from tests.integration.conftest import aws_cli, zip_source
from tests.integration.test_sfn_cli import wait_closed_boto

SUITE = Path(__file__).parent / "fixtures" / "sfn_local"


@pytest.fixture(scope="module")
def sfn(aws: Any) -> Any:
    return aws("stepfunctions")


@pytest.fixture(scope="module")
def order_machine(sfn: Any) -> str:
    created = sfn.create_state_machine(
        name="OrderMachine",
        definition=(SUITE / "OrderMachine.asl.json").read_text(),
        roleArn="arn:aws:iam::123456789012:role/DummyRole",
    )
    return str(created["stateMachineArn"])


@pytest.fixture(autouse=True)
def mock_config(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SFN_MOCK_CONFIG", str(SUITE / "MockConfigFile.json"))


def run_test_case(sfn: Any, state_machine_arn: str, case: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    started = sfn.start_execution(stateMachineArn=f"{state_machine_arn}#{case}", input="{}")
    for _ in range(400):
        described = sfn.describe_execution(executionArn=started["executionArn"])
        if described["status"] != "RUNNING":
            break
        time.sleep(0.05)
    history = sfn.get_execution_history(executionArn=started["executionArn"], maxResults=1000)["events"]
    return described, history


def test_happy_path(sfn: Any, order_machine: str) -> None:
    """Mocked Return and Throw per invocation: one counter for Charge across the Map's items and the
    retry ("0" item a, "1" item b declined, "2" item b's retry); a mocked .waitForTaskToken state."""
    described, _ = run_test_case(sfn, order_machine, "HappyPath")
    assert described["status"] == "SUCCEEDED", described
    assert json.loads(described["output"]) == {"orderId": "o-1", "charged": [10, 20], "approvedBy": "alice"}
    assert described["executionArn"].startswith(order_machine.replace(":stateMachine:", ":execution:") + ":")


def test_payment_down(sfn: Any, order_machine: str) -> None:
    """Every Charge invocation throws: the retries are used up and the execution fails."""
    described, history = run_test_case(sfn, order_machine, "PaymentDown")
    assert described["status"] == "FAILED", described
    entered = [
        event["stateEnteredEventDetails"]["name"] for event in history if "stateEnteredEventDetails" in event
    ]
    assert "AwaitApproval" not in entered
    assert described["error"] == "States.ExceedToleratedFailureThreshold"  # docs/semantics.md D2


FETCH_ORDER = """
def handler(event, context):
    return {"orderId": "o-real", "items": [{"sku": "a"}, {"sku": "b"}]}
"""


def test_states_left_out_of_the_test_case_run_for_real(
    sfn: Any, aws: Any, role_arn: str, order_machine: str
) -> None:
    """Hybrid: FetchOrder is not mocked in RealFetch, so the real function runs."""
    aws("lambda").create_function(
        FunctionName="FetchOrder", Runtime="python3.13", Role=role_arn, Handler="app.handler",
        Code={"ZipFile": zip_source({"app.py": FETCH_ORDER})}, Timeout=10,
    )  # fmt: skip
    described, _ = run_test_case(sfn, order_machine, "RealFetch")
    assert described["status"] == "SUCCEEDED", described
    assert json.loads(described["output"])["orderId"] == "o-real"


def test_a_test_case_started_with_the_aws_cli(cloud: LocalCloud, sfn: Any, order_machine: str) -> None:
    started = aws_cli(
        cloud, "stepfunctions", "start-execution", "--state-machine-arn", f"{order_machine}#HappyPath"
    )
    described = wait_closed_boto(sfn, started["executionArn"])
    assert described["status"] == "SUCCEEDED", described
    assert json.loads(described["output"])["approvedBy"] == "alice"


def test_an_unknown_test_case_is_refused(sfn: Any, order_machine: str) -> None:
    with pytest.raises(sfn.exceptions.ClientError):
        sfn.start_execution(stateMachineArn=f"{order_machine}#NoSuchCase")
