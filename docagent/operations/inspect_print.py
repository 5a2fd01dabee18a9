"""``docagent inspect``'s human output: the recovery report as a header, the states, the documents, the
external effects and what to do next."""

from __future__ import annotations

import re
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from docagent.operations.display import compress_ids, wide_console
from docagent.operations.json_shapes import JobSpend
from docagent.operations.spend import spend_line

RUNTIME_PREFIX = re.compile(r"^RequestId: \S+ (Error: )?")


def flow_text(states: list[str], conditional: list[str]) -> str:
    marked = [f"{name} (if chosen)" if name in conditional else name for name in states]
    return " → ".join(marked) or "-"


def short_cause(cause: str | None) -> str:
    """A Lambda crash's cause without its request id: 'Runtime exited with error: exit status 137'."""
    return RUNTIME_PREFIX.sub("", cause or "")


def print_report(report: dict[str, Any], *, show_all: bool = False) -> None:
    out = wide_console()
    _print_header(out, report)
    _print_states(out, report)
    _print_documents(out, report, show_all)
    _print_effects(out, report)
    _print_recovery(out, report)


def _print_header(out: Console, report: dict[str, Any]) -> None:
    execution = report["execution"]
    colour = {"SUCCEEDED": "green", "RUNNING": "cyan"}.get(execution["status"], "red")
    out.print(
        Text.assemble(
            (f"Recovery report: job {report['job_id']}", "bold"), "  ", (execution["status"], colour)
        )
    )
    redrive = f" (last {execution['redrive_date']})" if execution["redrive_date"] else ""
    out.print(f"  execution {report['execution_arn']}")
    out.print(
        f"  started {execution['started_at']}, stopped {execution['stopped_at'] or '-'}, "
        f"redrives {execution['redrive_count']}{redrive}"
    )
    versions = report.get("versions")
    if versions:
        out.print(
            f"  pinned: model {versions['model_id']}, prompt {versions['prompt_version']} "
            f"(sha256 {str(versions['prompt_sha256'])[:12]}), code {versions['code_version']}"
        )
    pinned = report.get("definition")
    if pinned:
        now = "the current version" if pinned["current"] else "not the current version"
        missing = "" if pinned["present"] else "; its bundle is missing from the bucket"
        out.print(f"  definition {pinned['version']} ({now}{missing})")
    stopped = report["stopped"]
    if stopped:
        out.print(
            Text.assemble(
                "  ",
                (f"stopped in {stopped['state']}", "red"),
                f" at {stopped['at']}: {stopped['error']}: {stopped['cause']}",
            )
        )
    following = report.get("next_boundary")
    then = f"; next: {following['name']} ({following['detail']})" if following else ""
    out.print(Text.assemble("  last committed boundary: ", (report["last_committed_boundary"], "bold"), then))


def _print_states(out: Console, report: dict[str, Any]) -> None:
    table = Table(title="States (from the execution history)", title_justify="left")
    for column in ("state", "status", "attempts", "failures", "entered", "after redrive"):
        table.add_column(column)
    for entry in report["states"]:
        failures = "; ".join(str(failure["error"]) for failure in entry["failures"])
        table.add_row(
            entry["state"],
            entry["status"],
            str(entry["attempts"]),
            failures,
            entry["entered_at"] or "",
            str(entry["redrive"] or ""),
        )
    out.print(table)


def _rejection(doc: dict[str, Any]) -> str:
    """``Error: reason`` of a document rejected with a stored result (a bad document, not a failure)."""
    result = doc.get("result") or {}
    return f"{result.get('error')}: {result.get('reason')}" if result.get("status") == "rejected" else ""


def _in_review(doc: dict[str, Any]) -> str:
    """How a committed document waits for a person: ``review``, a packet's ``N sections in review``."""
    result = doc.get("result") or {}
    waiting = sum(part["status"] == "review" for part in result.get("sections") or [])
    if waiting:
        return f"{waiting} section{'s' if waiting > 1 else ''} in review"
    return "review" if result.get("status") == "review" else ""


def _sections_line(doc: dict[str, Any]) -> str | None:
    """A packet's sections: each with its pages, class, outcome (and error) and review decision."""
    sections = (doc.get("result") or {}).get("sections")
    if not sections:
        return None
    parts = []
    for part in sections:
        first, last = part["pages"]
        name = part.get("class_name") or "no class"
        text = f"{part['section_id']} pages {first}-{last} {name} {part['status']}"
        text += f" {part['error']}" if part.get("error") else ""
        decided = part.get("review")
        parts.append(text + (f", {decided['verdict']} by {decided['decided_by']}" if decided else ""))
    return f"  {doc['document_id']} sections: " + "; ".join(parts)


