"""HeartbeatSeconds on the local cloud: a callback task that sends no heartbeat in time fails after
HeartbeatSeconds, scaled by the cloud's time scale like every other wait, with States.HeartbeatTimeout,
which a Catch naming States.HeartbeatTimeout or States.Timeout catches (docs/semantics.md L3)."""

from __future__ import annotations

import json
import time
from typing import Any

# The callback's function returns at once and never sends a heartbeat nor the token: the task waits.
SILENT_WORKER = "def handler(event, context):\n    return {}\n"
HEARTBEAT_SECONDS = 20  # scaled by the test cloud's 0.25: 5 s, within the wait below; unscaled: 20 s


# Both Catch names in one run: an execution each, started together, so the two heartbeat waits overlap.
CAUGHT_AS = ("States.HeartbeatTimeout", "States.Timeout")


def definition_catching(function: str, caught_as: str) -> dict[str, Any]:
    return {
        "StartAt": "Wait for the worker",
        "States": {
            "Wait for the worker": {
                "Type": "Task",
                "Resource": "arn:aws:states:::lambda:invoke.waitForTaskToken",
                "Parameters": {"FunctionName": function, "Payload": {"token.$": "$$.Task.Token"}},
                "HeartbeatSeconds": HEARTBEAT_SECONDS,
                "TimeoutSeconds": 3600,
                "Catch": [{"ErrorEquals": [caught_as], "ResultPath": "$.error", "Next": "Caught"}],
                "End": True,
            },
            "Caught": {"Type": "Pass", "End": True},
        },
    }


def test_heartbeat_timeout_is_caught_by_either_name(aws: Any, role_arn: str, make_function):
    function = make_function(SILENT_WORKER)
    sfn = aws("stepfunctions")
    executions = {}
    for caught_as in CAUGHT_AS:
        machine = sfn.create_state_machine(
            name=f"heartbeat-timeout-{caught_as.replace('.', '-')}",
            definition=json.dumps(definition_catching(function, caught_as)),
            roleArn=role_arn,
        )["stateMachineArn"]
        executions[caught_as] = sfn.start_execution(stateMachineArn=machine)["executionArn"]

    deadline = time.monotonic() + 15  # under the unscaled 20 s: only a scaled heartbeat ends it in time
    for caught_as, execution in executions.items():
        description = sfn.describe_execution(executionArn=execution)
        while description["status"] == "RUNNING" and time.monotonic() < deadline:
            time.sleep(0.5)
            description = sfn.describe_execution(executionArn=execution)

        assert description["status"] == "SUCCEEDED", (caught_as, description)
        assert json.loads(description["output"])["error"]["Error"] == "States.HeartbeatTimeout"
        events = sfn.get_execution_history(executionArn=execution)["events"]
        scheduled = next(event for event in events if event["type"] == "TaskScheduled")
        assert scheduled["taskScheduledEventDetails"]["heartbeatInSeconds"] == HEARTBEAT_SECONDS
