"""A job's execution history read for the operator: the top-level states in the order they ran (attempts,
failures, which redrive), the redrives, the Map Run's failure. Functions of the event list only, so they
read the same from AWS and from the local cloud."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from docagent.operations.display import error_message, iso


@dataclass
class StateEntry:
    """One top-level state's run in the execution history (a redrive adds a new entry for a state)."""

    name: str
    entered_at: Any
    status: str = "running"  # running | succeeded | failed
    exited_at: Any = None
    attempts: int = 0
    failures: list[dict[str, Any]] = field(default_factory=list)
    after_redrive: int = 0

    def as_json(self) -> dict[str, Any]:
        return {
            "state": self.name,
            "status": self.status,
            "entered_at": iso(self.entered_at),
            "exited_at": iso(self.exited_at),
            "attempts": self.attempts,
            "failures": self.failures,
            "redrive": self.after_redrive,
        }


def timeline(history: list[dict[str, Any]], top_level: set[str]) -> list[StateEntry]:
    """The top-level states in the order they ran, with attempts and failures."""
    entries: list[StateEntry] = []
    redrives = 0
    current: StateEntry | None = None
    for event in history:
        kind = str(event.get("type", ""))
        entered = event.get("stateEnteredEventDetails")
        exited = event.get("stateExitedEventDetails")
        if kind == "ExecutionRedriven":
            redrives += 1
        elif kind.endswith("StateEntered") and entered and entered.get("name") in top_level:
            current = StateEntry(str(entered["name"]), event.get("timestamp"), after_redrive=redrives)
            entries.append(current)
        elif kind.endswith("StateExited") and exited and current and exited.get("name") == current.name:
            current.status, current.exited_at = "succeeded", event.get("timestamp")
        elif current is None:
            continue
        elif kind in {"TaskScheduled", "MapRunStarted"}:
            current.attempts += 1
        elif kind in {"TaskFailed", "TaskTimedOut", "MapRunFailed", "TaskSubmitFailed"}:
            details: dict[str, Any] = (
                next((v for k, v in event.items() if k.endswith("EventDetails")), {}) or {}
            )
            error = details.get("error") or ("States.Timeout" if kind == "TaskTimedOut" else None)
            current.failures.append(
                {
                    "error": error,
                    "cause": error_message(details.get("cause")),
                    "at": iso(event.get("timestamp")),
                }
            )
        elif kind.endswith("StateFailed") or kind in {"ExecutionFailed", "ExecutionTimedOut"}:
            if current.status == "running":
                current.status, current.exited_at = "failed", event.get("timestamp")
        elif kind == "ExecutionAborted" and current.status == "running":
            current.status, current.exited_at = "aborted", event.get("timestamp")
    return entries


# A redrive's event type: its kind, and the field of the event that holds its details.
REDRIVE_EVENTS = {
    "ExecutionRedriven": ("execution", "executionRedrivenEventDetails"),
    "MapRunRedriven": ("map_run", "mapRunRedrivenEventDetails"),
}


def redrives(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """ExecutionRedriven and MapRunRedriven events: who resumed the job, and when."""
    found: list[dict[str, Any]] = []
    for event in history:
        if (redrive := REDRIVE_EVENTS.get(str(event.get("type")))) is not None:
            kind, details_field = redrive
            details = event.get(details_field) or {}
            found.append(
                {"kind": kind, "at": iso(event.get("timestamp")), "count": details.get("redriveCount")}
            )
    return found


def map_run_failure(history: list[dict[str, Any]]) -> dict[str, Any] | None:
    for event in reversed(history):
        if event.get("type") == "MapRunFailed":
            details = event.get("mapRunFailedEventDetails") or {}
            return {"error": details.get("error"), "cause": details.get("cause")}
        if event.get("type") in {"MapRunStarted", "MapRunRedriven", "MapRunSucceeded"}:
            return None
    return None
