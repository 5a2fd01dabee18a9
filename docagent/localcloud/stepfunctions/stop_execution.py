"""StopExecution as AWS documents it, on moto's interpreter.

AWS API reference "StopExecution" (looked up 2026-12-01): "Stops an execution"; the request takes an
``error`` and a ``cause`` (each optional), the answer is ``stopDate``; the API is not supported by EXPRESS
state machines. The execution is then ABORTED: DescribeExecution reports ``status`` ABORTED, its ``stopDate``,
``error`` and ``cause``, and the history ends with an ``ExecutionAborted`` event carrying the same error and
cause. A task token handed out by the stopped execution is closed: "TaskTimedOut: the task token has either
expired or the task associated with the token has already been closed" (SendTaskSuccess/Failure/Heartbeat).

What moto did instead: the handler dropped ``error`` and ``cause``; the status changed only when the state
that was running returned, so an execution waiting for a task token stayed RUNNING until its timeout; a
running Distributed Map counted its stopped children as failures and ended FAILED with
``States.ExceedToleratedFailureThreshold`` (``set_error`` overrode the stop); SendTaskFailure with a token of
a closed execution was accepted.

Here the stop takes effect at once: the status, date, error and cause are set, ``ExecutionAborted`` is the
history's last event (later events of the unwinding program are dropped), each running Map Run is ABORTED
(its children end ABORTED, not FAILED), and the execution's waiting tokens are interrupted and refused after.
"""

from __future__ import annotations

import datetime
from typing import Any

