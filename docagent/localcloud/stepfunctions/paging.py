"""Paging of Step Functions list answers, as AWS documents it (API reference "GetExecutionHistory",
"ListExecutions", looked up 2026-12-01): ``maxResults`` "The default is 100 and the maximum allowed page
size is 1000. A value of 0 uses the default."; ``nextToken`` is handed back "keeping all other arguments
unchanged"; a token that is not valid is "HTTP 400 InvalidToken"."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from docagent.localcloud.stepfunctions.executions import AwsError

DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 1000


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
