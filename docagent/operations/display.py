"""Small conversions the operator's commands share: times as ISO-8601 UTC, a Lambda error's message, a short
list of ids for a human line, a console as wide as the terminal."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from rich.console import Console


def wide_console() -> Console:
    """The terminal's width, or 140 columns when the output is not a terminal (a file, a pipe). Markup is off:
    what the operator's commands print holds user text (job ids, file names, --by, reasons, AWS errors) that
    prints as written; colours are styles (``Text.assemble``), never markup in a string."""
    out = Console(markup=False)
    return out if out.is_terminal else Console(width=140, markup=False)


def iso(value: Any) -> str | None:
    """An ISO-8601 UTC string for a datetime (or the value itself when it is already a string)."""
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        return str(value.astimezone(dt.UTC).isoformat(timespec="seconds")).replace("+00:00", "Z")
    return str(value)


def as_datetime(value: Any) -> dt.datetime | None:
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
    text = str(value).replace("Z", "+00:00").replace(" ", "T", 1)
    try:
        parsed = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


def now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def error_message(cause: str | None) -> str | None:
    """A Lambda failure's cause is ``{"errorType", "errorMessage"}`` JSON: the message reads better."""
    if not cause:
        return cause
    try:
        parsed = json.loads(cause)
    except ValueError:
        return cause
    if isinstance(parsed, dict) and "errorMessage" in parsed:
        return str(parsed["errorMessage"])
    return cause


def compress_ids(ids: list[str], limit: int = 6) -> str:
    """``a, b, c ... (+n more)`` for a human line."""
    if len(ids) <= limit:
        return ", ".join(ids)
    return f"{', '.join(ids[:limit])} ... (+{len(ids) - limit} more)"
