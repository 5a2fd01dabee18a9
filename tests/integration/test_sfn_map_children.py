"""A Distributed Map's child workflow executions are executions, with the standard AWS CLI (API reference
"ListExecutions", "DescribeExecution", "GetExecutionHistory", "RedriveExecution"; developer guide "Viewing a
Distributed Map Run execution", "Redriving Map Runs"; looked up 2026-12-01): listed by ``--map-run-arn``,
described and with a history of their own under ``arn:...:execution:STATE_MACHINE/LABEL:ID``, redriven by
redriving their parent."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from botocore.exceptions import ClientError

from docagent.localcloud.server import LocalCloud
from tests.integration.conftest import aws_cli, run_aws_cli
from tests.support import wait_for_execution

DEFINITION = {
    "StartAt": "Each",
    "States": {
        "Each": {
            "Type": "Map",
            "Label": "items",
            "ItemsPath": "$.items",
            "ItemProcessor": {
                "ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"},
                "StartAt": "Check",
                "States": {
                    "Check": {
                        "Type": "Choice",
                        "Choices": [{"Variable": "$.n", "NumericEquals": 2, "Next": "Later"}],
                        "Default": "Done",
                    },
                    # Item 2 fails after the others have started: a failed child fails the Map Run, and items
                    # not yet started then never start (they are PENDING, D5), on AWS as here. Without the
                    # wait, a fast machine failed item 2 before item 3's worker had taken it (seen on
                    # 2026-12-03). 4 s of the state machine's time, 1 s at the session cloud's time scale.
                    "Later": {"Type": "Wait", "Seconds": 4, "Next": "Bad"},
                    "Bad": {"Type": "Fail", "Error": "Item.Bad", "Cause": "two is bad"},
                    "Done": {"Type": "Pass", "Result": "ok", "End": True},
                },
            },
            "End": True,
        }
    },
}


@pytest.fixture(scope="module")
def failed_parent(aws: Any, role_arn: str) -> tuple[str, str]:
    """(parent execution ARN, Map Run ARN) of a parent whose Map failed: item 2's child failed."""
    sfn = aws("stepfunctions")
    machine = sfn.create_state_machine(name="children", definition=json.dumps(DEFINITION), roleArn=role_arn)
    items = json.dumps({"items": [{"n": 1}, {"n": 2}, {"n": 3}]})
    execution = str(
        sfn.start_execution(stateMachineArn=machine["stateMachineArn"], input=items)["executionArn"]
    )
    assert wait_for_execution(sfn, execution, timeout=20)["status"] == "FAILED"
    return execution, str(sfn.list_map_runs(executionArn=execution)["mapRuns"][0]["mapRunArn"])


def test_children_are_listed_by_map_run_and_described(
    cloud: LocalCloud, failed_parent: tuple[str, str]
) -> None:
    _, map_run = failed_parent
    listed = aws_cli(cloud, "stepfunctions", "list-executions", "--map-run-arn", map_run)["executions"]
    assert len(listed) == 3
    arn = re.compile(r"^arn:aws:states:us-east-1:123456789012:execution:children/items:[0-9a-f-]{36}$")
    assert all(arn.match(child["executionArn"]) for child in listed), listed
    assert {child["mapRunArn"] for child in listed} == {map_run}
    assert sorted(child["status"] for child in listed) == ["FAILED", "SUCCEEDED", "SUCCEEDED"]
    assert {child["stateMachineArn"] for child in listed} == {
        "arn:aws:states:us-east-1:123456789012:stateMachine:children/items"
    }

    failed = aws_cli(
        cloud, "stepfunctions", "list-executions", "--map-run-arn", map_run, "--status-filter", "FAILED"
    )["executions"]
    assert len(failed) == 1
    described = aws_cli(
        cloud, "stepfunctions", "describe-execution", "--execution-arn", failed[0]["executionArn"]
    )
    assert (described["status"], described["error"], described["cause"]) == (
        "FAILED",
        "Item.Bad",
        "two is bad",
    )
    assert json.loads(described["input"]) == {"n": 2}
    assert described["mapRunArn"] == map_run
    assert described["redriveStatus"] == "REDRIVABLE_BY_MAP_RUN"

    succeeded = next(child for child in listed if child["status"] == "SUCCEEDED")
    described = aws_cli(
        cloud, "stepfunctions", "describe-execution", "--execution-arn", succeeded["executionArn"]
    )
    assert json.loads(described["output"]) == "ok"
    for_execution = aws_cli(
        cloud,
        "stepfunctions",
        "describe-state-machine-for-execution",
        "--execution-arn",
        succeeded["executionArn"],
    )
    assert (for_execution["mapRunArn"], for_execution["label"]) == (map_run, "items")


