"""Runtime failures worded as Step Functions words them.

- A Map state's items that are not an array: moto's cause printed the Python type (``<class 'bool'>``);
  the cause here prints the value as JSON, as a workflow author wrote it (``true``, ``{"a":1}``).
- A JSONata Wait ``Timestamp`` that does not evaluate to a timestamp: developer guide "Transforming data
  with JSONata" (looked up 2026-12-04) - a JSONata expression that cannot be used fails the state with
  ``States.QueryEvaluationError``; moto failed it with ``States.Runtime`` (kept for ``TimestampPath``,
  a JSONPath field). The cause is AWS's, as recorded on AWS in LocalStack's AWS-validated snapshot
  (scenarios/test_base_scenarios ``test_wait_timestamp_jsonata``, read 2026-12-04): "The Timestamp field
  cannot be parsed as an ISO-8601 extended offset date-time format string: 2016-12-05T21:29:29", with
  ``location`` Timestamp. A value that is not a string fails the same way (moto raised a TypeError).
- ``EvaluationFailed``: AWS records it after the state's ``*StateEntered`` event and before the
  execution (or Map iteration) fails, for every ``States.QueryEvaluationError`` (the snapshots above:
  PassStateEntered, EvaluationFailed, ExecutionFailed), with the state's name and the cause in AWS's
  frame ("An error occurred while executing the state 'S' (entered at the event id #2). ..."). moto
  recorded it for a Map state, and for a Task state without the frame; the frame is added once.
- A Map iteration that fails with a ``States.`` error (an inner state's ``States.QueryEvaluationError``)
  fails the Map with that error and cause, as AWS records it (snapshot ``test_map_catch_error``); moto
  refused the name as a custom one (``Custom Error Names MUST NOT begin with the prefix 'States.'``).
"""

from __future__ import annotations

import json
from typing import Any, cast

from moto.stepfunctions.parser.api import HistoryEventType
from moto.stepfunctions.parser.asl.component.common.error_name.error_name import ErrorName
from moto.stepfunctions.parser.asl.component.common.error_name.failure_event import (
    FailureEvent,
    FailureEventException,
)
from moto.stepfunctions.parser.asl.component.common.string.string_expression import StringJSONata
from moto.stepfunctions.parser.asl.component.state.exec.execute_state import ExecutionState
from moto.stepfunctions.parser.asl.component.state.exec.state_map import state_map
from moto.stepfunctions.parser.asl.component.state.exec.state_map.iteration import iteration_worker
from moto.stepfunctions.parser.asl.component.state.state import CommonStateField
from moto.stepfunctions.parser.asl.component.state.wait.wait_function.timestamp import Timestamp
from moto.stepfunctions.parser.asl.eval.environment import Environment
from moto.stepfunctions.parser.asl.eval.event.event_detail import EventDetails

from docagent.localcloud.stepfunctions.jsonata_functions import query_failure


class _TypeOrJson:
    """What the Map state's message prints in place of ``type(items)``: the items as JSON text. Anything
    that is not a JSON value (moto's own internal-error message) still gets its type."""

    def __call__(self, value: Any) -> Any:
        try:
            return json.dumps(value, separators=(",", ":"))
        except TypeError:
            return type(value)


def _timestamp_failure(self: Timestamp, env: Any, timestamp: Any) -> FailureEvent:
    if isinstance(self.string, StringJSONata):
        shown = timestamp if isinstance(timestamp, str) else json.dumps(timestamp, separators=(",", ":"))
        cause = f"The Timestamp field cannot be parsed as {_ISO_8601}: {shown}"
        return query_failure(env, cause, "Timestamp").failure_event
    return _original_timestamp_failure(self, env, timestamp)


def _from_timestamp_string(timestamp: Any) -> Any:
    return _original_from_timestamp_string(timestamp) if isinstance(timestamp, str) else None


def _state_eval_body(self: CommonStateField, env: Environment) -> None:
    try:
        _original_state_eval_body(self, env)
    except FailureEventException as failure:
        event = failure.failure_event
        if event.event_type == HistoryEventType.EvaluationFailed and not getattr(event, _RECORDED, False):
            env.event_manager.add_event(
                context=env.event_history_context,
                event_type=HistoryEventType.EvaluationFailed,
                event_details=_evaluation_failed_event(failure.get_evaluation_failed_event_details()),
            )
        raise


def _evaluation_failed_event(details: Any) -> EventDetails:
    # moto's EventDetails is a closed TypedDict of every event kind
    return cast(EventDetails, {"evaluationFailedEventDetails": details})


def _evaluation_failed_details(self: FailureEventException) -> Any:
    """moto's details, the failure remembered as recorded: the Map state records its own EvaluationFailed
    event (and raises the failure again in a new exception)."""
    setattr(self.failure_event, _RECORDED, True)
    return _framed_once(self, _original_evaluation_failed_details(self))


def _execution_from_error(self: ExecutionState, env: Environment, ex: Exception) -> FailureEvent:
    """A Task's (or Map's, Parallel's) failure event, an evaluation failure's details in AWS's frame: the
    event the state records is this one's details."""
    event = _original_execution_from_error(self, env, ex)
    if event.event_type == HistoryEventType.EvaluationFailed and not getattr(event, _RECORDED, False):
        framed = FailureEventException(event).get_evaluation_failed_event_details()
        event.event_details = _evaluation_failed_event(framed)  # type: ignore[misc]
    return event


def _framed_once(failure: FailureEventException, details: Any) -> Any:
    """moto puts AWS's frame around a cause; a cause already framed (an inner state's) keeps its own."""
    pair = failure.extract_error_cause_pair()
    cause = pair[1] if pair is not None else None
    if details is not None and cause and cause.startswith(_FRAME) and "cause" in details:
        details["cause"] = cause
    return details


def _execution_failed_details(self: FailureEventException) -> Any:
    return _framed_once(self, _original_execution_failed_details(self))


class ReportedErrorName(ErrorName):
    """An error's name as a run reported it, ``States.`` ones too (moto's CustomErrorName refuses those):
    a Map iteration's error, a mocked error."""


_ISO_8601 = "an ISO-8601 extended offset date-time format string"
_FRAME = "An error occurred while executing the state '"
_RECORDED = "_docagent_evaluation_failed_recorded"
_original_timestamp_failure = Timestamp._create_failure_event
_original_from_timestamp_string = Timestamp._from_timestamp_string
_original_state_eval_body = CommonStateField._eval_body
_original_evaluation_failed_details = FailureEventException.get_evaluation_failed_event_details
_original_execution_failed_details = FailureEventException.get_execution_failed_event_details
_original_execution_from_error = ExecutionState._from_error


def install() -> None:
    vars(state_map)["type"] = _TypeOrJson()  # the module's only use of type() for a value is the cause
    Timestamp._create_failure_event = _timestamp_failure  # type: ignore[method-assign,assignment]
    Timestamp._from_timestamp_string = staticmethod(_from_timestamp_string)  # type: ignore[method-assign]
    CommonStateField._eval_body = _state_eval_body  # type: ignore[method-assign]
    FailureEventException.get_evaluation_failed_event_details = _evaluation_failed_details  # type: ignore[method-assign]
    FailureEventException.get_execution_failed_event_details = _execution_failed_details  # type: ignore[method-assign]
    ExecutionState._from_error = _execution_from_error  # type: ignore[method-assign]
    vars(iteration_worker)["CustomErrorName"] = ReportedErrorName