def _print_documents(out: Console, report: dict[str, Any], show_all: bool) -> None:
    documents = report["document_details"]
    counts = report["documents"]
    out.print(
        f"Documents: {counts['committed']}/{counts['total']} committed ({counts['extracted']} extracted, "
        f"{counts.get('review', 0)} in review, {counts['rejected']} rejected), {counts['failed']} failed, "
        f"{counts['pending']} pending ({counts['unfinished'] + counts['not_started']} of them not started or "
        "unfinished)"
    )
    shown = [
        doc
        for doc in documents
        if show_all
        or doc["status"] != "committed"
        or doc["flags"]
        or doc["resumed_by"]
        or _rejection(doc)
        or _in_review(doc)
    ]
    if shown:
        title = (
            "Documents" if show_all else "Documents not committed, rejected, in review, flagged or resumed"
        )
        table = Table(title=title, title_justify="left")
        columns = ["document", "#", "status", "class", "last committed", "active step", "error", "calls"]
        columns += ["cost $", "notes"]
        for column in columns:
            table.add_column(column, overflow="fold")
        for doc in shown:
            error = doc["error"]
            table.add_row(
                doc["document_id"],
                str(doc["index"]),
                " ".join(filter(None, [doc["status"], _in_review(doc)])),
                (doc.get("result") or {}).get("class") or "-",
                doc["last_committed"],
                doc["active_step"] or "-",
                f"{error['error']} ({short_cause(error['cause'])})" if error else _rejection(doc),
                str(len(doc["model_calls"])),
                f"{doc.get('model_cost_usd', 0.0):.6f}",
                "; ".join(filter(None, [doc["resumed_by"], *doc["replayed"], *doc["flags"]])),
            )
        out.print(table)
    for line in filter(None, map(_sections_line, shown)):
        out.print(line)
    for doc in shown:
        retries = doc["retries"]
        if retries and retries["policy"]:
            attempts = retries["attempts"]
            done = (
                f"{attempts} attempts"
                if attempts
                else f"its Retry policy (up to {retries['policy']['max_attempts']} retries)"
            )
            out.print(
                f"  {doc['document_id']}: {retries['state']} failed with {doc['error']['error']} after {done}"
            )
    committed = [doc["document_id"] for doc in documents if doc["status"] == "committed"]
    if committed and not show_all:
        out.print(f"  committed ({len(committed)}): {compress_ids(committed)}")


def _print_effects(out: Console, report: dict[str, Any]) -> None:
    effects = report["external_effects"]
    calls = effects["model_calls"]
    steps = ", ".join(f"{count} {step}" for step, count in calls.get("by_step", {}).items())
    unended = f"; {calls['unfinished']} started and never finished" if calls.get("unfinished") else ""
    out.print(
        f"External effects: {calls['count']} model calls for {calls['documents']} documents "
        f"({steps + '; ' if steps else ''}{calls['repeated']} repeated: a step's call made again"
        f"{unended})"
    )
    for version in calls["by_version"]:
        out.print(
            f"  {version['count']} x model {version['model_id']}, prompt {version['prompt_version']} "
            f"(sha256 {str(version['prompt_sha256'])[:12]})"
        )
    if report.get("spend"):
        out.print(f"  spend: {spend_line(JobSpend(**report['spend']))}")
        for name, usd in report["spend"]["by_class"].items():
            out.print(f"    class {name}: ${usd:.4f}")
    if not effects["actions"]:
        out.print("  actions: none recorded")
    for action in effects["actions"]:
        out.print(
            f"  action {action['name']} ({action['type']}): {action['outcome'] or 'not done'}"
            f" {action['reference'] or ''} after {action['attempts']} attempt(s)"
            f" (idempotency key {action['idempotency_key']})"
        )


def _print_recovery(out: Console, report: dict[str, Any]) -> None:
    resumed = report["resumed"]
    if resumed["redrives"]:
        out.print(
            "Resumed by: "
            + "; ".join(
                f"{item['kind']} redrive {item['count']} at {item['at']}" for item in resumed["redrives"]
            )
        )
    for retried in resumed["state_retries"]:
        failures = ", ".join(str(failure["error"]) for failure in retried["failures"])
        out.print(f"  {retried['state']}: {retried['attempts']} attempts ({failures or 'retried'})")
    if report["replayed"]:
        out.print("Replayed instead of re-run (done, or on the next redrive):")
        for item in report["replayed"]:
            out.print(f"  {item['subject']}: {item['what']}")
    left = report["left"]
    if left["documents"] or left["states"]:
        out.print(
            f"Left: {len(left['documents'])} document(s) ({compress_ids(left['documents']) or '-'}); "
            f"states {flow_text(left['states'], left['conditional_states'])}"
        )
    if report["uncertain"]:
        out.print(Text("Uncertain:", "yellow"))
        for flag in report["uncertain"]:
            out.print(
                Text.assemble(
                    "  ", (flag["subject"], "yellow"), f" ({flag['step']}): {flag['what']}. {flag['action']}"
                )
            )
    for event in (report.get("drift") or {}).get("events", []):
        changes = ", ".join(f"{d['field']} {d['pinned']} → {d['deployed']}" for d in event["differences"])
        out.print(
            Text.assemble(
                ("Version drift allowed", "yellow"),
                f" at {event['recorded_at']} by {event['allowed_by']} "
                f"(redrive {event['execution_redrive']}, {event['outcome']}): {changes}",
            )
        )
    out.print(f"Next: {report['next_step']}")


# ============================================================================================ redrive