def test_a_child_has_its_own_history(cloud: LocalCloud, failed_parent: tuple[str, str]) -> None:
    _, map_run = failed_parent
    failed = aws_cli(
        cloud, "stepfunctions", "list-executions", "--map-run-arn", map_run, "--status-filter", "FAILED"
    )["executions"][0]
    events = aws_cli(
        cloud, "stepfunctions", "get-execution-history", "--execution-arn", failed["executionArn"]
    )["events"]
    types = [event["type"] for event in events]
    assert types[0] == "ExecutionStarted" and types[-1] == "ExecutionFailed"
    assert "ChoiceStateEntered" in types and "FailStateEntered" in types
    assert [event["id"] for event in events] == list(range(1, len(events) + 1))
    assert events[-1]["executionFailedEventDetails"] == {"error": "Item.Bad", "cause": "two is bad"}
    last = aws_cli(
        cloud, "stepfunctions", "get-execution-history", "--execution-arn", failed["executionArn"],
        "--reverse-order", "--max-items", "1",
    )["events"]  # fmt: skip
    assert [event["type"] for event in last] == ["ExecutionFailed"]


def test_a_child_is_redriven_by_its_parent(
    cloud: LocalCloud, aws: Any, failed_parent: tuple[str, str]
) -> None:
    parent, map_run = failed_parent
    sfn = aws("stepfunctions")
    children = sfn.list_executions(mapRunArn=map_run)["executions"]
    failed = next(child for child in children if child["status"] == "FAILED")
    code, _, stderr = run_aws_cli(
        cloud, "stepfunctions", "redrive-execution", "--execution-arn", failed["executionArn"]
    )
    assert code != 0 and "ExecutionNotRedrivable" in stderr

    sfn.redrive_execution(executionArn=parent)
    assert (
        wait_for_execution(sfn, parent, timeout=20)["status"] == "FAILED"
    )  # the item fails again: its Fail state is entered again
    again = sfn.describe_execution(executionArn=failed["executionArn"])
    assert (again["status"], again["redriveCount"]) == ("FAILED", 1)
    types = [
        event["type"] for event in sfn.get_execution_history(executionArn=failed["executionArn"])["events"]
    ]
    assert types.count("ExecutionFailed") == 2 and types.index("ExecutionRedriven") > types.index(
        "ExecutionFailed"
    )
    redriven = sfn.list_executions(mapRunArn=map_run, redriveFilter="REDRIVEN")["executions"]
    assert [child["executionArn"] for child in redriven] == [failed["executionArn"]]


def test_map_run_arn_and_state_machine_arn_together_are_refused(
    cloud: LocalCloud, aws: Any, failed_parent: tuple[str, str]
) -> None:
    parent, map_run = failed_parent
    machine = aws("stepfunctions").describe_execution(executionArn=parent)["stateMachineArn"]
    code, _, stderr = run_aws_cli(
        cloud, "stepfunctions", "list-executions", "--map-run-arn", map_run, "--state-machine-arn", machine
    )
    assert code != 0 and "ValidationException" in stderr
    code, _, stderr = run_aws_cli(
        cloud, "stepfunctions", "list-executions", "--map-run-arn", map_run + "-gone"
    )
    assert code != 0 and "ResourceNotFound" in stderr


def test_stopping_one_child_is_refused_as_a_listed_deviation(
    aws: Any, failed_parent: tuple[str, str]
) -> None:
    """README deviation: a child runs as a thread of its parent; stop the parent instead."""
    sfn = aws("stepfunctions")
    child = sfn.list_executions(mapRunArn=failed_parent[1])["executions"][0]["executionArn"]
    with pytest.raises(ClientError) as refused:
        sfn.stop_execution(executionArn=child)
    assert refused.value.response["Error"]["Code"] == "ValidationException"
