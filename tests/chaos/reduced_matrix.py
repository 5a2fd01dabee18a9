"""The reduced crash matrix's checks on a `docagent chaos --reduced --json` answer: every cell of REDUCED
ran in order and passed every invariant, with the path its recovery says (first run, redrives, the fault
fired), one model call per document and none repeated; the crash-free baseline passed; the --json object's
fields are stable. The suite's one run of the reduced matrix is the walkthrough's (`docagent chaos --job
my-job --reduced` on a `docagent init` folder, tests/integration/test_walkthrough.py), which checks its
at-least-once cell too."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from docagent.drills.chaos import CHECKS, REDUCED, print_matrix

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


def assert_every_cell_keeps_every_invariant(summary: dict[str, Any]) -> None:
    """The reduced matrix's answer, cell by cell (its at-least-once cell is the caller's to check)."""
    console = Console(record=True, width=200)
    print_matrix(summary, console)
    table = console.export_text()

    baseline = summary["baseline"]
    assert baseline["status"] == "pass", f"the crash-free baseline failed: {baseline['reason']}\n{table}"
    assert baseline["model_calls"] == summary["documents"]
    assert [(c["point"], c["mode"], c["recovery"]) for c in summary["cells"]] == [
        (cell.point, cell.mode, cell.recovery) for cell in REDUCED
    ]
    problems = [problem for cell in summary["cells"] for problem in cell_problems(cell, summary["documents"])]
    assert not problems, "\n".join(problems) + "\n" + table
    assert summary["passed"] is True
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
