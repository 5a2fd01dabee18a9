"""StopExecution with the standard AWS CLI, as AWS documents it (API reference "StopExecution",
"DescribeExecution", "GetExecutionHistory", "DescribeMapRun", "SendTaskSuccess"; looked up 2026-12-01):
the execution is ABORTED with its stopDate and the given error and cause, the history ends with
ExecutionAborted carrying them, a running Map Run is aborted with it, and a task token of the stopped
execution is refused with TaskTimedOut."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from botocore.exceptions import ClientError

from docagent.localcloud.server import LocalCloud
from tests.integration.conftest import aws_cli
from tests.support import wait_until

SILENT_WORKER = "def handler(event, context):\n    return {}\n"


def _scheduled(sfn: Any, execution: str) -> list[dict[str, Any]]:
    events = sfn.get_execution_history(executionArn=execution)["events"]
    return [event for event in events if event["type"] == "TaskScheduled"]


def _token_of(scheduled: dict[str, Any]) -> str:
    return str(json.loads(scheduled["taskScheduledEventDetails"]["parameters"])["Payload"]["token"])


def _stop_and_check(cloud: LocalCloud, execution: str) -> dict[str, Any]:
    stopped = aws_cli(
        cloud, "stepfunctions", "stop-execution", "--execution-arn", execution,
        "--error", "Operator.Stopped", "--cause", "stopped by the test",
    )  # fmt: skip
    assert "stopDate" in stopped
    described = aws_cli(cloud, "stepfunctions", "describe-execution", "--execution-arn", execution)
    assert described["status"] == "ABORTED"
    assert described["stopDate"] == stopped["stopDate"]
    assert (described["error"], described["cause"]) == ("Operator.Stopped", "stopped by the test")
    last = aws_cli(
        cloud, "stepfunctions", "get-execution-history", "--execution-arn", execution, "--reverse-order",
        "--max-items", "1",
    )["events"]  # fmt: skip
    assert [event["type"] for event in last] == ["ExecutionAborted"]
    assert last[0]["executionAbortedEventDetails"] == {
        "error": "Operator.Stopped",
        "cause": "stopped by the test",
    }
    return described


def test_stopping_an_execution_waiting_for_a_task_token(
    cloud: LocalCloud, aws: Any, role_arn: str, make_function: Any
) -> None:
    function = make_function(SILENT_WORKER)
    definition = {
        "StartAt": "Wait for approval",
        "States": {
            "Wait for approval": {
                "Type": "Task",
                "Resource": "arn:aws:states:::lambda:invoke.waitForTaskToken",
                "Parameters": {"FunctionName": function, "Payload": {"token.$": "$$.Task.Token"}},
                "End": True,
            }
        },
    }
    sfn = aws("stepfunctions")
    machine = sfn.create_state_machine(
        name="stop-waiting", definition=json.dumps(definition), roleArn=role_arn
    )
    execution = sfn.start_execution(stateMachineArn=machine["stateMachineArn"])["executionArn"]

    task_token = _token_of(wait_until(lambda: _scheduled(sfn, execution), "the task token")[0])
    _stop_and_check(cloud, execution)

    with pytest.raises(ClientError) as refused:
        sfn.send_task_success(taskToken=task_token, output="{}")
    assert refused.value.response["Error"]["Code"] == "TaskTimedOut"
    time.sleep(0.5)  # the stopped program unwinds: nothing it does afterwards changes what was answered
    described = sfn.describe_execution(executionArn=execution)
    assert (described["status"], described["error"]) == ("ABORTED", "Operator.Stopped")
    assert sfn.get_execution_history(executionArn=execution, reverseOrder=True)["events"][0]["type"] == (
        "ExecutionAborted"
    )

    # An aborted execution is redrivable (API reference "RedriveExecution"): its history goes on.
    sfn.redrive_execution(executionArn=execution)
    wait_until(lambda: len({_token_of(e) for e in _scheduled(sfn, execution)}) == 2, "a new task token")
    types = [event["type"] for event in sfn.get_execution_history(executionArn=execution)["events"]]
    assert types.index("ExecutionRedriven") > types.index("ExecutionAborted")
    assert sfn.describe_execution(executionArn=execution)["status"] == "RUNNING"
    sfn.stop_execution(executionArn=execution)


def test_stopping_an_execution_in_its_distributed_map(cloud: LocalCloud, aws: Any, role_arn: str) -> None:
    definition = {
        "StartAt": "Each",
        "States": {
            "Each": {
                "Type": "Map",
                "ItemsPath": "$.items",
                "MaxConcurrency": 2,
                "ItemProcessor": {
                    "ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"},
                    "StartAt": "Slow",
                    "States": {"Slow": {"Type": "Wait", "Seconds": 600, "End": True}},
                },
                "End": True,
            }
        },
    }
    sfn = aws("stepfunctions")
    machine = sfn.create_state_machine(
        name="stop-in-map", definition=json.dumps(definition), roleArn=role_arn
    )
    started = sfn.start_execution(
        stateMachineArn=machine["stateMachineArn"], input=json.dumps({"items": [1, 2, 3]})
    )
    execution = started["executionArn"]

    def running_children() -> str | None:
        runs = sfn.list_map_runs(executionArn=execution)["mapRuns"]
        if not runs:
            return None
        described = sfn.describe_map_run(mapRunArn=runs[0]["mapRunArn"])
        return str(runs[0]["mapRunArn"]) if described["executionCounts"]["running"] == 2 else None

    map_run = wait_until(running_children, "two running children")
    _stop_and_check(cloud, execution)

    run = wait_until(
        lambda: (d := sfn.describe_map_run(mapRunArn=map_run))["executionCounts"]["running"] == 0 and d,
        "the children ended",
    )
    assert run["status"] == "ABORTED"
    assert run["executionCounts"]["aborted"] == 2
    assert run["executionCounts"]["failed"] == 0
    described = sfn.describe_execution(executionArn=execution)
    assert (described["status"], described["error"]) == ("ABORTED", "Operator.Stopped")
    types = [event["type"] for event in sfn.get_execution_history(executionArn=execution)["events"]]
    assert types[-1] == "ExecutionAborted"
    assert "MapRunFailed" not in types
    assert "ExecutionFailed" not in types
