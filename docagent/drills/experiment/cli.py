"""The ``docagent experiment`` command: its arguments (cheap to import) and its handler."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console

from docagent import project

console = Console(stderr=True, markup=False)
DEFAULT_OUT = "docs/experiment"
PLOTS_MISSING = (
    "matplotlib is not installed: the plots are skipped, the table is written "
    "(pip install -e '.[experiment]', or `make experiment`)"
)


def plots_available() -> bool:
    """matplotlib (the experiment extra) can be imported."""
    try:
        import matplotlib  # noqa: F401, PLC0415 (an optional extra: only asked whether it is there)
    except ImportError:
        return False
    return True


def add_parser(
    commands: Any, common: argparse.ArgumentParser, handler: Callable[[argparse.Namespace], int]
) -> None:
    experiment = commands.add_parser(
        "experiment",
        parents=[common],
        help="kill the worker at document K under every checkpoint strategy, LangGraph included; "
        "write the table and plots",
        description="The same synthetic job under each checkpoint strategy (none, at exit, async, per "
        "batch, per document, LangGraph loop/fan-out x exit/async/sync), SIGKILLed at each kill point and "
        "recovered, measured against the ground truth and a crash-free run (docs/experiment.md). LangGraph "
        "and the plots need the experiment extra: pip install -e '.[experiment]' (or `make experiment`).",
    )
    experiment.add_argument("--documents", type=int, default=200, help="documents per job (default 200)")
    experiment.add_argument(
        "--kill-at",
        type=int,
        nargs="+",
        default=None,
        metavar="K",
        help="kill points: document indexes, or the job's size for after the ticket (default 138, or 2/3 in)",
    )
    experiment.add_argument(
        "--repeat", type=int, default=3, help="repeats per strategy and kill point (default 3)"
    )
    experiment.add_argument(
        "--strategies", help="comma-separated names (default all; 'langgraph' = every peer)"
    )
    experiment.add_argument(
        "--growth",
        type=int,
        nargs="*",
        default=[2000],
        metavar="N",
        help="also run crash-free jobs of N documents for storage growth (default 2000; none: skip)",
    )
    experiment.add_argument(
        "--cloud-growth",
        action="store_true",
        help="include the local-cloud strategies in the growth runs (slow: minutes per 2,000-document job)",
    )
    experiment.add_argument("--batch-size", type=int, default=10, help="documents per batch for 'per batch'")
    experiment.add_argument(
        "--cloud-recovery",
        choices=["redrive", "retry"],
        default="redrive",
        help="redrive (the demo's): the Lambda worker dies on every attempt until the job is redriven; "
        "retry: it dies once and the child's Retry recovers it",
    )
    experiment.add_argument(
        "--model-latency-ms",
        type=int,
        default=0,
        help="a hosted model's latency: every model call takes this long more (the worker strategies sleep "
        "it, the local cloud's Bedrock answers after it; default 0)",
    )
    experiment.add_argument("--time-scale", type=float, help="local cloud time scale (default: as the demo)")
    experiment.add_argument(
        "--merge",
        nargs="+",
        default=[],
        metavar="JSON",
        help="also aggregate the runs of earlier experiment.json files (a later file's runs of a strategy "
        "replace an earlier one's; strategies run now replace both); without --strategies nothing runs",
    )
    experiment.add_argument("--out", default=DEFAULT_OUT, help=f"output directory (default {DEFAULT_OUT})")
    experiment.add_argument("--no-plots", action="store_true", help="write the table only (no matplotlib)")
    experiment.set_defaults(handler=handler)


def merged_runs(files: list[Path]) -> list[Any]:
    """The runs of earlier experiments; a later file's runs of a strategy replace an earlier file's."""
    from docagent.drills.experiment.measures import Run  # noqa: PLC0415

    runs: list[Run] = []
    for path in files:
        try:
            found = [Run.model_validate(run) for run in json.loads(path.read_text())["runs"]]
        except (OSError, ValueError, KeyError) as error:
            raise ValueError(f"--merge {path}: not an experiment.json ({error})") from None
        replaced = {run.strategy for run in found}
        runs = [run for run in runs if run.strategy not in replaced] + found
    return runs


def _print_table(summary: dict[str, Any]) -> None:
    from docagent.drills.experiment.report import markdown_table  # noqa: PLC0415

    sys.stdout.write(markdown_table(summary) + "\nwrote " + ", ".join(summary["outputs"]) + "\n")


def run_command(args: argparse.Namespace) -> int:
    from docagent.drills.demo_crash import default_crash_index  # noqa: PLC0415
    from docagent.drills.experiment import report  # noqa: PLC0415
    from docagent.drills.experiment.measures import Run  # noqa: PLC0415
    from docagent.drills.experiment.runner import run_experiment  # noqa: PLC0415
    from docagent.operations.context import EXIT_JOB_FAILED, EXIT_OK, OperatorError, emit  # noqa: PLC0415

    kill_points = args.kill_at or [default_crash_index(args.documents)]
    strategies = [name.strip() for name in args.strategies.split(",")] if args.strategies else None
    if args.batch_size < 1:
        raise OperatorError("--batch-size must be at least 1")
    # Said before the runs, not after them: without the extra, only the plots are left out.
    plots_skipped = None if args.no_plots or plots_available() else PLOTS_MISSING
    if plots_skipped and not args.json:
        console.print(f"note: {plots_skipped}", soft_wrap=True)

    def progress(run: Run) -> None:
        where = "crash-free" if run.kill_at is None else f"killed at {run.kill_at}"
        console.print(
            f"  {run.strategy:<24} {run.documents:>5} docs, {where:<15} {run.job_seconds:8.2f} s, "
            f"repeated calls {run.repeated_model_calls}, tickets {run.tickets}, "
            f"{'complete' if run.results == run.documents and run.correct else 'INCOMPLETE'}",
            soft_wrap=True,
        )

    try:
        previous = merged_runs([Path(name) for name in args.merge])
        summary = run_experiment(
            documents=args.documents,
            kill_points=kill_points,
            repeat=args.repeat,
            strategies=strategies,
            growth=[size for size in args.growth if size != args.documents],
            cloud_growth=args.cloud_growth,
            batch_size=args.batch_size,
            recovery=args.cloud_recovery,
            time_scale=args.time_scale,
            latency_ms=args.model_latency_ms,
            previous=previous,
            on_run=None if args.json else progress,
        )
    except ValueError as error:
        raise OperatorError(str(error)) from None
    out_dir = Path(args.out) if Path(args.out).is_absolute() else project.ROOT / args.out
    out_dir.mkdir(parents=True, exist_ok=True)
    summary["plots_skipped"] = plots_skipped
    if args.no_plots or plots_skipped:
        (out_dir / report.JSON_FILE).write_text(json.dumps(summary, indent=1) + "\n")
        (out_dir / report.TABLE_FILE).write_text(report.markdown_table(summary))
        written = [out_dir / report.JSON_FILE, out_dir / report.TABLE_FILE]
    else:
        written = report.write_outputs(summary, out_dir)
    summary["outputs"] = [
        str(path.relative_to(project.ROOT)) if path.is_relative_to(project.ROOT) else str(path)
        for path in written
    ]
    emit(args, summary, lambda: _print_table(summary))
    ok = not summary["failures"] and all(row["complete"] for row in summary["strategies"])
    return EXIT_OK if ok else EXIT_JOB_FAILED
