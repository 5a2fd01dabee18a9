"""What a Map Run's child executions say about their documents (docagent/operations/records.py reads them):
the documents a child was given (one, or a batch's items) and where each document stands, as ``status`` and
``inspect`` both count it."""

from __future__ import annotations

import json
from typing import Any

FAILED_STATUSES = frozenset({"FAILED", "TIMED_OUT", "ABORTED"})


def document_outcome(has_result: bool, child: dict[str, Any] | None) -> str:
    """Where one document stands, as ``status`` and ``inspect`` both count it: ``succeeded`` once its result
    is stored (also when its worker died after storing it: a redrive returns it), ``failed`` when its Map Run
    child failed, timed out or was aborted without storing one, else ``pending`` (not started, or left)."""
    if has_result:
        return "succeeded"
    if child is not None and child.get("status") in FAILED_STATUSES:
        return "failed"
    return "pending"


def documents_of_input(raw: Any) -> list[dict[str, Any]]:
    """The documents a Map Run child was given (one ``document``, or a batch's ``Items``)."""
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return []
    if not isinstance(value, dict):
        return []
    if isinstance(value.get("document"), dict):
        return [value["document"]]
    items = value.get("Items")
    if isinstance(items, list):
        return [item.get("document", item) for item in items if isinstance(item, dict)]
    if "document_id" in value:
        return [value]
    return []
