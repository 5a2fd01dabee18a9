"""``docagent trace JOB [--document D] [--json]``: the job's one trace, job → document → step → model call.

Spans are the ``span start``/``span end`` log lines every durable boundary writes (functions/spans.py), read
from the functions' CloudWatch Logs (on AWS and on the local cloud alike), paired by span id. A start with no
end is an attempt that never finished: ``killed`` when the runtime reported its invocation dead ("Runtime
exited", "Task timed out"), else ``unfinished`` (still running, or its lines not delivered yet). The job's own
events (started, failed, redriven, succeeded) come from the execution history, the documents from the job's
items file, so a boundary that was never reached is listed as ``not reached``. On AWS the X-Ray traces of the
job (``annotation.job_id``) are listed too: Distributed Map children are traces of their own in X-Ray, and the
trace id derived from the job id (``trace_id``) is what joins them here.
"""

from __future__ import annotations

import argparse
import datetime as dt
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from rich.text import Text
from rich.tree import Tree

from docagent.operations import logs as job_logs
from docagent.operations.context import (
    EXIT_NOT_FOUND,
    OperatorContext,
    RefusedError,
    command,
    emit,
    target_arguments,
)
from docagent.operations.display import as_datetime, iso, wide_console
from docagent.operations.progress import exit_code_for
from docagent.operations.records import JobRecords
from docagent.operations.step_records import MODEL_STEPS, document_steps
from functions.definition.job_spec import DefinitionBundle
from functions.spans import SPAN_END, SPAN_START, trace_id_for

JOB_STEPS = ("prepare", "report", "actions", "verify")
# A document's spans in a job prepared before job definitions (trace_steps: a definition's).
DOCUMENT_STEPS = ("extract", "model_call", "customer_lookup", "store")
JOB_EVENTS = {
    "ExecutionStarted",
    "ExecutionFailed",
    "ExecutionTimedOut",
    "ExecutionAborted",
    "ExecutionRedriven",
    "ExecutionSucceeded",
    "MapRunStarted",
    "MapRunFailed",
    "MapRunRedriven",
    "MapRunSucceeded",
}
# GetTraceSummaries is asked for windows of at most 6 hours (as of 2026-11, AWS X-Ray API reference:
# the time range of one request is limited); a job's window is split into such slices.
XRAY_WINDOW = dt.timedelta(hours=6)


def register(
    commands: argparse._SubParsersAction,  # type: ignore[type-arg]
    common: argparse.ArgumentParser,
) -> None:
    trace = commands.add_parser(
        "trace",
        parents=[common, target_arguments()],
        help="a job's trace: job → document → step → model call, with killed attempts and redrives",
    )
    trace.add_argument("job_id", metavar="JOB")
    trace.add_argument("--document", help="only this document (its document id)")
    trace.add_argument("--all", action="store_true", help="every document in the human view (--json has all)")
    trace.set_defaults(handler=cmd_trace)


# ------------------------------------------------------------------------------------------- reading


def span_lines(ctx: OperatorContext, job_id: str, since: dt.datetime | None) -> list[dict[str, Any]]:
    """The job's log lines that are spans, and the runtime's lines about their requests."""
    return job_logs.collect(ctx, job_id, None, None, since)


def xray_trace_ids(
    ctx: OperatorContext, job_id: str, start: dt.datetime, end: dt.datetime
) -> dict[str, Any] | None:
    """The X-Ray traces annotated with the job id (AWS only: the local cloud has no X-Ray)."""
    if ctx.endpoint is not None:
        return None
    expression = f'annotation.job_id = "{job_id}"'
    client = ctx.client("xray")
    found: list[str] = []
    slice_start = start
    while slice_start < end:
        slice_end = min(slice_start + XRAY_WINDOW, end)
        paginator = client.get_paginator("get_trace_summaries")
        for page in paginator.paginate(
            StartTime=slice_start, EndTime=slice_end, FilterExpression=expression, TimeRangeType="Event"
        ):
            found += [str(summary["Id"]) for summary in page.get("TraceSummaries", [])]
        slice_start = slice_end
    return {"filter_expression": expression, "trace_ids": sorted(set(found))}


