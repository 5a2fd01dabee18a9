"""The local Bedrock's answer to a page window of a long PDF (docs/design.md, "Page windows"): the window's
slice names its source document (functions/reading/page_windows.py ``window_source``), whose label answers it.

What a window is answered with (a choice, documented): the first window (page 1) gets all of the label's
fields, as the first pages of a document usually carry its header; every later window the top-level fields,
and the array items, whose every value its own pages hold (the test the local evidence quotes by:
docagent/localcloud/bedrock/evidence.py), others null. So a value printed on page 250 is given, and grounded,
by its window, a list spread over pages is given piecewise, and the functions' merge is exercised as a real
model's windows would exercise it. Evidence is then quoted from the window's pages, numbered within the window
as a model numbers the pages of the document it is sent.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import JsonValue

from docagent.localcloud.bedrock.evidence import found_quote
from functions.evidence.grounding import leaves
from functions.reading.page_windows import PageWindow


def _held(value: JsonValue, pages: list[str]) -> bool:
    """Whether the pages hold every value of ``value`` (a scalar, or each leaf of an object or list)."""
    found = [found_quote(leaf, pages) is not None for _, leaf, _ in leaves(value, {})]
    return bool(found) and all(found)


def window_reply(reply: str, window: PageWindow, pages: list[str]) -> str:
    """An extract reply (the label's fields) as the local model gives it for ``window`` of pages ``pages``."""
    if window.first == 1:
        return reply
    try:
        fields: Any = json.loads(reply)
    except ValueError:
        return reply
    if not isinstance(fields, dict):
        return reply
    given: dict[str, JsonValue] = {}
    for name, value in fields.items():
        if isinstance(value, list):
            held = [item for item in value if _held(item, pages)]
            given[name] = held or None
        else:
            given[name] = value if value is not None and _held(value, pages) else None
    return json.dumps(given)
