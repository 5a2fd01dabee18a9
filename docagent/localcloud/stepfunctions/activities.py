"""Activities: a Task whose Resource is an activity ARN waits for a worker that calls GetActivityTask.

AWS API reference "GetActivityTask" (looked up 2026-12-04): "Used by workers to retrieve a task (with the
specified activity ARN) which has been scheduled for execution by a running state machine"; it long-polls
"up to 60 seconds" and, with no task, answers with an empty ``taskToken``; ``workerName`` is "recorded in
the history". The worker then answers with SendTaskSuccess/Failure/Heartbeat and the task's token. As
recorded on AWS in LocalStack's AWS-validated snapshot activities/test_activities ``test_activity_task``
(read 2026-12-04), the history is ActivityScheduled (input, resource), ActivityStarted (workerName),
ActivitySucceeded.

moto's interpreter has the activity task state and its callbacks (an ``activity_store`` of task queues per
activity ARN) but always gave executions an empty store and served no GetActivityTask. Here every
execution shares one store, filled on demand for the activities the backend has, and GetActivityTask hands
out the oldest task, telling its execution which worker started it.
"""

from __future__ import annotations

import threading
from typing import Any

from moto.core.responses import ActionResult
from moto.stepfunctions.models import StepFunctionBackend
from moto.stepfunctions.parser.backend.activity import Activity, ActivityTask
from moto.stepfunctions.parser.backend.execution import Execution
from moto.stepfunctions.parser.models import stepfunctions_parser_backends
from moto.stepfunctions.responses import StepFunctionResponse

from docagent.localcloud.stepfunctions.executions import AwsError

POLL_SECONDS = 60.0  # "GetActivityTask ... long poll ... up to 60 seconds" (API reference)
_ready = threading.Condition()


class _Queue(Activity):
    """An activity's scheduled tasks; a waiting GetActivityTask wakes when one is added."""

    def add_task(self, task: ActivityTask) -> None:
        with _ready:
            super().add_task(task)
            _ready.notify_all()

    def take(self) -> ActivityTask | None:
        return self._tasks.popleft() if self._tasks else None


def _backend_activity(arn: str) -> Any:
    parts = arn.split(":")
    if len(parts) < 7 or parts[5] != "activity":
        return None
    try:
        return stepfunctions_parser_backends[parts[4]][parts[3]].activities.get(arn)
    except KeyError:
        return None


class _Store(dict[str, Activity]):
    """Activity ARN -> its task queue, for every activity the backend has (made when first asked)."""

    def get(self, arn: str, default: Any = None) -> Any:
        found = _backend_activity(arn)
        if found is None:
            return default
        with _ready:
            return self.setdefault(arn, _Queue(arn=arn, name=found.name))


STORE = _Store()


def _shared_store(original: Any) -> Any:
    def init(self: Execution, *args: Any, **kwargs: Any) -> None:
        if kwargs.get("activity_store") == {}:  # moto's start_execution: no activities
            kwargs["activity_store"] = STORE
        original(self, *args, **kwargs)

    return init


def _started(token: str, worker_name: str | None) -> None:
    """Tell the execution waiting on ``token`` that a worker took its task (ActivityStarted)."""
    for backend in (b for regions in stepfunctions_parser_backends.values() for b in regions.values()):
        for machine in list(backend.state_machines):
            for execution in list(getattr(machine, "executions", [])):
                env = getattr(getattr(execution, "exec_worker", None), "env", None)
                endpoint = env.callback_pool_manager.get(token) if env is not None else None
                if endpoint is not None and hasattr(endpoint, "notify_activity_task_start"):
                    endpoint.notify_activity_task_start(worker_name=worker_name)
                    return


def get_activity_task(self: StepFunctionResponse) -> ActionResult:
    arn = str(self._get_param("activityArn") or "")
    worker = self._get_param("workerName")
    if not arn.startswith("arn:"):
        raise AwsError("InvalidArn", f"Invalid Arn: 'Invalid ARN prefix: {arn}'")
    if _backend_activity(arn) is None:
        raise AwsError("ActivityDoesNotExist", f"Activity Does Not Exist: '{arn}'")
    queue = STORE.get(arn)
    with _ready:
        task = queue.take()
        if task is None and _ready.wait_for(lambda: bool(queue._tasks), timeout=POLL_SECONDS):
            task = queue.take()
    if task is None:
        return ActionResult({})
    _started(task.task_token, worker)
    return ActionResult({"taskToken": task.task_token, "input": task.task_input})


def _described(original: Any) -> Any:
    """DescribeActivity of a missing activity in AWS's words: "Activity Does Not Exist: '<arn>'" (as
    recorded on AWS in LocalStack's AWS-validated snapshot test_sfn_api_activities, read 2026-12-04)."""

    def describe_activity(self: Any, activity_arn: str) -> Any:
        if _backend_activity(activity_arn) is None and activity_arn.startswith("arn:"):
            self._validate_activity_arn(activity_arn)
            raise AwsError("ActivityDoesNotExist", f"Activity Does Not Exist: '{activity_arn}'")
        return original(self, activity_arn)

    return describe_activity


def install() -> None:
    Execution.__init__ = _shared_store(Execution.__init__)  # type: ignore[method-assign]
    StepFunctionBackend.describe_activity = _described(StepFunctionBackend.describe_activity)  # type: ignore[method-assign]
    StepFunctionResponse.get_activity_task = get_activity_task  # type: ignore[attr-defined]
