"""``docagent status`` and ``docagent list``: a job's progress, current state and redrives; the jobs, newest
first."""

from __future__ import annotations

import argparse
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from docagent.operations.context import (
    EXIT_OK,
    OperatorContext,
    RefusedError,
    command,
    emit,
    target_arguments,
)
from docagent.operations.display import iso, wide_console
from docagent.operations.json_shapes import JobSpend
from docagent.operations.progress import (
    Snapshot,
    exit_code_for,
    follow,
    progress_detail,
    snapshot,
    status_label,
)
from docagent.operations.records import JobRecords, check_job_id
from docagent.operations.spend import job_spend, spend_line
from docagent.operations.spend import next_step as budget_next_step

EXECUTION_STATUSES = ("RUNNING", "SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED", "PENDING_REDRIVE")


def register(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    common: argparse.ArgumentParser,
) -> None:
    target = target_arguments()
    status = commands.add_parser(
        "status", parents=[common, target], help="a job's progress, current state and redrives"
    )
    status.add_argument("job_id", metavar="JOB")
    status.add_argument("--watch", action="store_true", help="follow with a live progress bar until it ends")
    status.add_argument("--interval", type=float, default=1.0, help="seconds between refreshes (--watch)")
    status.set_defaults(handler=cmd_status)

    listing = commands.add_parser("list", parents=[common, target], help="jobs, newest first")
    listing.add_argument("--status", choices=EXECUTION_STATUSES, help="only jobs with this status")
    listing.add_argument(
        "--limit", type=positive_int, default=50, help="at most this many jobs, 1 or more (default 50)"
    )
    listing.set_defaults(handler=cmd_list)


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1 (``list --limit 0`` would show nothing, silently)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not 1 or more")
    return value


@command
def cmd_status(args: argparse.Namespace) -> int:
    ctx = OperatorContext.from_args(args)
    records = JobRecords(ctx, args.job_id)
    records.require_execution()
    if args.watch:
        current = follow(records, show=not args.json, interval=max(args.interval, 0.1))
    else:
        current = snapshot(records)
    figures = job_spend(records)
    payload = {**current.as_json(), "spend": figures.model_dump(mode="json")}
    emit(args, payload, lambda: print_snapshot(current, figures))
    return exit_code_for(current.status)


def print_snapshot(current: Snapshot, figures: JobSpend | None = None) -> None:
    out = wide_console()
    documents = current.documents
    colour = {"SUCCEEDED": "green", "RUNNING": "cyan"}.get(current.status, "red")
    table = Table(title=f"job {current.job_id}", show_header=False, title_justify="left")
    table.add_column(style="bold")
    table.add_column()
    table.add_row("status", Text(status_label(current.status), colour))
    table.add_row("current state", current.current_state or "-")
    if current.error:
        table.add_row("error", f"{current.error}: {current.cause or ''}")
    table.add_row(
        "documents",
        ProgressBar(total=max(documents["total"], 1), completed=documents["succeeded"], width=40),
    )
    table.add_row("", progress_detail(current) + f" · {documents['total']} total")
    table.add_row("results stored", str(documents["results_stored"]))
    table.add_row(
        "redrives",
        f"{current.redrive_count}" + (f" (last {iso(current.redrive_date)})" if current.redrive_date else ""),
    )
    table.add_row("started", iso(current.started_at) or "-")
    elapsed = current.elapsed_seconds()
    table.add_row("elapsed", f"{elapsed:.1f} s" if elapsed is not None else "-")
    if figures is not None:
        table.add_row("spend", spend_line(figures))
        if figures.budget_exceeded:
            table.add_row("next", budget_next_step(current.job_id, figures.budget_exceeded))
    if current.approval:
        table.add_row("approval", current.approval)
    review_wait = current.review_wait_line()
    if review_wait:
        table.add_row("review", review_wait)
    table.add_row("execution", current.execution_arn)
    out.print(table)


@command
def cmd_list(args: argparse.Namespace) -> int:
    ctx = OperatorContext.from_args(args)
    states = ctx.client("stepfunctions")
    executions: list[dict[str, Any]] = []
    query: dict[str, Any] = {"stateMachineArn": ctx.state_machine_arn}
    if args.status:
        query["statusFilter"] = args.status
    for page in states.get_paginator("list_executions").paginate(**query):
        executions += page.get("executions", [])
    executions.sort(key=lambda item: str(iso(item.get("startDate")) or ""), reverse=True)
    executions = executions[: max(args.limit, 0)]

    def row(item: dict[str, Any]) -> dict[str, Any]:
        # Executions docagent did not start may have any name (or a generated UUID).
        name = str(item.get("name") or str(item["executionArn"]).rsplit(":", 1)[-1])
        records = JobRecords(ctx, name) if _is_job_id(name) else None
        described = (records.description if records else None) or {}
        counts = records.map_run_counts() if records else None
        documents = counts.get("total") if counts else None
        if documents is None and records is not None and records.manifest is not None:
            documents = records.manifest.count
        return {
            "job_id": name,
            "status": item["status"],
            "documents": documents,
            "started_at": iso(item.get("startDate")),
            "stopped_at": iso(item.get("stopDate")),
            "redrive_count": int(described.get("redriveCount") or item.get("redriveCount") or 0),
            "error": described.get("error"),
        }

    ctx.client("s3")
    with ThreadPoolExecutor(max_workers=8) as pool:
        jobs = list(pool.map(row, executions))
    payload = {"status_filter": args.status, "count": len(jobs), "jobs": jobs}

    def human() -> None:
        table = Table(title=f"jobs on {ctx.where}" + (f" ({args.status})" if args.status else ""))
        for column in ("job", "status", "documents", "started", "redrives", "error"):
            table.add_column(column)
        for job in jobs:
            table.add_row(
                job["job_id"],
                job["status"],
                "-" if job["documents"] is None else str(job["documents"]),
                job["started_at"] or "-",
                str(job["redrive_count"]),
                job["error"] or "",
            )
        wide_console().print(table)

    emit(args, payload, human)
    return EXIT_OK


def _is_job_id(name: str) -> bool:
    try:
        check_job_id(name)
    except RefusedError:
        return False
    return True
