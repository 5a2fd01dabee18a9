"""One line of ``docagent preflight``: a check's name, status, what it found and the fix (shared by
docagent/operations/preflight.py and its model checks, docagent/operations/preflight_models.py)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from botocore.exceptions import ClientError

Status = Literal["ok", "warn", "fail"]
_RANK: dict[Status, int] = {"ok": 0, "warn": 1, "fail": 2}


@dataclass(frozen=True)
class Check:
    name: str
    status: Status
    detail: str
    fix: str = ""


def skipped(name: str, why: str) -> Check:
    return Check(name, "ok", f"skipped: {why}")


def error_code(error: Exception) -> str:
    if isinstance(error, ClientError):
        return str(error.response.get("Error", {}).get("Code", "")) or type(error).__name__
    return type(error).__name__


def combined(name: str, checks: Iterable[Check]) -> Check:
    """One line for a check run once per model: the worst status, each model's finding, the fixes of those
    not ok (each once)."""
    found = list(checks)
    status: Status = max((check.status for check in found), key=_RANK.__getitem__, default="ok")
    fixes = dict.fromkeys(check.fix for check in found if check.fix and check.status != "ok")
    return Check(name, status, "; ".join(check.detail for check in found), "; ".join(fixes))
