"""``docagent chaos``: the crash matrix's command (the worker cells of docagent/drills/chaos/, or with
``--cloud`` the cells that kill the local cloud itself, docagent/drills/cloud_chaos.py), registered next to
its function."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from rich.console import Console
from rich.text import Text

from docagent.drills.commands import JOB_HELP, Commands, console, job_folder_option
from docagent.localcloud.lifecycle import add_model_arguments, model_choice
from docagent.operations.context import EXIT_JOB_FAILED, EXIT_OK, OperatorError, emit

if TYPE_CHECKING:
    from docagent.drills.chaos.outcome import CellOutcome

# Cells run at once: the invoice example's small text documents, and a definition folder's samples (PDFs
# and DOCX files of several pages: at time scale 0.1 a function's 120 s timeout is 12 s, which six jobs
# of real documents at once overran on a 2-core machine, measured 2026-12-01).
CHAOS_PARALLEL, JOB_FOLDER_PARALLEL = 6, 2


def cmd_chaos(args: argparse.Namespace) -> int:
    from docagent.drills.chaos import POINTS, parse_choices, print_matrix, run_chaos, select_cells

    job_folder = job_folder_option(args, "--cloud")
    if args.cloud and (args.model or args.record):
        raise OperatorError("--model and --record are for the worker matrix; leave them out with --cloud")
    if args.cloud:
        from docagent.drills.cloud_chaos import REDUCED_CLOUD_POINTS, print_cloud_cells, run_cloud_chaos

        try:
            points = (
                REDUCED_CLOUD_POINTS if args.reduced else parse_choices(args.points, POINTS, "fault points")
            )
            found = run_cloud_chaos(points, documents=args.documents, time_scale=args.time_scale)
        except ValueError as error:
            raise OperatorError(str(error)) from None
        emit(args, found, lambda: print_cloud_cells(found, Console(markup=False)))
        return EXIT_OK if found["passed"] else EXIT_JOB_FAILED

    try:
        cells = select_cells(args.points, args.modes, args.recoveries, reduced=args.reduced)
        model = model_choice(args)
    except ValueError as error:
        raise OperatorError(str(error)) from None

    def progress(outcome: CellOutcome) -> None:
        colour = {"pass": "green", "fail": "bold red", "n/a": "dim"}[outcome.status]
        timing = "" if outcome.status == "n/a" else f" ({outcome.seconds:.0f} s)"
        where = f"{outcome.point} · {outcome.mode} · {outcome.recovery}"
        console.print(Text.assemble("  ", (outcome.status, colour), f" {where}{timing}"))

    try:
        summary = run_chaos(
            cells,
            documents=args.documents,
            at_least_once=not args.no_at_least_once,
            time_scale=args.time_scale,
            parallel=args.parallel or (JOB_FOLDER_PARALLEL if job_folder is not None else CHAOS_PARALLEL),
            on_cell=None if args.json else progress,
            job_folder=job_folder,
            model=model,
        )
    except ValueError as error:
        raise OperatorError(str(error)) from None
    wide = Console(width=max(Console(markup=False).width, 150), markup=False)
    emit(args, summary, lambda: print_matrix(summary, wide))
    return EXIT_OK if summary["passed"] else EXIT_JOB_FAILED


def add_chaos(commands: Commands, common: argparse.ArgumentParser) -> None:
    chaos = commands.add_parser(
        "chaos",
        parents=[common],
        help="run the crash matrix (fault point x mode x recovery) on the local cloud",
        description="Every fault point x mode x recovery as a small job checked against a crash-free run, "
        "plus EXPRESS at-least-once delivery; exits 1 if any cell fails (docs/crash-matrix.md).",
    )
    chaos.add_argument("--documents", type=int, default=3, help="documents per job (default 3)")
    chaos.add_argument("--points", help="comma-separated fault points (default: all)")
    chaos.add_argument("--modes", help="comma-separated modes: exit,raise,hang (default: all)")
    chaos.add_argument("--recoveries", help="comma-separated recoveries: retry,redrive (default: both)")
    chaos.add_argument("--reduced", action="store_true", help="only the reduced matrix the test suite runs")
    chaos.add_argument(
        "--cloud",
        action="store_true",
        help="kill the local cloud itself (not a worker) at each fault point, restart it, check the job",
    )
    chaos.add_argument(
        "--no-at-least-once", action="store_true", help="skip the EXPRESS at-least-once delivery cell"
    )
    chaos.add_argument("--time-scale", type=float, default=0.1, help="local cloud time scale (default 0.1)")
    chaos.add_argument(
        "--parallel",
        type=int,
        default=None,
        help=f"cells run at once (default {CHAOS_PARALLEL}; {JOB_FOLDER_PARALLEL} with --job, whose real "
        "documents take longer to read at the time scale's shortened function timeouts)",
    )
    chaos.add_argument("--job", metavar="PATH", help=JOB_HELP)
    add_model_arguments(chaos)  # a real model answers the baseline once; the cells replay its replies
    chaos.set_defaults(handler=cmd_chaos)
