"""Runtime failures worded as Step Functions words them.

- A Map state's items that are not an array: moto's cause printed the Python type (``<class 'bool'>``);
  the cause here prints the value as JSON, as a workflow author wrote it (``true``, ``{"a":1}``).
- A JSONata Wait ``Timestamp`` that does not evaluate to a timestamp: developer guide "Transforming data
  with JSONata" (looked up 2026-12-04) - a JSONata expression that cannot be used fails the state with
  ``States.QueryEvaluationError``; moto failed it with ``States.Runtime`` (kept for ``TimestampPath``,
  a JSONPath field). The cause keeps moto's wording with the value as JSON.
"""

from __future__ import annotations

import json
from typing import Any

from moto.stepfunctions.parser.asl.component.common.error_name.failure_event import FailureEvent
from moto.stepfunctions.parser.asl.component.common.string.string_expression import StringJSONata
from moto.stepfunctions.parser.asl.component.state.exec.state_map import state_map
from moto.stepfunctions.parser.asl.component.state.wait.wait_function.timestamp import Timestamp

from docagent.localcloud.stepfunctions.jsonata_functions import query_failure


class _TypeOrJson:
    """What the Map state's message prints in place of ``type(items)``: the items as JSON text. Anything
    that is not a JSON value (moto's own internal-error message) still gets its type."""

    def __call__(self, value: Any) -> Any:
        try:
            return json.dumps(value, separators=(",", ":"))
        except TypeError:
            return type(value)


def _timestamp_failure(self: Timestamp, env: Any, timestamp_str: str) -> FailureEvent:
    if isinstance(self.string, StringJSONata):
        cause = (
            "The Timestamp parameter does not reference a valid ISO-8601 extended offset date-time format "
            f"string: {self.string.expression} == {json.dumps(timestamp_str)}"
        )
        return query_failure(env, cause).failure_event
    return _original_timestamp_failure(self, env, timestamp_str)


_original_timestamp_failure = Timestamp._create_failure_event


def install() -> None:
    vars(state_map)["type"] = _TypeOrJson()  # the module's only use of type() for a value is the cause
    Timestamp._create_failure_event = _timestamp_failure  # type: ignore[method-assign]
