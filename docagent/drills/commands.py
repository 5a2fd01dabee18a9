"""The drills' commands: ``docagent demo``, ``bench``, ``cost``, ``init`` and ``experiment`` (``chaos`` is
docagent/drills/chaos_command.py), each registered next to its function."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, TypeAlias, get_args

from rich.console import Console

from docagent.localcloud.lifecycle import MODEL_FAULTS_HELP, add_model_arguments, model_choice
from docagent.operations.context import EXIT_JOB_FAILED, EXIT_OK, OperatorError, emit, target_arguments
from functions.payloads.common import FaultPointName

Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
console = Console(stderr=True, markup=False)  # paths, ids and errors print as written
CRASH_POINT = "before_store_result"  # the demo's story: the worker dies before a document's result is stored
JOB_HELP = (
    "a job definition folder (docagent init): run it on its samples instead of the invoice example "
    "(validated, published, its labels and references/*.csv loaded first)"
)


def _model_faults(spec: str | None) -> Any:
    """``--model-faults SPEC`` for the local Bedrock, None without it (ValueError for a bad spec)."""
    from docagent.localcloud.bedrock.model_faults import parse_model_faults

    return parse_model_faults(spec) if spec else None


def job_folder_option(args: argparse.Namespace, unsupported: str) -> Any:
    """``--job PATH``: the definition folder (validated; its samples are the job's documents), or None."""
    if not args.job:
        return None
    if getattr(args, unsupported.removeprefix("--").replace("-", "_")):
        raise OperatorError(f"{unsupported} runs the invoice example only; leave out --job or {unsupported}")
    from docagent.drills.job_folder import JobFolder

    try:
        folder = JobFolder.read(args.job)
    except ValueError as error:
        raise OperatorError(str(error)) from None
    args.documents = len(folder.documents)
    return folder


# ---- demo ----


def cmd_demo(args: argparse.Namespace) -> int:
    from docagent.drills.demo import run_demo
    from docagent.drills.demo_cloud import default_time_scale
    from docagent.drills.demo_crash import Crash, default_crash_index

    job_folder = job_folder_option(args, "--crash-cloud")
    if args.crash_cloud:
        from docagent.drills.cloud_crash import run_cloud_crash_demo

        if args.documents < 1:
            raise OperatorError("--documents must be at least 1")
        index = default_crash_index(args.documents) if args.crash_at is None else args.crash_at
        if not 0 <= index < args.documents:
            raise OperatorError(f"--crash-at must be a document index from 0 to {args.documents - 1}")
        time_scale = args.time_scale or default_time_scale(args.documents)
        summary = run_cloud_crash_demo(args.documents, time_scale, index, show_progress=not args.json)
        emit(args, summary, lambda: _print_summary(summary))
        return EXIT_OK if summary["status"] == "SUCCEEDED" and summary["verified"] else EXIT_JOB_FAILED
    from docagent.drills.document_files import parse_formats

    crash = None
    # With --model-faults the story is the model's (throttling ridden out by Retry): no crash unless asked.
    asked = args.crash_at is not None or args.crash_mode is not None or args.crash_point != CRASH_POINT
    if not args.no_crash and (asked or not args.model_faults):
        index = default_crash_index(args.documents) if args.crash_at is None else args.crash_at
        crash = Crash(document_index=index, mode=args.crash_mode or "redrive", point=args.crash_point)
    try:
        summary = run_demo(
            documents=args.documents,
            time_scale=args.time_scale,
            show_progress=not args.json,
            crash=crash,
            keep=args.keep,
            persist=not args.no_persistence,
            model_faults=_model_faults(args.model_faults),
            formats=parse_formats(args.formats),
            documents_per_child=args.documents_per_child,
            batch_records_per_job=args.batch_records_per_job,
            job_folder=job_folder,
            demo_budget=_demo_budget(args),
            inference=args.inference,
            model=model_choice(args),
        )
    except ValueError as error:
        raise OperatorError(str(error)) from None
    emit(args, summary, lambda: _print_summary(summary))
    if summary.get("kept") and not args.json:
        kept = summary["kept"]
        console.print(
            f"The local cloud stays up at {kept['endpoint']} (pid {kept['pid']}) "
            f"with job {summary['job_id']}: "
            "explore it with\n  "
            + "\n  ".join(kept["commands"][:-1])
            + f"\nand stop it with `{kept['commands'][-1]}`."
        )
    return EXIT_OK if summary["status"] == "SUCCEEDED" and summary["verified"] else EXIT_JOB_FAILED


def _print_summary(summary: dict[str, Any]) -> None:
    from rich.table import Table

    table = Table(title=f"docagent demo: job {summary['job_id']}", show_header=False)
    for key, value in summary.items():
        if key == "kept":
            continue
        shown = value
        if key == "alerts":
            shown = [f"{alert['status']} at {alert['time']} to {alert['topic_arn']}" for alert in value]
        table.add_row(key.replace("_", " "), _readable(shown))
    Console(markup=False).print(table)


def _readable(value: Any) -> str:
    """One line for a table cell: nested records as `key value` pairs, lists comma-separated."""
    if isinstance(value, dict):
        return ", ".join(f"{key.replace('_', ' ')} {_readable(item)}" for key, item in value.items())
    if isinstance(value, list):
        return ", ".join(_readable(item) for item in value) or "none"
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def add_demo(commands: Commands, common: argparse.ArgumentParser) -> None:
    demo = commands.add_parser("demo", parents=[common], help="run the main job on the local cloud")
    demo.add_argument("--documents", type=int, default=200)
    demo.add_argument(
        "--time-scale",
        type=float,
        help="default 0.125 up to 500 documents (a 120 s function timeout lasts 15 s: room for a busy "
        "machine), 0.05 per 200 documents beyond (up to 1)",
    )
    demo.add_argument(
        "--crash-at",
        type=int,
        help="index (from 0) of the document whose worker dies (default: 138 in a job of more than 138 "
        "documents, else two thirds of the way through: 5 of 8, 2 of 3)",
    )
    demo.add_argument(
        "--crash-mode",
        choices=["redrive", "transient"],
        help="(default redrive) redrive: the worker dies on every attempt until the job is redriven; "
        "transient: only the first attempt dies and Retry recovers it",
    )
    demo.add_argument(
        "--crash-point",
        choices=get_args(FaultPointName),
        default=CRASH_POINT,
        help=f"(default {CRASH_POINT}) where the worker dies (functions/durability/fault_points.py); "
        "after_batch_submit "
        "(with --inference batch): after Bedrock created the batch job, before it is recorded",
    )
    demo.add_argument("--no-crash", action="store_true", help="run the job without a fault")
    demo.add_argument(
        "--keep",
        action="store_true",
        help="leave the local cloud up with the job in it (inspect, logs, trace work; local down stops it)",
    )
    demo.add_argument(
        "--no-persistence",
        action="store_true",
        help="keep the local cloud's state in memory only",
    )
    demo.add_argument(
        "--crash-cloud",
        action="store_true",
        help="kill -9 the local cloud itself (and its workers) at the crash document, restart it, finish",
    )
    demo.add_argument("--model-faults", metavar="SPEC", help=MODEL_FAULTS_HELP)
    add_model_arguments(demo)
    demo.add_argument(
        "--max-cost-usd",
        type=float,
        help="the job's budget in US dollars: the job stops with BudgetExceeded before passing it",
    )
    demo.add_argument(
        "--then-max-cost-usd",
        type=float,
        help="after the budget stopped the job: raise it to this (docagent budget) and redrive",
    )
    demo.add_argument(
        "--formats",
        default="pdf,docx,html,txt,md",
        help="document formats of the corpus, in the default mix renormalised over them "
        "(pdf 50%%, docx 20%%, html 15%%, txt 8%%, md 7%%; xlsx, scan (a scanned PDF) and photo (a phone "
        "photo, JPEG) 10%% each only when named)",
    )
    demo.add_argument(
        "--documents-per-child",
        type=int,
        default=1,
        help="documents per Distributed Map child (ItemBatcher; default 1)",
    )
    demo.add_argument(
        "--inference",
        choices=["on_demand", "batch", "auto"],
        default="on_demand",
        help="the job's model calls: on_demand (one Converse call a document), batch (Bedrock batch "
        "inference jobs: about half the price) or auto (batch from its minimum of records); docs/batch.md",
    )
    demo.add_argument(
        "--batch-records-per-job",
        type=int,
        help="records per Bedrock batch job the deployment assumes (the config's batch_records_per_job, "
        "default 50,000): lower it to see a job split into several batch jobs",
    )
    demo.add_argument("--job", metavar="PATH", help=JOB_HELP)
    demo.set_defaults(handler=cmd_demo)


# ---- bench ----


def cmd_bench(args: argparse.Namespace) -> int:
    from docagent.drills.benchmarks import print_figures, run_benchmarks

    if args.documents_per_child < 1:
        raise OperatorError("--documents-per-child must be at least 1")
    if args.fan_in is not None:
        return _bench_fan_in(args)
    if args.profile is not None:
        return _bench_profile(args)
    try:
        figures = run_benchmarks(
            args.documents, args.time_scale, documents_per_child=args.documents_per_child
        )
    except ValueError as error:
        raise OperatorError(str(error)) from None
    emit(args, figures, lambda: print_figures(figures, Console(markup=False)))
    return EXIT_OK


def _bench_profile(args: argparse.Namespace) -> int:
    from docagent.drills.benchmarks import print_profile, profile_demo

    figures = profile_demo(args.profile, args.documents[0] if args.documents else 200, args.time_scale)
    emit(args, figures, lambda: print_profile(figures, Console(markup=False)))
    return EXIT_OK


def _bench_fan_in(args: argparse.Namespace) -> int:
    from docagent.drills.fan_in_bench import print_fan_in, run_fan_in_bench

    if args.fan_in < 10:
        raise OperatorError("--fan-in needs at least 10 documents (it measures N and N / 10)")
    progress = Console(markup=False, stderr=True)  # stderr: --json's stdout stays one object
    figures = run_fan_in_bench(args.fan_in, time_scale=args.time_scale or 1.0, say=progress.print)
    emit(args, figures, lambda: print_fan_in(figures, Console(markup=False)))
    return EXIT_OK


def add_bench(commands: Commands, common: argparse.ArgumentParser) -> None:
    bench = commands.add_parser("bench", parents=[common], help="print the local cloud's speed figures")
    bench.add_argument("--documents", type=int, nargs="*", default=[200], help="demo sizes to time")
    bench.add_argument("--time-scale", type=float, help="as for demo (default: by job size)")
    bench.add_argument(
        "--documents-per-child",
        type=int,
        default=1,
        help="documents per Distributed Map child (ItemBatcher; default 1)",
    )
    bench.add_argument(
        "--fan-in",
        type=int,
        metavar="N",
        help="instead: the report's and verification's fan-in on a synthetic finished job of N documents, "
        "beside N / 10 (docs/scale.md)",
    )
    bench.add_argument(
        "--profile",
        type=Path,
        metavar="DIR",
        help="instead: profile one clean demo job (the first --documents size) and print where its CPU went, "
        "by thread, request type and worker step; the profiles are kept in DIR (docs/performance.md)",
    )
    bench.set_defaults(handler=cmd_bench)


# ---- cost ----


def cmd_cost(args: argparse.Namespace) -> int:
    from docagent.drills.cost import cost_report, deployed_config, measure
    from docagent.drills.job_estimate import load_usage

    if args.documents < 1:
        raise OperatorError("--documents must be at least 1")
    config = deployed_config()
    if args.from_job:
        return _cost_from_job(args, config)
    model = load_usage(args.usage) or measure()
    documents_per_child = args.documents_per_child or config.documents_per_child
    if documents_per_child < 1:
        raise OperatorError("--documents-per-child must be at least 1")
    try:
        report = cost_report(args.documents, model.batched(documents_per_child), config)
    except LookupError as error:
        raise OperatorError(str(error)) from None
    if args.save_usage:
        Path(args.save_usage).write_text(json.dumps(model.to_json(), indent=2))
    emit(args, report, lambda: _print_cost(report))
    return EXIT_OK


def _cost_from_job(args: argparse.Namespace, config: Any) -> int:
    """``cost --from-job JOB``: the job's actual model cost beside the estimate (drills/cost_from_job.py)."""
    from docagent.drills.cost_from_job import compare
    from docagent.operations.context import OperatorContext
    from docagent.operations.records import JobRecords

    report = compare(JobRecords(OperatorContext.from_args(args), args.from_job), config)

    def human() -> None:
        estimate, actual = report["estimate"], report["actual"]
        console.print(
            f"job {report['job_id']} ({report['status']}, {report['documents']} documents): model cost "
            f"${actual['model_cost_usd']:.4f} actual ({actual['model_calls']} calls, "
            f"{actual['input_tokens']} input and {actual['output_tokens']} output tokens) against "
            f"${estimate['model_cost_usd']:.4f} estimated; as batch inference ${actual['batch_usd']:.4f} "
            f"(prices as of {report['prices_as_of']})"
        )

    emit(args, report, human)
    return EXIT_OK


def _demo_budget(args: argparse.Namespace) -> Any:
    """--max-cost-usd B [--then-max-cost-usd N] (docagent/drills/budget_demo.py), or None."""
    from docagent.drills.budget_demo import DemoBudget

    if args.max_cost_usd is None:
        if args.then_max_cost_usd is not None:
            raise OperatorError("--then-max-cost-usd needs --max-cost-usd")
        return None
    for value in (args.max_cost_usd, args.then_max_cost_usd):
        if value is not None and not value > 0:
            raise OperatorError(f"a budget must be more than 0 US dollars, not {value}")
    return DemoBudget(args.max_cost_usd, args.then_max_cost_usd)


def _print_cost(report: dict[str, Any]) -> None:
    from rich.table import Table

    table = Table(
        title=f"docagent cost: {report['documents']:,} documents (prices as of {report['prices_as_of']})"
    )
    for column in ("service", "per 1,000 documents", "this job", "what"):
        table.add_column(column, justify="left" if column in ("service", "what") else "right")
    for service, figures in report["by_service"].items():
        what = ", ".join(
            f"{name} {value:,}" if isinstance(value, (int, float)) else f"{name} {value}"
            for name, value in figures.items()
            if name not in ("usd", "per_1000_usd")
        )
        table.add_row(service, f"${figures['per_1000_usd']:,.4f}", f"${figures['usd']:,.2f}", what)
    table.add_row("total", f"${report['per_1000_usd']:,.4f}", f"${report['total_usd']:,.2f}", "")
    Console(markup=False).print(table)
    pages = ", ".join(
        f"{mode} {figures['input_tokens']:,} tokens (${figures['usd_per_1000_pages']:,.2f} per 1,000 pages)"
        for mode, figures in report["per_page"].items()
    )
    Console(markup=False).print(
        f"a page read as {pages} (functions/reading/pdf_layers.py, functions/reading/images.py)"
    )
    modes = report["inference"]
    batch = "n/a" if modes["batch_usd"] is None else f"${modes['batch_usd']:,.2f}"
    Console(markup=False).print(
        f"on-demand ${modes['on_demand_usd']:,.2f}, batch inference {batch}: {modes['verdict']} "
        "(docs/batch.md)"
    )


def add_cost(commands: Commands, common: argparse.ArgumentParser) -> None:
    cost = commands.add_parser(
        "cost",
        parents=[common, target_arguments()],
        help="what a job of N documents costs on AWS",
        description="Runs two small clean jobs on the local cloud, counts their requests by service and "
        "operation, and prices a job of N documents with the dated table in docagent/drills/prices.py.",
    )
    cost.add_argument("--documents", type=int, default=1000, help="job size to price (default 1000)")
    cost.add_argument(
        "--documents-per-child",
        type=int,
        help="documents per Distributed Map child to price (default: the config's documents_per_child)",
    )
    cost.add_argument("--usage", help="price a usage measurement saved by --save-usage instead of measuring")
    cost.add_argument("--save-usage", help="write the measured usage per document and per job to this file")
    cost.add_argument(
        "--from-job",
        metavar="JOB",
        help="compare a job's actual model cost (its journal) with the estimate for its size",
    )
    cost.set_defaults(handler=cmd_cost)


# ---- init ----


def cmd_init(args: argparse.Namespace) -> int:
    from docagent.drills.scaffold import ScaffoldRefused, scaffold

    try:
        written = scaffold(args.target)
    except ScaffoldRefused as error:
        raise OperatorError(str(error)) from None

    def human() -> None:
        console.print(
            f"wrote {written['folder']}: job.json, classes/, {len(written['samples'])} samples, README.md"
        )
        console.print("next:\n  " + "\n  ".join(written["next"]))

    emit(args, written, human)
    return EXIT_OK


def add_init(commands: Commands, common: argparse.ArgumentParser) -> None:
    init = commands.add_parser(
        "init", parents=[common], help="scaffold a job definition folder that runs as it is (demo --job)"
    )
    init.add_argument("target", metavar="NAME|PATH", help="a new or empty folder; its name is the job's")
    init.set_defaults(handler=cmd_init)


# ---- experiment (docagent/drills/experiment/cli.py) ----


def add_experiment(commands: Commands, common: argparse.ArgumentParser) -> None:
    from docagent.drills.experiment.cli import add_parser, run_command

    add_parser(commands, common, run_command)
