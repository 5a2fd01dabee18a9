"""Activities on the local cloud: a Task on an activity ARN waits for a worker (GetActivityTask).

Sources (read 2026-12-04): AWS API reference "GetActivityTask" (a worker retrieves a scheduled task; its
``workerName`` is recorded); LocalStack's AWS-validated snapshots (real AWS answers) activities/
test_activities ``test_activity_task`` (ActivityScheduled, ActivityStarted with the worker's name,
ActivitySucceeded) and test_sfn_api_activities (ActivityDoesNotExist and InvalidArn in AWS's words)."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

import pytest
from botocore.exceptions import ClientError

pytestmark = pytest.mark.integration

ROLE = "arn:aws:iam::123456789012:role/local"


def _start(sfn: Any, activity: str, given: dict[str, Any]) -> str:
    machine = {"StartAt": "ActivityTask", "States": {"ActivityTask": {"Type": "Task", "Resource": activity,
                                                                      "End": True}}}  # fmt: skip
    arn = sfn.create_state_machine(
        name=f"act-{uuid.uuid4().hex[:8]}", definition=json.dumps(machine), roleArn=ROLE
    )["stateMachineArn"]
    execution: str = sfn.start_execution(stateMachineArn=arn, input=json.dumps(given))["executionArn"]
    return execution


def _closed(sfn: Any, execution: str) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while (described := sfn.describe_execution(executionArn=execution))["status"] == "RUNNING":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    events = sfn.get_execution_history(executionArn=execution)["events"]
    return {"described": described, "events": events}


def test_a_worker_takes_the_task_and_answers_it(aws: Any) -> None:
    sfn = aws("stepfunctions")
    activity = sfn.create_activity(name=f"act-{uuid.uuid4().hex[:8]}")["activityArn"]
    execution = _start(sfn, activity, {"Value1": "HelloWorld"})
    task = sfn.get_activity_task(activityArn=activity, workerName="BASE_ID_ACTIVITY_CONSUMER")
    assert json.loads(task["input"]) == {"Value1": "HelloWorld"}
    sfn.send_task_success(taskToken=task["taskToken"], output=task["input"])
    run = _closed(sfn, execution)
    assert (run["described"]["status"], json.loads(run["described"]["output"])) == (
        "SUCCEEDED",
        {"Value1": "HelloWorld"},
    )
    kinds = [event["type"] for event in run["events"]]
    assert kinds == ["ExecutionStarted", "TaskStateEntered", "ActivityScheduled", "ActivityStarted",
                     "ActivitySucceeded", "TaskStateExited", "ExecutionSucceeded"]  # fmt: skip
    scheduled, started = run["events"][2], run["events"][3]
    assert scheduled["activityScheduledEventDetails"]["resource"] == activity
    assert started["activityStartedEventDetails"] == {"workerName": "BASE_ID_ACTIVITY_CONSUMER"}


def test_a_worker_fails_the_task(aws: Any) -> None:
    sfn = aws("stepfunctions")
    activity = sfn.create_activity(name=f"act-{uuid.uuid4().hex[:8]}")["activityArn"]
    execution = _start(sfn, activity, {})
    task = sfn.get_activity_task(activityArn=activity)
    sfn.send_task_failure(taskToken=task["taskToken"], error="Broken", cause="the worker says so")
    run = _closed(sfn, execution)
    assert (run["described"]["status"], run["described"]["error"], run["described"]["cause"]) == (
        "FAILED",
        "Broken",
        "the worker says so",
    )
    assert "ActivityFailed" in [event["type"] for event in run["events"]]


def test_a_missing_or_malformed_activity(aws: Any) -> None:
    sfn = aws("stepfunctions")
    gone = sfn.create_activity(name=f"act-{uuid.uuid4().hex[:8]}")["activityArn"]
    sfn.delete_activity(activityArn=gone)
    for call, code, message in [
        (lambda: sfn.get_activity_task(activityArn=gone), "ActivityDoesNotExist",
         f"Activity Does Not Exist: '{gone}'"),
        (lambda: sfn.describe_activity(activityArn=gone), "ActivityDoesNotExist",
         f"Activity Does Not Exist: '{gone}'"),
        (lambda: sfn.get_activity_task(activityArn="no_an_activity_arn"), "InvalidArn",
         "Invalid Arn: 'Invalid ARN prefix: no_an_activity_arn'"),
        (lambda: sfn.describe_activity(activityArn="no_an_activity_arn"), "InvalidArn",
         "Invalid Arn: 'Invalid ARN prefix: no_an_activity_arn'"),
    ]:  # fmt: skip
        with pytest.raises(ClientError) as refused:
            call()
        assert (refused.value.response["Error"]["Code"], refused.value.response["Error"]["Message"]) == (
            code,
            message,
        )
