"""GetExecutionHistory's paging, order and data switch, as AWS documents them.

AWS API reference "GetExecutionHistory" (looked up 2026-12-01): events come in ascending order of their
``timeStamp``; ``reverseOrder`` lists the latest first. ``maxResults`` is the page size: "The default is 100
and the maximum allowed page size is 1000. A value of 0 uses the default." When more events remain the answer
carries ``nextToken``; the next call sends it back "keeping all other arguments unchanged", and "Using an
expired pagination token will return an HTTP 400 InvalidToken error". ``includeExecutionData`` (default
true) chooses whether the input and output of the events are returned.

moto answered every event, in ascending order, whatever was asked (the AWS CLI's ``--reverse-order
--max-items 1`` gave the first event, not the last).
"""

from __future__ import annotations

from typing import Any

from moto.core.responses import ActionResult
from moto.stepfunctions.responses import StepFunctionResponse

from docagent.localcloud.stepfunctions import map_children
from docagent.localcloud.stepfunctions.paging import page, page_size

# Execution data in the events' details: AWS leaves these out with includeExecutionData=false.
_EXECUTION_DATA = frozenset({"input", "output", "inputDetails", "outputDetails"})


def _without_execution_data(event: dict[str, Any]) -> dict[str, Any]:
    return {
        key: (
            {k: v for k, v in value.items() if k not in _EXECUTION_DATA}
            if key.endswith("EventDetails")
            else value
        )
        for key, value in event.items()
    }


def _get_execution_history(self: StepFunctionResponse) -> ActionResult:
    arn = self._get_param("executionArn")
    reverse = bool(self._get_param("reverseOrder", False))
    include_data = self._get_param("includeExecutionData", True) is not False
    size = page_size(self._get_param("maxResults"))
    events = map_children.history_of(arn)  # a Distributed Map's child, else an execution of the backend
    if events is None:
        events = list(self.stepfunction_backend.get_execution_history(arn)["events"])
    if reverse:
        events.reverse()
    scope = {"arn": arn, "reverse": reverse, "data": include_data}
    chosen, next_token = page(events, size, self._get_param("nextToken"), scope)
    if not include_data:
        chosen = [_without_execution_data(event) for event in chosen]
    answer: dict[str, Any] = {"events": chosen}
    if next_token is not None:
        answer["nextToken"] = next_token
    return ActionResult(answer)


def install() -> None:
    StepFunctionResponse.get_execution_history = _get_execution_history  # type: ignore[method-assign]
