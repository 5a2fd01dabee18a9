"""The crash matrix: a worker that dies, raises or hangs at any fault point is recovered by Retry or by a
redrive with every document's result equal to a crash-free run's, no finished model call repeated,
every action done once, a verified report and no step left in progress. (An EXPRESS child delivered twice
makes one model call and one result: the at-least-once cell of the walkthrough's `chaos --job --reduced`,
tests/integration/test_walkthrough.py, the same cell on the same drill: this run leaves it out.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from docagent.drills.chaos import (
    CHECKS,
    MODE_ERRORS,
    MODES,
    POINT_STATES,
    POINTS,
    RECOVERIES,
    REDUCED,
    Cell,
    CellOutcome,
    full_matrix,
    not_applicable,
    print_matrix,
    select_cells,
)
from stacks.config import DocAgentConfig
from stacks.workflow import render_definition


def workflow_definition() -> dict[str, Any]:
    """The workflow's ASL as the stack renders it (numbers and blocks set; names left as placeholders)."""
    return render_definition(DocAgentConfig())


def test_every_fault_point_belongs_to_a_workflow_state_and_every_mode_to_an_error():
    definition = workflow_definition()
    maps = ("ReviewDocuments", "ReportPartitions", "VerifyPartitions")  # the review's and the fan-in's
    states = set(definition["States"]).union(
        *(definition["States"][name]["ItemProcessor"]["States"] for name in maps)
    )
    assert set(POINT_STATES) == set(POINTS), (
        "a new fault point needs its state in functions/durability/fault_points.py (the registry)"
    )
    assert set(POINT_STATES.values()) <= states
    assert set(MODE_ERRORS) == set(MODES)


def test_cells_that_cannot_apply_are_decided_from_the_retry_lists_and_the_durable_records():
    definition = workflow_definition()
    not_applicable_cells = {
        cell: reason for cell in full_matrix() if (reason := not_applicable(cell, definition)) is not None
    }
    no_retry = {cell for cell in not_applicable_cells if cell.recovery == "retry"}
    assert no_retry == {Cell(point, "raise", "retry") for point in POINTS}, (
        "no Retry rule names InjectedFault"
    )
    assert all("InjectedFault is in no Retry rule" in not_applicable_cells[cell] for cell in no_retry)
    reached_once = set(not_applicable_cells) - no_retry
    assert reached_once == {
        Cell(point, mode, "redrive")
        for point in ("after_model_call", "after_store_result", "after_action_request")
        for mode in ("exit", "hang")
    }
    assert len(full_matrix()) - len(not_applicable_cells) == 44 + 2 * 5  # the fan-in's two points: 5 each


def test_the_reduced_matrix_covers_every_point_mode_and_recovery_with_cells_that_apply():
    definition = workflow_definition()
    assert sorted(cell.point for cell in REDUCED) == sorted(POINTS), "every point exactly once"
    assert {cell.mode for cell in REDUCED} == set(MODES)
    assert {cell.recovery for cell in REDUCED} == set(RECOVERIES)
    assert [cell for cell in REDUCED if not_applicable(cell, definition)] == []


def test_cells_are_chosen_by_point_mode_and_recovery():
    cells = select_cells("before_action,after_action", "exit", "redrive")
    assert cells == [Cell("before_action", "exit", "redrive"), Cell("after_action", "exit", "redrive")]
    assert select_cells(modes="hang", reduced=True) == [cell for cell in REDUCED if cell.mode == "hang"]
    with pytest.raises(ValueError, match="unknown mode: crash"):
        select_cells(modes="crash")


CELL_FIELDS = {
    "point",
    "mode",
    "recovery",
    "status",
    "reason",
    "job_id",
    "first_status",
    "first_error",
    "final_status",
    "redrives",
    "faulted_attempts",
    "model_calls",
    "repeated_model_calls",
    "seconds",
    "checks",
}
SUMMARY_FIELDS = {
    "passed",
    "documents",
    "document_index",
    "time_scale",
    "parallel",
    "points",
    "modes",
    "recoveries",
    "counts",
    "repeated_model_calls",
    "baseline",
    "cells",
    "at_least_once",
    "ignored_result_fields",
    "ignored_report_fields",
    "seconds",
    "phase_seconds",
}


