"""A callback task's heartbeat timeout, named as Step Functions names it.

moto reports a task that sent no heartbeat within ``HeartbeatSeconds`` as ``States.Timeout``, and a
``Catch``/``Retry`` naming ``States.HeartbeatTimeout`` never matches it. The States Language names it
``States.HeartbeatTimeout`` (docs/semantics.md L3; AWS docs, concepts-error-handling.html, as of 2026-11:
"a Task state failed to send a heartbeat for a period longer than the HeartbeatSeconds value"), and
``States.Timeout`` covers it too ("ran longer than the TimeoutSeconds value, or failed to send a heartbeat
for a period longer than the HeartbeatSeconds value"). Here the failure is ``States.HeartbeatTimeout`` (its
TaskTimedOut event and, uncaught, the execution's error), and an ``ErrorEquals`` naming ``States.Timeout``
matches it as well. The wait itself is scaled by ``--time-scale`` in patches.py.

Test: tests/integration/test_heartbeat.py. Belongs in moto: yes.
"""

from __future__ import annotations

from typing import Any, cast

from moto.stepfunctions.parser.api import HistoryEventType, TaskTimedOutEventDetails
from moto.stepfunctions.parser.asl.component.common.error_name.error_equals_decl import ErrorEqualsDecl
from moto.stepfunctions.parser.asl.component.common.error_name.failure_event import FailureEvent
from moto.stepfunctions.parser.asl.component.common.error_name.states_error_name import StatesErrorName
from moto.stepfunctions.parser.asl.component.common.error_name.states_error_name_type import (
    StatesErrorNameType,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_callback import (  # noqa: E501
    StateTaskServiceCallback,
)
from moto.stepfunctions.parser.asl.eval.callback.callback import HeartbeatTimeoutError
from moto.stepfunctions.parser.asl.eval.environment import Environment
from moto.stepfunctions.parser.asl.eval.event.event_detail import EventDetails

_HEARTBEAT = StatesErrorName(typ=StatesErrorNameType.StatesHeartbeatTimeout)
_TIMEOUT = StatesErrorName(typ=StatesErrorNameType.StatesTimeout)
_TIMED_OUT = cast(TaskTimedOutEventDetails, {"error": _HEARTBEAT.error_name})


def _from_error(self: StateTaskServiceCallback, env: Environment, ex: Exception) -> FailureEvent:
    if isinstance(ex, HeartbeatTimeoutError):
        return FailureEvent(
            env=env,
            error_name=_HEARTBEAT,
            event_type=HistoryEventType.TaskTimedOut,
            event_details=cast(
                EventDetails,
                {
                    "taskTimedOutEventDetails": cast(
                        TaskTimedOutEventDetails, {"error": _HEARTBEAT.error_name}
                    )
                },
            ),
        )
    return _original_from_error(self, env, ex)


def _error_equals(self: ErrorEqualsDecl, env: Environment) -> Any:
    if env.stack and env.stack[-1] == _HEARTBEAT and _TIMEOUT in self.error_names:
        env.stack.pop()
        env.stack.append(True)
        return None
    return _original_error_equals(self, env)


_original_from_error = StateTaskServiceCallback._from_error
_original_error_equals = ErrorEqualsDecl._eval_body


def install() -> None:
    StateTaskServiceCallback._from_error = _from_error  # type: ignore[method-assign]
    ErrorEqualsDecl._eval_body = _error_equals  # type: ignore[method-assign]
