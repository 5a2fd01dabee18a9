"""The crash matrix's cells: fault point x mode x recovery, which of them the options choose, and which cannot
apply to a workflow (and why). The points, their steps and which are reached once come from the registry
(functions/durability/fault_points.py); the modes' errors are the ones Lambda reports for each
(docs/semantics.md L2).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from docagent.operations.workflow_definition import retry_rule
from functions.durability.fault_points import FAULT_POINTS
from functions.payloads.common import FaultPointName

Mode = Literal["exit", "raise", "hang"]
Recovery = Literal["retry", "redrive"]

# Points only a job on batch inference passes are not the matrix's: its jobs run on-demand, with fewer
# documents than Bedrock's minimum per batch job. `docagent demo --inference batch --crash-point` drills them
# (tests/integration/test_batch_crash.py).
BATCH_POINTS = frozenset(point.name for point in FAULT_POINTS if point.batch_only)
POINTS: tuple[str, ...] = tuple(name for name in get_args(FaultPointName) if name not in BATCH_POINTS)
MODES: tuple[str, ...] = get_args(Mode)
RECOVERIES: tuple[str, ...] = get_args(Recovery)

# The state whose Lambda function passes each point; the per-document points fire for one document only.
POINT_STATES: dict[str, str] = {point.name: point.step for point in FAULT_POINTS if point.name in POINTS}
DOCUMENT_POINTS = frozenset(point.name for point in FAULT_POINTS if point.scope == "document")
# The error each mode surfaces as (docs/semantics.md L2): what a Retry rule must name to recover it.
MODE_ERRORS: dict[str, str] = {
    "exit": "Runtime.ExitError",
    "raise": "InjectedFault",
    "hang": "Sandbox.Timedout",
}
# Points a crash (exit, hang) reaches once: the next attempt replays a durable record and never gets there
# again, so Retry recovers the crash before the job can fail, and a redrive has nothing to recover. (A raise
# fails the state at once, no Retry names InjectedFault, so its redrive cells apply everywhere.)
REACHED_ONCE: dict[str, str] = {
    point.name: point.reached_once for point in FAULT_POINTS if point.reached_once
}
# Points inside a durable step (extract, actions): a process that dies there leaves an INPROGRESS record that
# blocks the next attempt until the dead invocation's deadline.
IN_STEP_POINTS = frozenset(point.name for point in FAULT_POINTS if point.in_durable_step)
MODE_WORDS: dict[str, str] = {"exit": "process exit", "raise": "raised InjectedFault", "hang": "timeout"}
CHECKS = (
    "expected_path",
    "one_result_per_document",
    "results_match_baseline",
    "no_completed_call_repeated",
    "actions_done_once",
    "report_covers_every_document",
    "verified",
    "nothing_in_progress",
)
AT_LEAST_ONCE_CHECKS = ("delivered_twice", "one_model_call_for_the_document")


@dataclass(frozen=True)
class Cell:
    point: str
    mode: str
    recovery: str

    def fault(self, document_index: int) -> dict[str, Any]:
        until = {"times": 1} if self.recovery == "retry" else {"until_redrive": 1}
        spec: dict[str, Any] = {"point": self.point, "mode": self.mode, **until}
        if self.point in DOCUMENT_POINTS:
            spec["document_index"] = document_index
        return spec


def full_matrix(
    points: Iterable[str] = POINTS, modes: Iterable[str] = MODES, recoveries: Iterable[str] = RECOVERIES
) -> list[Cell]:
    chosen_modes, chosen_recoveries = list(modes), list(recoveries)
    return [Cell(p, m, r) for p in points for m in chosen_modes for r in chosen_recoveries]


def parse_choices(value: str | None, allowed: Sequence[str], what: str) -> list[str]:
    """A comma-separated subset of ``allowed`` (all of it when ``value`` is empty), in ``allowed``'s order."""
    if not value:
        return list(allowed)
    chosen = [item.strip() for item in value.split(",") if item.strip()]
    unknown = [item for item in chosen if item not in allowed]
    if unknown or not chosen:
        raise ValueError(
            f"unknown {what}: {', '.join(unknown) or repr(value)} (choose from {', '.join(allowed)})"
        )
    return [item for item in allowed if item in chosen]


def select_cells(
    points: str | None = None,
    modes: str | None = None,
    recoveries: str | None = None,
    *,
    reduced: bool = False,
) -> list[Cell]:
    """The cells the options name: the full matrix (or the reduced one) restricted to the chosen values."""
    chosen_points = parse_choices(points, POINTS, "fault point")
    chosen_modes = parse_choices(modes, MODES, "mode")
    chosen_recoveries = parse_choices(recoveries, RECOVERIES, "recovery")
    cells = list(REDUCED) if reduced else full_matrix(chosen_points, chosen_modes, chosen_recoveries)
    selected = [
        cell
        for cell in cells
        if cell.point in chosen_points and cell.mode in chosen_modes and cell.recovery in chosen_recoveries
    ]
    if not selected:
        raise ValueError("no cell of the matrix matches the chosen points, modes and recoveries")
    return selected


# The reduced matrix of the default test suite: every point once, every mode, both recoveries, the fast
# variants (a crash inside a durable step waits for its in-progress record to expire on every attempt).
REDUCED: tuple[Cell, ...] = (
    Cell("before_model_call", "raise", "redrive"),
    Cell("after_model_call", "exit", "retry"),
    Cell("before_store_result", "exit", "redrive"),
    Cell("after_store_result", "hang", "retry"),
    Cell("before_report", "hang", "retry"),
    Cell("after_report_partial", "exit", "retry"),
    Cell("after_report", "raise", "redrive"),
    Cell("before_action", "hang", "retry"),
    Cell("after_action_request", "exit", "retry"),
    Cell("after_action", "raise", "redrive"),
    Cell("before_verify", "exit", "redrive"),
    Cell("after_verify_partition", "raise", "redrive"),
)


# ------------------------------------------------------------------------------------------ applicability


def not_applicable(cell: Cell, definition: dict[str, Any]) -> str | None:
    """Why the cell cannot apply to this workflow, or None when it does."""
    state, error = POINT_STATES[cell.point], MODE_ERRORS[cell.mode]
    if cell.recovery == "retry" and retry_rule(definition, state, error) is None:
        return (
            f"{error} is in no Retry rule of {state}: the first failure fails the state, so only a redrive "
            "recovers it (the redrive cell)"
        )
    if is_probe(cell):
        return (
            f"a {MODE_WORDS[cell.mode]} here cannot fail the job into a redrive: Retry recovers it first, "
            f"because {REACHED_ONCE[cell.point]}"
        )
    return None


def is_probe(cell: Cell) -> bool:
    """A redrive cell that is n/a because its point is reached once. It still runs, the fault armed until a
    redrive, to confirm that: confirmed, it is n/a; if the job does fail, it is judged as a redrive cell."""
    return cell.recovery == "redrive" and cell.mode != "raise" and cell.point in REACHED_ONCE


def expected_cost(cell: Cell) -> float:
    """A rough order of a cell's duration in function timeouts, to start the longest first."""
    in_step = cell.point in IN_STEP_POINTS
    if cell.recovery == "retry" or is_probe(cell):
        return 1.2 if (cell.mode == "hang" or in_step) else 0.2
    if cell.mode == "raise":
        return 0.2
    if cell.mode == "hang":
        return 5.0
    return 5.5 if in_step else 0.5
