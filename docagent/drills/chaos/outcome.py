"""A cell's outcome (its status and every check), and how two jobs' results and reports are compared: as
canonical JSON without the fields that legitimately differ between two jobs."""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Status = Literal["pass", "fail", "n/a"]

# ocr.key: the OCR record's key names the job (jobs/{job}/ocr/...); its pages, engine and cost are compared
IGNORED_RESULT_FIELDS = (
    "job_id",
    "processed_at",
    "model_call_id",
    "classify_call_id",
    "versions.created_at",
    "ocr.key",
)
IGNORED_REPORT_FIELDS = (
    "job_id",
    "map_run",
    "versions.created_at",
    "rows.model_call_id",
    "rejected_documents.model_call_id",
    "actions",
    # the table's keys name the job; its segments' sizes follow the rows' keys (incoming/{job}/...): the rows
    # themselves are compared, and the table's row count
    "table.csv_key",
    "table.jsonl_key",
    "table.jsonl_segments",
    # the stored results joined (an export of JSON Lines): its key names the job, its size follows the
    # results' own job ids and timestamps; the results themselves are compared one by one
    "table.results_key",
    "table.results_bytes",
)


@dataclass
class CellOutcome:
    """One cell's run: its status and every check (None: holds; a string: what is wrong)."""

    point: str
    mode: str
    recovery: str
    status: Status = "pass"
    reason: str | None = None
    job_id: str | None = None
    first_status: str | None = None
    first_error: str | None = None
    final_status: str | None = None
    redrives: int = 0
    faulted_attempts: int = 0
    model_calls: int = 0
    repeated_model_calls: int = 0
    seconds: float = 0.0
    checks: dict[str, str | None] = field(default_factory=dict)

    def settle(self) -> CellOutcome:
        if self.status != "n/a":
            failed = {name: problem for name, problem in self.checks.items() if problem is not None}
            self.status = "fail" if failed else "pass"
            self.reason = "; ".join(f"{name}: {problem}" for name, problem in failed.items()) or None
        return self

    def as_json(self) -> dict[str, Any]:
        return {
            "point": self.point,
            "mode": self.mode,
            "recovery": self.recovery,
            "status": self.status,
            "reason": self.reason,
            "job_id": self.job_id,
            "first_status": self.first_status,
            "first_error": self.first_error,
            "final_status": self.final_status,
            "redrives": self.redrives,
            "faulted_attempts": self.faulted_attempts,
            "model_calls": self.model_calls,
            "repeated_model_calls": self.repeated_model_calls,
            "seconds": self.seconds,
            "checks": dict(self.checks),
        }


def _drop(node: Any, parts: list[str]) -> None:
    """Remove the field at ``parts`` below ``node``; a list applies the rest of the path to every item."""
    if isinstance(node, list):
        for item in node:
            _drop(item, parts)
    elif isinstance(node, dict):
        if len(parts) == 1:
            node.pop(parts[0], None)
        else:
            _drop(node.get(parts[0]), parts[1:])


def _without(value: Any, dotted: Sequence[str]) -> Any:
    value = copy.deepcopy(value)
    for path in dotted:
        _drop(value, path.split("."))
    return value


def canonical(value: Any, ignored: Sequence[str]) -> str:
    """The JSON text compared between two jobs: sorted keys, no whitespace, ``ignored`` fields removed."""
    return json.dumps(_without(value, ignored), sort_keys=True, separators=(",", ":"))


def differing_fields(seen: Any, expected: Any, ignored: Sequence[str]) -> list[str]:
    """The top-level fields of a result that differ between two jobs (``ignored`` removed); ``missing``
    when one of them has no result."""
    if seen is None or expected is None:
        return ["missing"]
    mine, theirs = _without(seen, ignored), _without(expected, ignored)
    names = sorted(set(mine) | set(theirs))
    return [name for name in names if canonical(mine.get(name), ()) != canonical(theirs.get(name), ())]
