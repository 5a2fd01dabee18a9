"""The crash matrix without a local cloud: its points belong to the workflow's states, which cells cannot
apply and why, the reduced matrix covers every point, mode and recovery, the cells' selection and the printed
table. The reduced matrix itself runs once in the suite, in the walkthrough (`docagent chaos --job my-job
--reduced` on a `docagent init` folder, tests/integration/test_walkthrough.py), and is checked there cell by
cell (tests/chaos/reduced_matrix.py: every invariant, path, model call and the --json fields)."""

from __future__ import annotations

from dataclasses import astuple
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
    ChaosRun,
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


def test_a_retry_cell_is_judged_by_the_fault_s_own_firing_not_by_any_failure_with_its_error():
    """A retry cell arms `times: 1`: an attempt that timed out before the point (Sandbox.Timedout, as a hang
    is) leaves no marker, and the next attempt to reach the point fires; Retry recovers the job."""
    cell = Cell("after_model_call", "hang", "retry")
    assert cell.fault(1) == {"point": "after_model_call", "mode": "hang", "times": 1, "document_index": 1}
    recovered = CellOutcome(*astuple(cell), job_id="chaos-x-02", faulted_attempts=2)
    recovered.first_status = recovered.final_status = "SUCCEEDED"
    # attempt 0 timed out before the point, attempt 1 fired (its marker), attempt 2 recovered
    assert ChaosRun._path_problem(cell, recovered, fired=1) is None
    problem = ChaosRun._path_problem(cell, recovered, fired=0)  # only timeouts, none of them the fault's
    assert problem is not None and "the fault never fired (no marker under jobs/chaos-x-02/faults/" in problem
    redrive = Cell("after_action", "raise", "redrive")
    assert redrive.fault(1) == {"point": "after_action", "mode": "raise", "until_redrive": 1}
    failed_first = CellOutcome(*astuple(redrive), first_status="FAILED", final_status="SUCCEEDED", redrives=1)
    failed_first.faulted_attempts = 1
    assert ChaosRun._path_problem(redrive, failed_first) is None  # a redrive cell has no marker to read
