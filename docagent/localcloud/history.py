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

import base64
import binascii
import json
from typing import Any

from moto.core.responses import ActionResult
from moto.stepfunctions.responses import StepFunctionResponse

from docagent.localcloud.executions import AwsError

DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 1000
# Execution data in the events' details: AWS leaves these out with includeExecutionData=false.
_EXECUTION_DATA = frozenset({"input", "output", "inputDetails", "outputDetails"})


def page_size(value: Any) -> int:
    """``maxResults`` as AWS reads it (None or 0: the default), or ValidationException."""
    if value is None or value == 0:
        return DEFAULT_PAGE_SIZE
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_PAGE_SIZE:
        raise AwsError(
            "ValidationException",
            f"1 validation error detected: Value '{value}' at 'maxResults' failed to satisfy constraint: "
            f"Member must have value less than or equal to {MAX_PAGE_SIZE}",
        )
    return value


def encode_token(scope: dict[str, Any], offset: int) -> str:
    return base64.urlsafe_b64encode(json.dumps({**scope, "offset": offset}).encode()).decode()


def decode_token(token: str | None, scope: dict[str, Any]) -> int:
    """The offset ``token`` stands for; InvalidToken if it is not one this scope handed out."""
    if token is None:
        return 0
    try:
        decoded = json.loads(base64.urlsafe_b64decode(token.encode()))
        offset = int(decoded.pop("offset"))
    except (ValueError, KeyError, TypeError, AttributeError, binascii.Error):
        raise AwsError("InvalidToken", f"Invalid Token: '{token}'") from None
    if decoded != scope or offset < 0:
        raise AwsError("InvalidToken", f"Invalid Token: '{token}' (the other arguments changed)")
    return offset


def page(
    items: list[Any], size: int, token: str | None, scope: dict[str, Any]
) -> tuple[list[Any], str | None]:
    """One page of ``items`` and the token of the next (None: this was the last)."""
    start = decode_token(token, scope)
    end = start + size
    return items[start:end], (encode_token(scope, end) if end < len(items) else None)


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
    events: list[dict[str, Any]] = list(self.stepfunction_backend.get_execution_history(arn)["events"])
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
