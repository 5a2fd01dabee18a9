"""The crash matrix as a table: a row per fault point, a column per mode and recovery, the n/a reasons
numbered under it, then the baseline, the at-least-once cell, each failure and the counts."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text


def _cell_text(cell: dict[str, Any], notes: dict[str, int]) -> Text:
    if cell["status"] == "n/a":
        number = notes.setdefault(cell["reason"], len(notes) + 1)
        return Text(f"n/a ({number})", "dim")
    repeated = cell["repeated_model_calls"]
    if cell["status"] == "pass":
        return Text.assemble(("pass", "green"), f" · {repeated} rep · {cell['seconds']:.0f}s")
    failed = [name for name, problem in cell["checks"].items() if problem is not None]
    return Text.assemble(("FAIL", "bold red"), f" {', '.join(failed)}")


def print_matrix(summary: dict[str, Any], console: Console) -> None:
    columns = [(mode, recovery) for mode in summary["modes"] for recovery in summary["recoveries"]]
    by_key = {(c["point"], c["mode"], c["recovery"]): c for c in summary["cells"]}
    table = Table(
        title=f"docagent crash matrix: {summary['documents']} documents per job, fault at document "
        f"{summary['document_index']}, time scale {summary['time_scale']}",
        caption="cell: status · repeated model calls · seconds",
    )
    table.add_column("fault point", style="bold")
    for mode, recovery in columns:
        table.add_column(f"{mode} · {recovery}")
    notes: dict[str, int] = {}
    for point in summary["points"]:
        row = [Text(point)]
        for mode, recovery in columns:
            cell = by_key.get((point, mode, recovery))
            row.append(Text("not selected", "dim") if cell is None else _cell_text(cell, notes))
        table.add_row(*row)
    console.print(table)
    for reason, number in notes.items():
        console.print(Text.assemble("  ", (f"({number})", "dim"), f" n/a: {reason}"))
    baseline = summary["baseline"]
    console.print(
        f"baseline {baseline['job_id']}: {baseline['status']} ({baseline['final_status']}, "
        f"{baseline['model_calls']} model calls)" + (f": {baseline['reason']}" if baseline["reason"] else "")
    )
    once = summary["at_least_once"]
    if once is not None:
        console.print(
            Text.assemble(
                f"at-least-once (EXPRESS children, document {once['document_index']} delivered twice "
                "at once): ",
                ("pass", "green") if once["status"] == "pass" else ("FAIL", "bold red"),
                f": {once['deliveries']} deliveries, {once['document_model_calls']} model call(s) for the "
                f"document, {once['results']} results, {once['seconds']:.0f}s"
                + (f"; {once['reason']}" if once["reason"] else ""),
            )
        )
    for cell in summary["cells"]:
        if cell["status"] == "fail":
            console.print(
                Text.assemble(
                    ("FAIL", "red"),
                    f" {cell['point']} · {cell['mode']} · {cell['recovery']} (job {cell['job_id']}): "
                    f"{cell['reason']}",
                )
            )
    counts = summary["counts"]
    console.print(
        f"{counts['pass']} passed, {counts['fail']} failed, {counts['n/a']} not applicable; "
        f"{summary['repeated_model_calls']} repeated model calls; {summary['seconds']:.0f} s "
        f"(phases: {summary['phase_seconds']})"
    )