# ------------------------------------------------------------------------------------------ building


def pair_spans(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One span per span id, from its start and end lines; unended ones are killed or unfinished."""
    dead_requests = {
        str(line["request_id"]) for line in lines if line.get("record") is None and line.get("request_id")
    }
    starts: dict[str, dict[str, Any]] = {}
    ends: dict[str, dict[str, Any]] = {}
    for line in lines:
        record = line.get("record") or {}
        if record.get("message") == SPAN_START:
            starts[str(record["span_id"])] = line
        elif record.get("message") == SPAN_END:
            ends[str(record["span_id"])] = line
    spans = []
    for span_id, start_line in starts.items():
        start = start_line["record"]
        end = (ends.get(span_id) or {}).get("record")
        request_id = start_line.get("request_id")
        if end is not None:
            status = "completed" if end.get("status") == "OK" else "failed"
        else:
            status = "killed" if request_id in dead_requests else "unfinished"
        spans.append(
            {
                "name": start["span_name"],
                "step": start["step"],
                "job_id": start["job_id"],
                "document_id": start.get("document_id"),
                "attempt": int(start.get("attempt") or 0),
                "redrive_count": int(start.get("redrive_count") or 0),
                "trace_id": start["trace_id"],
                "span_id": span_id,
                "parent_span_id": start.get("parent_span_id"),
                "function": start_line.get("function"),
                "request_id": request_id,
                "start_time_unix_nano": start.get("start_time_unix_nano"),
                "end_time_unix_nano": (end or {}).get("end_time_unix_nano"),
                "duration_ms": (end or {}).get("duration_ms"),
                "status": status,
                "outcome": (end or {}).get("outcome") or ("killed" if status == "killed" else None),
                "error": (end or {}).get("error"),
                "attributes": (end or {}).get("attributes") or start.get("attributes") or {},
                "links": start.get("links") or [],
                "children": [],
            }
        )
    spans.sort(key=lambda span: (span["start_time_unix_nano"] or 0, span["span_id"]))
    return spans


def nest(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Roots (spans without a parent among these), each with its children nested."""
    by_id = {span["span_id"]: span for span in spans}
    roots = []
    for span in spans:
        parent = by_id.get(span["parent_span_id"] or "")
        if parent is None:
            roots.append(span)
        else:
            parent["children"].append(span)
    return roots


def _walk(span: dict[str, Any]) -> list[dict[str, Any]]:
    return [span, *(child for inner in span["children"] for child in _walk(inner))]


def trace_steps(bundle: DefinitionBundle | None) -> tuple[str, ...]:
    """The spans a document's attempt goes through, in order: its durable steps (records.document_steps)
    with the model call after the model steps, then the store."""
    steps = document_steps(bundle)
    model = max(index for index, step in enumerate(steps) if step in MODEL_STEPS)
    return (*steps[: model + 1], "model_call", *steps[model + 1 :], "store")


def document_entry(
    entry: dict[str, Any], attempts: list[dict[str, Any]], steps: Sequence[str] = DOCUMENT_STEPS
) -> dict[str, Any]:
    """A document's attempts (root spans) with what each reached; ``steps`` never entered are ``not
    reached``."""
    killed = [attempt for attempt in attempts if attempt["status"] in {"killed", "unfinished"}]
    completed = [attempt for attempt in attempts if attempt["status"] == "completed"]
    last = attempts[-1] if attempts else None
    # A step a later attempt skipped because an earlier one completed it durably was reached all the same.
    reached = {span["step"] for attempt in attempts for span in _walk(attempt)}
    status = "not reached" if last is None else ("completed" if completed else last["status"])
    index = entry.get("index")
    if index is None and attempts:
        index = attempts[0]["attributes"].get("document_index")
    model_calls = [span for attempt in attempts for span in _walk(attempt) if span["step"] == "model_call"]
    return {
        "document_id": entry["document_id"],
        "index": index,
        "status": status,
        "outcome": completed[-1]["outcome"] if completed else None,
        "attempts": len(attempts),
        "killed_attempts": sum(attempt["status"] == "killed" for attempt in killed),
        "unfinished_attempts": sum(attempt["status"] == "unfinished" for attempt in killed),
        "redriven": any(attempt["redrive_count"] > 0 for attempt in attempts),
        "completed_after_redrive": bool(completed and completed[-1]["redrive_count"] > 0),
        "model_calls": sum(call["outcome"] != "replayed" for call in model_calls),
        "model_calls_replayed": sum(call["outcome"] == "replayed" for call in model_calls),
        "not_reached": [] if completed else [step for step in steps if step not in reached],
        "spans": attempts,
    }


def build_trace(
    job_id: str,
    description: dict[str, Any],
    history: list[dict[str, Any]],
    items: list[dict[str, Any]],
    lines: list[dict[str, Any]],
    *,
    xray: dict[str, Any] | None = None,
    document_id: str | None = None,
    document_spans: Sequence[str] = DOCUMENT_STEPS,
) -> dict[str, Any]:
    spans = [span for span in pair_spans(lines) if span["job_id"] == job_id]
    roots = nest(spans)
    by_document: dict[str, list[dict[str, Any]]] = defaultdict(list)
    job_steps: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for root in roots:
        if root["step"] == "document" and root["document_id"]:
            by_document[str(root["document_id"])].append(root)
        else:
            job_steps[root["step"]].append(root)
    entries = items or [{"document_id": doc, "index": None} for doc in sorted(by_document)]
    documents = [
        document_entry(entry, by_document.get(str(entry["document_id"]), []), document_spans)
        for entry in entries
        if document_id is None or entry["document_id"] == document_id
    ]
    steps = []
    for step in JOB_STEPS:
        attempts = job_steps.get(step, [])
        finished = [attempt for attempt in attempts if attempt["status"] == "completed"]
        steps.append(
            {
                "step": step,
                "status": "not reached"
                if not attempts
                else ("completed" if finished else attempts[-1]["status"]),
                "attempts": len(attempts),
                "killed_attempts": sum(attempt["status"] == "killed" for attempt in attempts),
                "spans": attempts,
            }
        )
    events = []
    for event in history:
        kind = str(event.get("type", ""))
        if kind not in JOB_EVENTS:
            continue
        details: dict[str, Any] = (
            next((value for key, value in event.items() if key.endswith("EventDetails")), {}) or {}
        )
        events.append(
            {
                "type": kind,
                "timestamp": iso(event.get("timestamp")),
                "error": details.get("error"),
                "cause": details.get("cause"),
            }
        )
    counts: dict[str, int] = defaultdict(int)
    for document in documents:
        counts[document["status"]] += 1
    return {
        "job_id": job_id,
        "trace_id": trace_id_for(job_id),
        "execution_arn": description.get("executionArn"),
        "status": description.get("status"),
        "started_at": iso(description.get("startDate")),
        "stopped_at": iso(description.get("stopDate")),
        "redrive_count": int(description.get("redriveCount") or 0),
        "document_id": document_id,
        "events": events,
        "steps": steps,
        "documents": documents,
        "counts": dict(counts),
        "killed_attempts": sum(doc["killed_attempts"] for doc in documents)
        + sum(step["killed_attempts"] for step in steps),
        "spans": len(spans),
        "xray": xray,
    }


# ------------------------------------------------------------------------------------------- command


@command
def cmd_trace(args: argparse.Namespace) -> int:
    ctx = OperatorContext.from_args(args)
    records = JobRecords(ctx, args.job_id)
    described = records.require_execution()
    started = as_datetime(described.get("startDate"))
    items = [entry.model_dump(mode="json") for entry in records.entries()]
    if args.document and items and args.document not in {item["document_id"] for item in items}:
        raise RefusedError(
            "DocumentNotFound", f"job {records.job_id} has no document {args.document!r}", EXIT_NOT_FOUND
        )
    lines = span_lines(ctx, records.job_id, started)
    stopped = as_datetime(described.get("stopDate")) or dt.datetime.now(dt.UTC)
    xray = None
    if started is not None:
        xray = xray_trace_ids(ctx, records.job_id, started - dt.timedelta(minutes=5), stopped)
    trace = build_trace(
        records.job_id,
        described,
        records.history,
        items,
        lines,
        xray=xray,
        document_id=args.document,
        document_spans=trace_steps(records.bundle),
    )
    emit(args, trace, lambda: print_trace(trace, show_all=args.all or bool(args.document)))
    return exit_code_for(str(described.get("status")))


def _label(span: dict[str, Any]) -> Text:
    colour = {"completed": "green", "killed": "bold red", "failed": "red", "unfinished": "yellow"}
    status = span["status"]
    duration = f" {span['duration_ms']:.0f} ms" if span.get("duration_ms") is not None else ""
    outcome = f" → {span['outcome']}" if span.get("outcome") and span["outcome"] != "killed" else ""
    attempt = f" attempt {span['attempt']}" + (
        f" · redrive {span['redrive_count']}" if span["redrive_count"] else ""
    )
    genai = span["attributes"]
    model = ""
    if span["step"] == "model_call" and "gen_ai.request.model" in genai:
        model = (
            f" {genai['gen_ai.request.model']} in {genai.get('gen_ai.usage.input_tokens')} / "
            f"out {genai.get('gen_ai.usage.output_tokens')} tokens"
        )
    where = attempt if span["parent_span_id"] is None else ""
    if span["attributes"].get("durable_record_reused"):
        model += " (its durable record: not run again)"
    return Text.assemble(
        f"{span['name']}{where}: ",
        (status, colour.get(status, "white")),
        f"{duration}{outcome}",
        (model, "dim"),
    )


def _add(tree: Tree, span: dict[str, Any]) -> None:
    branch = tree.add(_label(span))
    for child in span["children"]:
        _add(branch, child)


def print_trace(trace: dict[str, Any], *, show_all: bool) -> None:
    root = Tree(
        Text.assemble(
            (f"job {trace['job_id']}", "bold"),
            f" {trace['status']} · trace {trace['trace_id']} · "
            f"redrives {trace['redrive_count']} · {trace['spans']} spans",
        )
    )
    events = root.add("execution")
    for event in trace["events"]:
        error = f" {event['error']}" if event.get("error") else ""
        events.add(f"{event['timestamp']} {event['type']}{error}")
    for step in trace["steps"][:1]:
        _job_step(root, step)
    documents = trace["documents"]
    shown = [doc for doc in documents if show_all or doc["status"] != "completed" or doc["attempts"] > 1]
    counts = ", ".join(f"{count} {status}" for status, count in sorted(trace["counts"].items()))
    branch = root.add(f"documents: {len(documents)} ({counts}); {len(shown)} shown")
    for doc in shown:
        extra = f", {doc['killed_attempts']} killed" if doc["killed_attempts"] else ""
        redriven = ", completed after the redrive" if doc["completed_after_redrive"] else ""
        node = branch.add(
            f"document {doc['document_id']} (#{doc['index']}): {doc['status']}"
            f"{' → ' + doc['outcome'] if doc['outcome'] else ''} · {doc['attempts']} attempts"
            f"{extra}{redriven}"
        )
        for attempt in doc["spans"]:
            _add(node, attempt)
        if doc["status"] != "completed" and doc["not_reached"]:
            node.add(Text(f"not reached: {', '.join(doc['not_reached'])}", "dim"))
    for step in trace["steps"][1:]:
        _job_step(root, step)
    if trace.get("xray"):
        root.add(
            f"X-Ray: {len(trace['xray']['trace_ids'])} traces where {trace['xray']['filter_expression']}"
        )
    wide_console().print(root)


def _job_step(root: Tree, step: dict[str, Any]) -> None:
    if not step["spans"]:
        root.add(Text.assemble(f"{step['step']}: ", ("not reached", "dim")))
        return
    node = root.add(f"{step['step']}: {step['status']} · {step['attempts']} attempts")
    for span in step["spans"]:
        _add(node, span)