from moto.core.responses import ActionResult
from moto.stepfunctions.parser.api import (
    ExecutionAbortedEventDetails,
    ExecutionStatus,
    HistoryEventType,
    MapRunStatus,
    TaskTimedOut,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_map.iteration.itemprocessor.map_run_record import (  # noqa: E501
    MapRunRecord,
)
from moto.stepfunctions.parser.asl.eval.callback.callback import CallbackConsumerTimeout
from moto.stepfunctions.parser.asl.eval.environment import Environment
from moto.stepfunctions.parser.asl.eval.event.event_detail import EventDetails
from moto.stepfunctions.parser.asl.eval.event.event_manager import EventManager
from moto.stepfunctions.parser.asl.eval.program_state import ProgramStopped
from moto.stepfunctions.parser.backend.execution import BaseExecutionWorkerCommunication, Execution
from moto.stepfunctions.parser.models import StepFunctionsParserBackend
from moto.stepfunctions.responses import StepFunctionResponse

from docagent.localcloud.stepfunctions import map_children
from docagent.localcloud.stepfunctions.executions import AwsError

# The code is AWS's (botocore's SFN docs, looked up 2026-12-01: TaskTimedOut, "the task associated with the
# token has already been closed"); the message is ours, as AWS's exact wording was not found (unconfirmed).
CLOSED_TOKEN_MESSAGE = (
    "The task associated with this token has already been closed: its execution was stopped"
)


def stop(
    backend: StepFunctionsParserBackend, execution_arn: str, error: str | None, cause: str | None
) -> Execution:
    """Stop ``execution_arn`` as AWS does; an execution already closed is left as it is."""
    execution: Execution = backend.describe_execution(execution_arn)  # type: ignore[assignment]
    if str(execution.sm_type) == "EXPRESS":
        raise AwsError("ValidationException", "This operation is not supported by EXPRESS state machines")
    worker = execution.exec_worker
    env: Environment | None = worker.env if worker is not None else None
    if execution.exec_status != ExecutionStatus.RUNNING or env is None:
        return execution
    stop_date = datetime.datetime.now(tz=datetime.UTC)
    env.set_stop(stop_date=stop_date, cause=cause, error=error)
    execution.exec_status = ExecutionStatus.ABORTED
    execution.stop_date = stop_date
    execution.error, execution.cause = error, cause
    env.event_history_context.source_event_id = 0
    env.event_manager.add_event(
        context=env.event_history_context,
        event_type=HistoryEventType.ExecutionAborted,
        event_details=EventDetails(
            executionAbortedEventDetails=ExecutionAbortedEventDetails(error=error, cause=cause)  # type: ignore[typeddict-item]
        ),
        timestamp=stop_date,
    )
    _close(env.event_manager)
    for record in env.map_run_record_pool_manager.get_all():
        if record.status == MapRunStatus.RUNNING:
            record.set_stop(MapRunStatus.ABORTED)
    for endpoint in list(env.callback_pool_manager._pool.values()):
        endpoint.report(CallbackConsumerTimeout())
        endpoint.interrupt_all()
    return execution


def _close(events: EventManager) -> None:
    """No event after ExecutionAborted: the program unwinding after the stop records nothing more."""
    history = events._history_event_list
    last_id = int(history[-1]["id"]) if history else 0

    def closed(*args: Any, **kwargs: Any) -> int:
        return last_id

    vars(events)["add_event"] = closed


def reopen(events: EventManager) -> None:
    """A redrive continues the stopped execution's history (redrive.py)."""
    vars(events).pop("add_event", None)


def _closed_execution_of(backend: StepFunctionsParserBackend, token: str) -> Execution | None:
    """The closed execution that handed out ``token``, if a closed one did."""
    for execution in backend._get_executions():
        worker = execution.exec_worker
        env = worker.env if worker is not None else None
        if env is None or execution.exec_status == ExecutionStatus.RUNNING:
            continue
        if env.callback_pool_manager.get(token) is not None:
            return execution  # type: ignore[no-any-return]
    return None


def _refusing_closed_tokens(original: Any) -> Any:
    def call(self: StepFunctionsParserBackend, task_token: str, *args: Any, **kwargs: Any) -> Any:
        closed = _closed_execution_of(self, task_token)
        if closed is not None:
            raise TaskTimedOut(CLOSED_TOKEN_MESSAGE.format(status=closed.status))
        return original(self, task_token, *args, **kwargs)

    return call


def _stop_execution_response(self: StepFunctionResponse) -> ActionResult:
    """moto's handler passed neither ``error`` nor ``cause`` on."""
    arn = self._get_param("executionArn")
    if map_children.find_child(arn) is not None:  # a README deviation: children are threads of their parent
        raise AwsError(
            "ValidationException",
            f"The local cloud cannot stop one child of a Distributed Map ({arn}): stop its parent execution",
        )
    execution = stop(
        self.stepfunction_backend,  # type: ignore[arg-type]
        arn,
        self._get_param("error"),
        self._get_param("cause"),
    )
    return ActionResult({"stopDate": execution.stop_date})


def _stay_stopped(original: Any) -> Any:
    """A stopped program stays stopped: moto's ``set_error``/``set_timed_out`` overrode the stop (a Map whose
    children were stopped then failed the execution)."""

    def call(self: Environment, *args: Any, **kwargs: Any) -> None:
        if isinstance(self._program_state, ProgramStopped):
            return
        original(self, *args, **kwargs)

    return call


def _terminated(self: BaseExecutionWorkerCommunication) -> None:
    """The worker's end: an execution stopped already has its status, date, error and cause."""
    if self.execution.exec_status != ExecutionStatus.ABORTED:
        _original_terminated(self)


def _map_run_set_stop(self: MapRunRecord, status: MapRunStatus) -> None:
    if self.status != MapRunStatus.ABORTED:  # an aborted Map Run stays aborted
        _original_map_run_set_stop(self, status)


_original_terminated = BaseExecutionWorkerCommunication.terminated
_original_map_run_set_stop = MapRunRecord.set_stop


def install() -> None:
    StepFunctionResponse.stop_execution = _stop_execution_response  # type: ignore[method-assign]
    for name in ("send_task_success", "send_task_failure", "send_task_heartbeat"):
        setattr(
            StepFunctionsParserBackend,
            name,
            _refusing_closed_tokens(getattr(StepFunctionsParserBackend, name)),
        )
    Environment.set_error = _stay_stopped(Environment.set_error)  # type: ignore[method-assign]
    Environment.set_timed_out = _stay_stopped(Environment.set_timed_out)  # type: ignore[method-assign]
    BaseExecutionWorkerCommunication.terminated = _terminated  # type: ignore[method-assign]
    MapRunRecord.set_stop = _map_run_set_stop  # type: ignore[method-assign]
