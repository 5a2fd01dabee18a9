"""``docagent logs JOB [--document ID]``: the job's structured log lines from CloudWatch Logs.

Every function logs Powertools JSON lines carrying ``job_id`` (and ``document_id`` in process_document).
The command searches each function's log group (FilterLogEvents), keeps the lines of the job (and
document), and adds the runtime's own lines for the same requests (a crash or a timeout is reported by
the runtime, not by the function: "RequestId: ... Error: Runtime exited with error").
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from botocore.exceptions import ClientError
from rich.table import Table

from docagent.operations.context import (
    EXIT_NOT_FOUND,
    EXIT_OK,
    OperatorContext,
    RefusedError,
    command,
    emit,
    target_arguments,
)
from docagent.operations.display import as_datetime, wide_console
from docagent.operations.records import JobRecords, client_error_code

# Where the local deploy records a function's log group (docagent/localcloud/patches.py LOG_GROUP_TAG).
LOG_GROUP_TAG = "docagent:log-group"
RUNTIME_PHRASES = ("Runtime exited", "Task timed out")
REQUEST_ID = re.compile(r"RequestId: ([0-9a-fA-F-]{8,})")
REPEATED_REQUEST_ID = re.compile(r"^(RequestId: \S+ )\1")
SHOWN_FIELDS = (
    "status",
    "error",
    "fault_point",
    "model_call_id",
    "action",
    "retry_count",
    "redrive_count",
)


def register(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    common: argparse.ArgumentParser,
) -> None:
    logs = commands.add_parser(
        "logs", parents=[common, target_arguments()], help="a job's structured log lines (CloudWatch Logs)"
    )
    logs.add_argument("job_id", metavar="JOB")
    logs.add_argument("--document", help="only this document's lines (its document id)")
    logs.add_argument("--function", help="only this function (e.g. ProcessDocument)")
    logs.add_argument(
        "--limit", type=int, help="at most this many lines, newest kept (default: every line of the job)"
    )
    logs.add_argument(
        "--per-document",
        type=int,
        metavar="N",
        help="at most N lines of each document, newest kept; the job's other lines all kept (default: all)",
    )
    logs.set_defaults(handler=cmd_logs)


def function_log_groups(ctx: OperatorContext) -> dict[str, str]:
    """Short function name (ProcessDocument) -> its log group, for every function of the stack."""
    lambda_client = ctx.client("lambda")

    def group_of(output: str) -> tuple[str, str]:
        name = ctx.outputs[output]
        try:
            function = lambda_client.get_function(FunctionName=name)
        except ClientError:
            return output.removesuffix("FunctionName"), f"/aws/lambda/{name}"
        logging = (function.get("Configuration") or {}).get("LoggingConfig") or {}
        group = logging.get("LogGroup") or (function.get("Tags") or {}).get(LOG_GROUP_TAG)
        return output.removesuffix("FunctionName"), str(group or f"/aws/lambda/{name}")

    outputs = sorted(name for name in ctx.outputs if name.endswith("FunctionName"))
    with ThreadPoolExecutor(max_workers=max(len(outputs), 1)) as pool:
        return dict(pool.map(group_of, outputs))


def _filter(ctx: OperatorContext, group: str, pattern: str, start_ms: int) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    try:
        paginator = ctx.client("logs").get_paginator("filter_log_events")
        for page in paginator.paginate(logGroupName=group, filterPattern=pattern, startTime=start_ms):
            events += page.get("events", [])
    except ClientError as error:
        if client_error_code(error) == "ResourceNotFoundException":
            return []
        raise
    return events


def job_pattern(ctx: OperatorContext, job_id: str, document_id: str | None) -> str:
    """A JSON filter pattern on AWS; the quoted job id for a local cloud (moto matches terms only)."""
    if ctx.endpoint is not None:
        return f'"{document_id or job_id}"'
    if document_id:
        return f'{{ ($.job_id = "{job_id}") && ($.document_id = "{document_id}") }}'
    return f'{{ $.job_id = "{job_id}" }}'


def collect(
    ctx: OperatorContext,
    job_id: str,
    document_id: str | None,
    function: str | None,
    since: dt.datetime | None,
) -> list[dict[str, Any]]:
    groups = function_log_groups(ctx)
    if function:
        wanted = {name: group for name, group in groups.items() if name.lower() == function.lower()}
        if not wanted:
            raise RefusedError(
                "UnknownFunction", f"no function {function!r}: one of {', '.join(sorted(groups))}"
            )
        groups = wanted
    start_ms = int(((since or dt.datetime(1970, 1, 1, tzinfo=dt.UTC)).timestamp() - 60) * 1000)
    pattern = job_pattern(ctx, job_id, document_id)

    def search(item: tuple[str, str]) -> list[dict[str, Any]]:
        name, group = item
        lines = []
        request_ids: set[str] = set()
        for event in _filter(ctx, group, pattern, start_ms):
            record = _json(event.get("message", ""))
            if record is None or record.get("job_id") != job_id:
                continue
            if document_id and record.get("document_id") != document_id:
                continue
            request_ids.add(str(record.get("function_request_id") or ""))
            lines.append(_line(name, group, event, record))
        for phrase in RUNTIME_PHRASES if request_ids else ():
            for event in _filter(ctx, group, f'"{phrase}"', start_ms):
                match = REQUEST_ID.search(event.get("message", ""))
                if match and match.group(1) in request_ids:
                    line = _line(name, group, event, None)
                    line["request_id"] = match.group(1)
                    lines.append(line)
        return lines

    ctx.client("logs")
    with ThreadPoolExecutor(max_workers=max(len(groups), 1)) as pool:
        found = [line for lines in pool.map(search, sorted(groups.items())) for line in lines]
    found.sort(key=lambda line: (line["timestamp_ms"], line["function"]))
    return found


def newest(lines: list[dict[str, Any]], limit: int | None, per_document: int | None) -> list[dict[str, Any]]:
    """The lines kept, oldest first: every line of the job unless a limit is given (each document's newest
    ``per_document`` lines, then the newest ``limit`` lines of those). A job's lines span every page of
    every log group (``collect`` reads them all), so a job of any size is shown whole by default."""
    if per_document is not None and per_document >= 0:
        seen: dict[str, int] = {}
        kept: list[dict[str, Any]] = []
        for line in reversed(lines):
            document = line.get("document_id")
            if document is not None:
                seen[document] = seen.get(document, 0) + 1
                if seen[document] > per_document:
                    continue
            kept.append(line)
        lines = kept[::-1]
    if limit is not None and limit >= 0:  # a negative limit: no limit, as before
        lines = lines[-limit:] if limit > 0 else []
    return lines


def _json(message: str) -> dict[str, Any] | None:
    text = message.strip()
    if not text.startswith("{"):
        return None
    try:
        parsed = json.loads(text)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


def _line(function: str, group: str, event: dict[str, Any], record: dict[str, Any] | None) -> dict[str, Any]:
    timestamp = int(event.get("timestamp") or 0)
    moment = dt.datetime.fromtimestamp(timestamp / 1000, dt.UTC)
    record = record or {}
    return {
        "timestamp": moment.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "timestamp_ms": timestamp,
        "function": function,
        "log_group": group,
        "log_stream": event.get("logStreamName"),
        "level": record.get("level") or "RUNTIME",
        "message": record.get("message") or str(event.get("message", "")).strip(),
        "document_id": record.get("document_id"),
        "request_id": record.get("function_request_id"),
        "record": record or None,
    }


@command
def cmd_logs(args: argparse.Namespace) -> int:
    ctx = OperatorContext.from_args(args)
    records = JobRecords(ctx, args.job_id)
    described = records.require_execution()
    if args.document and records.manifest is not None:
        known = {entry.document_id for entry in records.entries()}
        if args.document not in known:
            raise RefusedError(
                "DocumentNotFound",
                f"job {records.job_id} has no document {args.document!r} "
                f"(its manifest lists {len(known)}: see `docagent inspect {records.job_id} --all`)",
                EXIT_NOT_FOUND,
            )
    since = as_datetime(described.get("startDate"))
    lines = newest(
        collect(ctx, records.job_id, args.document, args.function, since), args.limit, args.per_document
    )
    payload = {
        "job_id": records.job_id,
        "document_id": args.document,
        "function": args.function,
        "count": len(lines),
        "events": lines,
    }

    def human() -> None:
        table = Table(
            title=f"logs of job {records.job_id}" + (f", document {args.document}" if args.document else "")
        )
        for column in ("time", "function", "level", "document", "message"):
            table.add_column(column, overflow="fold")
        for line in lines:
            extras = {
                key: line["record"][key] for key in SHOWN_FIELDS if line["record"] and key in line["record"]
            }
            detail = " ".join(f"{key}={value}" for key, value in extras.items())
            table.add_row(
                line["timestamp"][11:23],
                line["function"],
                line["level"],
                line["document_id"] or "",
                f"{REPEATED_REQUEST_ID.sub(lambda match: match.group(1), line['message'])} {detail}".strip(),
            )
        wide_console().print(table)

    emit(args, payload, human)
    return EXIT_OK
