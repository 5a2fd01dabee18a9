"""The experiment's outputs: the table in Markdown and JSON, and PNG plots (matplotlib, Agg backend)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

JSON_FILE = "experiment.json"
TABLE_FILE = "table.md"
PLOTS = {
    "repeated_work": "repeated-work.png",
    "overhead": "overhead.png",
    "storage": "storage.png",
    "recovery": "recovery.png",
}


def _number(value: Any, digits: int = 2) -> str:
    if value is None:
        return "-"
    if isinstance(value, float) and not value.is_integer():
        return f"{value:.{digits}f}"
    return f"{int(value):,}"


def _pair(row: dict[str, Any], measure: str, digits: int = 2) -> str:
    low, mid = row["min"].get(measure), row["median"].get(measure)
    if low is None:
        return "-"
    return _number(mid, digits) if low == mid else f"{_number(low, digits)} / {_number(mid, digits)}"


def markdown_table(summary: dict[str, Any]) -> str:
    """One row per strategy and kill point; "a / b" is min / median over the repeats where they differ."""
    documents = summary["documents"]
    lines = [
        "| strategy | kill at | repeated model calls | documents re-run | duplicate tickets | complete "
        "| kill → first new progress (s) | kill → end (s) | crash-free job (s) | overhead vs none "
        "| checkpoint bytes / doc | records / doc | recovery |",
        "| --- | ---: | ---: | ---: | ---: | :---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for row in summary["strategies"]:
        kill = "ticket" if row["kill_at"] >= documents else str(row["kill_at"])
        lines.append(
            f"| {row['name']} | {kill} | {_pair(row, 'repeated_model_calls')} "
            f"| {_pair(row, 'repeated_documents')} | {_pair(row, 'duplicate_tickets')} "
            f"| {'yes' if row['complete'] else '**no**'} | {_pair(row, 'recovery_first_progress_seconds')} "
            f"| {_pair(row, 'recovery_seconds')} | {_number(row['crash_free_seconds'])} "
            f"| {_pair(row, 'overhead_ratio')} | {_pair(row, 'storage_bytes_per_document', 0)} "
            f"| {_pair(row, 'checkpoint_records_per_document')} | {row['recovery']} |"
        )
    for failure in summary.get("failures", []):
        lines.append(
            f"\nFAILED: {failure['name']}, {failure['documents']} documents, kill at {failure['kill_at']}: "
            f"{failure['error']}"
        )
    if summary["storage_growth"]:
        lines += [
            "",
            "Checkpoint storage against the job's size (crash-free runs, median):",
            "",
            "| strategy | documents | checkpoint bytes | bytes / document | job (s) |",
            "| --- | ---: | ---: | ---: | ---: |",
        ]
        for row in summary["storage_growth"]:
            lines.append(
                f"| {row['name']} | {row['documents']:,} | {row['storage_bytes']:,} "
                f"| {_number(row['storage_bytes_per_document'], 0)} | {_number(row['job_seconds'])} |"
            )
    return "\n".join(lines) + "\n"


MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "h", "*", "p", "d")


def _style(plt: Any, index: int) -> dict[str, Any]:
    """A distinct colour and marker per strategy (13 strategies: colours alone would repeat)."""
    return {"color": plt.get_cmap("tab10")(index % 10), "marker": MARKERS[index % len(MARKERS)]}


def _log_axis(axis: Any) -> None:
    from matplotlib.ticker import ScalarFormatter  # noqa: PLC0415

    axis.set_major_formatter(ScalarFormatter())


def _repeated_work(plt: Any, summary: dict[str, Any], names: list[str]) -> Any:
    documents = summary["documents"]
    kill_points = sorted({row["kill_at"] for row in summary["strategies"]})
    position = {kill_at: index for index, kill_at in enumerate(kill_points)}
    figure, axes = plt.subplots(figsize=(10, 6))
    for index, name in enumerate(names):
        rows = [row for row in summary["strategies"] if row["name"] == name]
        axes.plot(
            [position[row["kill_at"]] + (index - len(names) / 2) * 0.012 for row in rows],
            [row["repeated_model_calls"] for row in rows],
            label=name,
            linewidth=1.2,
            markersize=6,
            **_style(plt, index),
        )
    axes.set_xticks(
        range(len(kill_points)),
        ["after the ticket" if k >= documents else f"document {k}" for k in kill_points],
    )
    axes.set_yscale("symlog", linthresh=1)
    axes.set_ylim(-0.3, documents * 1.6)
    axes.set_yticks([0, 1, 10, 100, documents])
    _log_axis(axes.yaxis)
    axes.set_xlabel("kill point")
    axes.set_ylabel("repeated model calls (median; symmetric log scale)")
    axes.set_title(f"Work repeated after a SIGKILL, {documents}-document job")
    axes.legend(fontsize=8, ncol=2, loc="center left", bbox_to_anchor=(1.01, 0.5))
    axes.grid(alpha=0.3)
    return figure


def _overhead(plt: Any, summary: dict[str, Any], names: list[str]) -> Any:
    figure, axes = plt.subplots(figsize=(10, 5.5))
    by_name = {row["name"]: row for row in summary["strategies"]}
    values = [by_name[name]["overhead_ratio"] or 0.0 for name in names]
    bars = axes.barh(names, values, color=[_style(plt, i)["color"] for i in range(len(names))])
    axes.bar_label(bars, labels=[f"{value:.2f}x" for value in values], fontsize=8, padding=3)
    if any(value > 0 for value in values):
        axes.set_xscale("log")
        _log_axis(axes.xaxis)
    axes.axvline(1.0, color="grey", linewidth=0.8)
    axes.set_xlabel('crash-free job time relative to "none" (log scale)')
    axes.set_title(f"Checkpoint overhead, crash-free {summary['documents']}-document job (median)")
    axes.invert_yaxis()
    return figure


def _storage(plt: Any, summary: dict[str, Any], names: list[str]) -> Any:
    figure, axes = plt.subplots(figsize=(10, 5.5))
    for index, name in enumerate(names):
        rows = [row for row in summary["storage_growth"] if row["name"] == name and row["storage_bytes"] > 0]
        if rows:
            axes.plot(
                [row["documents"] for row in rows],
                [row["storage_bytes_per_document"] for row in rows],
                label=name,
                **_style(plt, index),
            )
    if summary["storage_growth"]:
        axes.set_xscale("log")
        axes.set_yscale("log")
    axes.set_xlabel("documents in the job (log scale)")
    axes.set_ylabel("checkpoint bytes per document (log scale)")
    axes.set_title('Checkpoint storage against job size (crash-free runs; "none" stores nothing)')
    _log_axis(axes.xaxis)
    axes.legend(fontsize=8, ncol=2)
    axes.grid(alpha=0.3, which="both")
    return figure


def _recovery(plt: Any, summary: dict[str, Any], names: list[str]) -> Any:
    figure, axes = plt.subplots(figsize=(10, 5.5))
    kill_points = sorted({row["kill_at"] for row in summary["strategies"]})
    width = 0.8 / max(1, len(kill_points))
    longest = 0.0
    for offset, kill_at in enumerate(kill_points):
        by_name = {row["name"]: row for row in summary["strategies"] if row["kill_at"] == kill_at}
        positions = [i + offset * width for i in range(len(names))]
        seconds = [by_name[name]["recovery_seconds"] if name in by_name else 0.0 for name in names]
        label = "after the ticket" if kill_at >= summary["documents"] else f"kill at {kill_at}"
        axes.barh(positions, seconds, height=width, label=label)
        longest = max([longest, *seconds])
    axes.set_yticks([i + width * (len(kill_points) - 1) / 2 for i in range(len(names))], names)
    if longest > 0:
        axes.set_xscale("log")
        _log_axis(axes.xaxis)
    axes.set_xlabel("seconds from the kill to the end of the job (median, log scale)")
    axes.set_title("Recovery time")
    axes.invert_yaxis()
    axes.legend(fontsize=8)
    return figure


def plot(summary: dict[str, Any], out_dir: Path) -> list[Path]:
    """The PNG plots, named in PLOTS."""
    import matplotlib  # noqa: PLC0415 (an optional extra, imported only when plotting)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    names = list(dict.fromkeys(row["name"] for row in summary["strategies"]))
    written: list[Path] = []
    for key, draw in (
        ("repeated_work", _repeated_work),
        ("overhead", _overhead),
        ("storage", _storage),
        ("recovery", _recovery),
    ):
        figure = draw(plt, summary, names)
        figure.tight_layout()
        figure.savefig(out_dir / PLOTS[key], dpi=110)
        plt.close(figure)
        written.append(out_dir / PLOTS[key])
    return written


def write_outputs(summary: dict[str, Any], out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / JSON_FILE).write_text(json.dumps(summary, indent=1) + "\n")
    (out_dir / TABLE_FILE).write_text(markdown_table(summary))
    return [out_dir / JSON_FILE, out_dir / TABLE_FILE, *plot(summary, out_dir)]