def cell_problems(cell: dict[str, Any], documents: int) -> list[str]:
    """What is wrong with one cell of the reduced matrix (every cell there applies, so each must pass)."""
    name = f"{cell['point']}/{cell['mode']}/{cell['recovery']} (job {cell['job_id']})"
    problems = [f"{name}: {check}: {problem}" for check, problem in cell["checks"].items() if problem]
    if cell["status"] != "pass" or set(cell["checks"]) != set(CHECKS):
        problems.append(f"{name}: {cell['status']} with checks {sorted(cell['checks'])}")
    expected = ("FAILED", 1) if cell["recovery"] == "redrive" else ("SUCCEEDED", 0)
    if (cell["first_status"], cell["redrives"]) != expected:
        problems.append(f"{name}: first run {cell['first_status']}, {cell['redrives']} redrives")
    if cell["faulted_attempts"] < 1:
        problems.append(f"{name}: the fault never fired")
    if (cell["model_calls"], cell["repeated_model_calls"]) != (documents, 0):
        problems.append(f"{name}: {cell['model_calls']} model calls, {cell['repeated_model_calls']} repeated")
    return problems


@pytest.mark.integration
def test_every_cell_of_the_reduced_matrix_keeps_every_invariant(reduced_matrix, tmp_path: Path):
    summary = reduced_matrix
    with (tmp_path / "matrix.txt").open("w") as output:
        print_matrix(summary, Console(file=output, width=200))
    table = (tmp_path / "matrix.txt").read_text()

    baseline = summary["baseline"]
    assert baseline["status"] == "pass", f"the crash-free baseline failed: {baseline['reason']}\n{table}"
    assert baseline["model_calls"] == summary["documents"]
    assert [(c["point"], c["mode"], c["recovery"]) for c in summary["cells"]] == [
        (cell.point, cell.mode, cell.recovery) for cell in REDUCED
    ]
    problems = [problem for cell in summary["cells"] for problem in cell_problems(cell, summary["documents"])]
    assert not problems, "\n".join(problems) + "\n" + table

    assert summary["at_least_once"] is None  # --no-at-least-once: tests/integration/test_walkthrough.py's
    assert summary["passed"] is True and summary["exit_code"] == 0
    assert summary["counts"] == {"pass": len(REDUCED), "fail": 0, "n/a": 0}

    # The --json object is stable: these fields, in every run.
    assert set(summary) >= SUMMARY_FIELDS
    assert all(set(cell) == CELL_FIELDS for cell in summary["cells"])
    assert summary["ignored_result_fields"] == [
        "job_id",
        "processed_at",
        "model_call_id",
        "classify_call_id",
        "versions.created_at",
        "ocr.key",
    ]


def test_the_table_shows_failures_with_the_checks_that_failed_and_numbers_the_n_a_reasons():
    failed = CellOutcome("after_action", "exit", "redrive", job_id="chaos-x-01")
    failed.checks = dict.fromkeys(CHECKS) | {"actions_done_once": "the local http service holds 2 records"}
    passed = CellOutcome("after_action", "exit", "retry", repeated_model_calls=0, seconds=9.6)
    passed.checks = dict.fromkeys(CHECKS)
    skipped = CellOutcome("after_action", "raise", "retry", status="n/a", reason="no Retry names it")
    cells = [failed.settle(), passed.settle(), skipped]
    summary = {
        "documents": 3,
        "document_index": 1,
        "time_scale": 0.1,
        "points": ["after_action"],
        "modes": ["exit", "raise"],
        "recoveries": ["retry", "redrive"],
        "cells": [cell.as_json() for cell in cells],
        "baseline": CellOutcome("baseline", "none", "none", final_status="SUCCEEDED").as_json(),
        "at_least_once": None,
        "counts": {"pass": 1, "fail": 1, "n/a": 1},
        "repeated_model_calls": 0,
        "seconds": 12.0,
        "phase_seconds": {},
    }
    console = Console(record=True, width=200)
    print_matrix(summary, console)
    text = console.export_text()
    assert failed.status == "fail"
    assert failed.reason == "actions_done_once: the local http service holds 2 records"
    assert "FAIL actions_done_once" in text and "pass · 0 rep · 10s" in text
    assert "n/a (1)" in text and "(1) n/a: no Retry names it" in text
    assert "not selected" in text, "raise · redrive was not chosen"
    assert "1 passed, 1 failed, 1 not applicable" in text
