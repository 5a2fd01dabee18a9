"""``docagent inspect`` (the recovery report) and ``docagent redrive``.

The recovery report answers "where was I when I crashed, and what did I already do?" from durable
records only (records.py): per job and per document, the last committed boundary, the step that was
active when the worker stopped and its error, the external effects (model calls, the ticket), who
resumed it, what was replayed instead of re-run, what is left, and anything uncertain with what to do.

``redrive`` checks eligibility first (shared spec R3, M3, M4), says what will run again, refuses a
redrive that would run another model or prompt than the job pinned (unless --allow-version-drift,
which records the drift in jobs/{job}/drift.json), then redrives and, with --wait, follows it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import getpass
import hashlib
import io
import re
import urllib.request
import zipfile
from typing import Any

from botocore.exceptions import ClientError
from rich.console import Console
from rich.table import Table

from docagent.operator.context import (
    EXIT_BAD_REQUEST,
    EXIT_JOB_FAILED,
    EXIT_OK,
    OperatorContext,
    command,
    emit,
    target_arguments,
)
from docagent.operator.records import (
    FAILED_STATUSES,
    IdempotencyRecord,
    JobRecords,
    StateEntry,
    as_datetime,
    client_error_code,
    compress_ids,
    conditional_states,
    document_step_key,
    drift_key,
    exit_code_for,
    follow,
    iso,
    job_step_key,
    map_state_name,
    now,
    retry_policy,
    states_from,
    wide_console,
)
from functions import storage
from functions.model.base import PROMPTS_DIR
from functions.tickets import ticket_idempotency_key

REDRIVE_WINDOW = dt.timedelta(days=14)  # shared spec R3
HISTORY_LIMIT = 25_000
MAP_RUN_REDRIVE_LIMIT = 1_000  # shared spec M3
NEW_MAP_RUN_ERRORS = frozenset({"States.DataLimitExceeded", "States.Runtime"})  # shared spec M4
BLOCKING_DRIFT = ("model_id", "prompt_version", "prompt_sha256")
RUNTIME_PREFIX = re.compile(r"^RequestId: \S+ (Error: )?")


def register(
    commands: argparse._SubParsersAction,  # type: ignore[type-arg]
    common: argparse.ArgumentParser,
) -> None:
    target = target_arguments()
    inspect = commands.add_parser(
        "inspect",
        parents=[common, target],
        help="the recovery report: where the job stopped, what it already did, what is left",
    )
    inspect.add_argument("job_id", metavar="JOB")
    inspect.add_argument("--all", action="store_true", help="list every document, not only the unfinished")
    inspect.set_defaults(handler=cmd_inspect)

    redrive = commands.add_parser(
        "redrive",
        parents=[common, target],
        help="redrive a failed job from where it stopped (only unfinished work runs again)",
    )
    redrive.add_argument("job_id", metavar="JOB")
    redrive.add_argument(
        "--dry-run", action="store_true", help="check and show what would run; change nothing"
    )
    redrive.add_argument("--wait", action="store_true", help="follow the redriven job until it ends")
    redrive.add_argument(
        "--allow-version-drift",
        action="store_true",
        help="redrive although the deployed model or prompt differs from the job's pinned versions "
        "(recorded in jobs/{job}/drift.json)",
    )
    redrive.set_defaults(handler=cmd_redrive)


# =========================================================================================== inspect


def document_keys(job_id: str, document_ids: list[str]) -> dict[str, dict[str, str]]:
    return {
        document_id: {
            "extract": document_step_key("extract", job_id, document_id),
            "customer_lookup": document_step_key("customer_lookup", job_id, document_id),
        }
        for document_id in document_ids
    }


def _call_summary(call: dict[str, Any]) -> dict[str, Any]:
    return {
        "call_id": call.get("call_id"),
        "model_id": call.get("model_id"),
        "prompt_version": call.get("prompt_version"),
        "prompt_sha256": call.get("prompt_sha256"),
        "outcome": call.get("outcome"),
        "retry_count": call.get("retry_count"),
        "finished_at": call.get("finished_at"),
    }


def _step_status(record: IdempotencyRecord | None, at: dt.datetime) -> str | None:
    return None if record is None else str(record.summary(at)["status"])


def _execution_redrive(redrives: list[dict[str, Any]], number: int) -> dict[str, Any] | None:
    """The execution redrive that started a child's ``number``-th Map Run redrive (the latest if fewer)."""
    executions = [redrive for redrive in redrives if redrive["kind"] == "execution"]
    return executions[min(number, len(executions)) - 1] if executions and number > 0 else None


class Inspector:
    """Builds the recovery report of one job."""

    def __init__(self, records: JobRecords) -> None:
        self.records = records
        self.job_id = records.job_id
        self.at = records.read_at

    def report(self) -> dict[str, Any]:
        records = self.records
        described = records.require_execution()
        timeline = records.timeline()
        redrives = records.redrives()
        entries = records.entries()
        document_ids = [str(entry["document_id"]) for entry in entries]
        keys = document_keys(self.job_id, document_ids)
        job_keys = {step: job_step_key(step, self.job_id) for step in ("prepare", "ticket")}
        wanted = [key for steps in keys.values() for key in steps.values()] + list(job_keys.values())
        idempotency = records.idempotency_records(wanted)
        map_entries = records.map_run_entries_by_document()
        definition = records.definition
        processor_task = self._processor_task(definition)

        documents = []
        for entry in entries:
            document_id = str(entry["document_id"])
            documents.append(
                self.document(
                    entry,
                    result=records.results.get(document_id),
                    calls=records.model_calls.get(document_id, []),
                    steps={step: idempotency.get(key) for step, key in keys[document_id].items()},
                    map_entry=map_entries.get(document_id),
                    redrives=redrives,
                    processor_task=processor_task,
                )
            )

        status = str(described["status"])
        stopped = self._stopped(timeline, described)
        left_documents = [doc["document_id"] for doc in documents if doc["status"] != "committed"]
        left_states: list[str] = []
        conditional: list[str] = []
        if status != "SUCCEEDED":
            start = str(stopped["state"] if stopped else (timeline[-1].name if timeline else ""))
            start = start or str(definition.get("StartAt", ""))
            left_states = states_from(definition, start)
            conditional = sorted(conditional_states(definition, start))
        counts = self._counts(documents)
        ticket = self._ticket(idempotency.get(job_keys["ticket"]))
        uncertain = self._uncertain(documents, idempotency.get(job_keys["prepare"]), ticket, status)
        report: dict[str, Any] = {
            "job_id": self.job_id,
            "execution_arn": records.execution_arn,
            "read_at": iso(self.at),
            "execution": {
                "status": status,
                "error": described.get("error"),
                "cause": described.get("cause"),
                "started_at": iso(described.get("startDate")),
                "stopped_at": iso(described.get("stopDate")),
                "redrive_count": int(described.get("redriveCount") or 0),
                "redrive_date": iso(described.get("redriveDate")),
                "redrive_status": described.get("redriveStatus"),
                "redrive_status_reason": described.get("redriveStatusReason"),
            },
            "versions": (records.manifest or {}).get("versions"),
            "boundaries": self._boundaries(status, counts, timeline),
            "stopped": stopped,
            "states": [entry.as_json() for entry in timeline],
            "documents": counts,
            "document_details": documents,
            "external_effects": {
                "model_calls": self._model_call_totals(documents),
                "ticket": ticket,
            },
            "resumed": {
                "redrives": redrives,
                "state_retries": [
                    {"state": entry.name, "attempts": entry.attempts, "failures": entry.failures}
                    for entry in timeline
                    if entry.attempts > 1
                ],
            },
            "replayed": self._replayed(timeline, documents, redrives),
            "left": {"documents": left_documents, "states": left_states, "conditional_states": conditional},
            "uncertain": uncertain,
            "approval": records.approval
            and {
                key: records.approval.get(key)
                for key in ("status", "requested_at", "decided_by", "decided_at")
            },
            "drift": records.drift,
        }
        report["last_committed_boundary"] = next(
            (boundary["name"] for boundary in reversed(report["boundaries"]) if boundary["committed"]), None
        )
        report["next_boundary"] = next(
            (
                {"name": boundary["name"], "detail": boundary["detail"]}
                for boundary in report["boundaries"]
                if not boundary["committed"]
            ),
            None,
        )
        report["next_step"] = self._next_step(report)
        return report

    # -- per document ------------------------------------------------------------------------------

    @staticmethod
    def _processor_task(definition: dict[str, Any]) -> str | None:
        name = map_state_name(definition)
        if name is None:
            return None
        processor = definition["States"][name].get("ItemProcessor") or {}
        start = processor.get("StartAt")
        return str(start) if start else None

    def document(
        self,
        entry: dict[str, Any],
        *,
        result: dict[str, Any] | None,
        calls: list[dict[str, Any]],
        steps: dict[str, IdempotencyRecord | None],
        map_entry: dict[str, Any] | None,
        redrives: list[dict[str, Any]],
        processor_task: str | None,
    ) -> dict[str, Any]:
        document_id = str(entry["document_id"])
        extract, lookup = steps.get("extract"), steps.get("customer_lookup")
        child_failed = map_entry is not None and map_entry["status"] in FAILED_STATUSES
        execution_status = str((self.records.description or {}).get("status"))

        if result is not None:
            status = "committed"
        elif child_failed:
            status = "failed"
        elif map_entry is not None and map_entry["group"] == "PENDING":
            status = "pending"
        elif execution_status == "RUNNING":
            status = "unfinished"
        else:
            status = "not_started"

        last, active = self._boundary(result, calls, extract, lookup)
        if status in {"pending", "not_started", "unfinished"} and active == "read_document":
            active = None  # nothing says a worker ever started it
        error = None
        retries = None
        if child_failed and map_entry is not None:
            error = {"error": map_entry["error"], "cause": map_entry["cause"]}
            policy = retry_policy(self.records.definition, processor_task or "", map_entry["error"])
            history = self.records.child_history(map_entry.get("execution_arn"))
            attempts = (
                sum(1 for event in history if event.get("type") == "TaskScheduled") if history else None
            )
            retries = {"state": processor_task, "policy": policy, "attempts": attempts}

        resumed_by = None
        if map_entry is not None and map_entry["redrive_count"]:
            redrive = _execution_redrive(redrives, int(map_entry["redrive_count"]))
            resumed_by = f"Map Run redrive {map_entry['redrive_count']}" + (
                f" (execution redriven at {redrive['at']})" if redrive else ""
            )

        replayed: list[str] = []
        flags: list[str] = []
        if result is not None and resumed_by and len(calls) == 1:
            call = calls[0]
            replayed.append(
                f"model call {call.get('call_id')} (finished {call.get('finished_at')}) was reused "
                "from its durable record, not made again"
            )
        if result is not None and child_failed:
            flags.append("its result is stored but its worker died after storing it: a redrive returns it")
        if len(calls) > 1:
            flags.append(
                f"the model was called {len(calls)} times (only a call cut off mid-flight is repeated)"
            )
        if result is None and status != "not_started":
            if extract is not None and extract.status == "COMPLETED":
                both = lookup is not None and lookup.status == "COMPLETED"
                replaying = "extract and customer_lookup replay" if both else "extract replays"
                replayed.append(
                    f"on redrive {replaying} the stored result (no new model call), then {active}"
                )
            elif calls:
                replayed.append(
                    f"on redrive the journalled model call {calls[-1].get('call_id')} is reused: "
                    "no new model call"
                )
        result_view = None
        if result is not None:
            result_view = {
                "status": result.get("status"),
                "error": result.get("error"),
                "reason": result.get("reason"),
                "processed_at": result.get("processed_at"),
                "model_call_id": result.get("model_call_id"),
            }
        return {
            "document_id": document_id,
            "index": entry.get("index"),
            "key": entry.get("key"),
            "status": status,
            "result": result_view,
            "last_committed": last,
            "active_step": None if status == "committed" and not child_failed else active,
            "error": error,
            "retries": retries,
            "map_run": None
            if map_entry is None
            else {"status": map_entry["status"], "redrive_count": map_entry["redrive_count"]},
            "steps": {
                "extract": _step_status(extract, self.at),
                "customer_lookup": _step_status(lookup, self.at),
            },
            "step_records": {
                name: record.summary(self.at) for name, record in steps.items() if record is not None
            },
            "model_calls": [_call_summary(call) for call in calls],
            "resumed_by": resumed_by,
            "replayed": replayed,
            "flags": flags,
        }

    @staticmethod
    def _boundary(
        result: dict[str, Any] | None,
        calls: list[dict[str, Any]],
        extract: IdempotencyRecord | None,
        lookup: IdempotencyRecord | None,
    ) -> tuple[str, str | None]:
        """(last committed boundary, the step after it) of one document."""
        if result is not None:
            return "result_stored", "after store_result (returning the outcome)"
        if lookup is not None and lookup.status == "COMPLETED":
            return "customer_lookup", "store_result"
        if extract is not None and extract.status == "COMPLETED":
            extraction = extract.data if isinstance(extract.data, dict) else {}
            if extraction.get("ok") is False:
                return "extract", "store_result"
            return "extract", "customer_lookup"
        if calls:
            return "model_call_journalled", "extract"
        if extract is not None and extract.status == "INPROGRESS":
            return "none", "extract"
        return "none", "read_document"

    @staticmethod
    def _counts(documents: list[dict[str, Any]]) -> dict[str, int]:
        counts = {"total": len(documents), "committed": 0, "extracted": 0, "rejected": 0}
        counts.update({"failed": 0, "pending": 0, "unfinished": 0, "not_started": 0})
        for document in documents:
            counts[document["status"]] = counts.get(document["status"], 0) + 1
            if document["result"]:
                status = document["result"]["status"]
                counts[status] = counts.get(status, 0) + 1
        return counts

    # -- per job -----------------------------------------------------------------------------------

    @staticmethod
    def _stopped(timeline: list[StateEntry], described: dict[str, Any]) -> dict[str, Any] | None:
        if described["status"] in ("SUCCEEDED", "RUNNING") or not timeline:
            return None
        last = timeline[-1]
        failure = last.failures[-1] if last.failures else {}
        return {
            "state": last.name,
            "error": described.get("error") or failure.get("error"),
            "cause": described.get("cause") or failure.get("cause"),
            "at": iso(described.get("stopDate")),
        }

    def _boundaries(
        self, status: str, counts: dict[str, int], timeline: list[StateEntry]
    ) -> list[dict[str, Any]]:
        records = self.records
        succeeded = {entry.name for entry in timeline if entry.status == "succeeded"}
        boundaries = [
            {
                "name": "request_received",
                "committed": records.request is not None,
                "detail": storage.request_key(self.job_id),
            },
            {
                "name": "prepared",
                "committed": records.manifest is not None,
                "detail": f"manifest pinned {counts['total']} documents"
                if records.manifest
                else "no manifest",
            },
            {
                "name": "documents",
                "committed": counts["total"] > 0 and counts["committed"] == counts["total"],
                "detail": f"{counts['committed']} of {counts['total']} documents committed",
            },
            {
                "name": "report",
                "committed": records.report is not None,
                "detail": storage.report_key(self.job_id) if records.report else "no report",
            },
        ]
        if records.approval is not None or "RequestApproval" in succeeded:
            decided = (records.approval or {}).get("status")
            boundaries.append({"name": "approval", "committed": decided == "approved", "detail": decided})
        boundaries += [
            {
                "name": "ticket",
                "committed": records.ticket is not None,
                "detail": (records.ticket or {}).get("ticket_id") or "no ticket recorded",
            },
            {
                "name": "verified",
                "committed": status == "SUCCEEDED",
                "detail": "VerifyJob succeeded" if status == "SUCCEEDED" else "not verified",
            },
        ]
        # A boundary counts only when every earlier one is committed too.
        reached = True
        for boundary in boundaries:
            reached = reached and bool(boundary["committed"])
            boundary["committed"] = reached
        return boundaries

    @staticmethod
    def _model_call_totals(documents: list[dict[str, Any]]) -> dict[str, Any]:
        by_version: dict[tuple[Any, Any, Any], int] = {}
        total = repeated = 0
        for document in documents:
            calls = document["model_calls"]
            total += len(calls)
            repeated += max(len(calls) - 1, 0)
            for call in calls:
                version = (call["model_id"], call["prompt_version"], call["prompt_sha256"])
                by_version[version] = by_version.get(version, 0) + 1
        return {
            "count": total,
            "documents": sum(1 for document in documents if document["model_calls"]),
            "repeated": repeated,
            "by_version": [
                {"model_id": model, "prompt_version": prompt, "prompt_sha256": sha, "count": count}
                for (model, prompt, sha), count in sorted(by_version.items(), key=str)
            ],
        }

    def _ticket(self, record: IdempotencyRecord | None) -> dict[str, Any] | None:
        records = self.records
        ticket, attempt = records.ticket, records.ticket_attempt
        ledger = records.read_json(storage.ledger_key(ticket_idempotency_key(self.job_id)))
        if ticket is None and attempt is None and record is None and ledger is None:
            return None
        return {
            "ticket_id": (ticket or {}).get("ticket_id") or (ledger or {}).get("ticket_id"),
            "created_at": (ticket or {}).get("created_at") or (ledger or {}).get("created_at"),
            "recorded": ticket is not None,
            "adapter": (ticket or attempt or {}).get("adapter"),
            "idempotency_key": ticket_idempotency_key(self.job_id),
            "in_ledger": ledger is not None,
            "attempts": (attempt or {}).get("attempts"),
            "attempt_errors": (attempt or {}).get("errors", []),
            "step_record": None if record is None else record.summary(self.at),
        }

    def _uncertain(
        self,
        documents: list[dict[str, Any]],
        prepare: IdempotencyRecord | None,
        ticket: dict[str, Any] | None,
        status: str,
    ) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        running = status == "RUNNING"
        for document in documents:
            for step, summary in document["step_records"].items():
                flag = self._in_progress_flag(f"document {document['document_id']}", step, summary, running)
                if flag is None:
                    continue
                if step == "extract":
                    flag["action"] += (
                        f" The journal holds {len(document['model_calls'])} finished call(s) for it: "
                        + (
                            "the next attempt reuses it, the model is not called again."
                            if document["model_calls"]
                            else "the model is called again (the earlier call never finished)."
                        )
                    )
                found.append(flag)
        if prepare is not None:
            flag = self._in_progress_flag("job", "prepare", prepare.summary(self.at), running)
            if flag:
                found.append(flag)
        if ticket is not None:
            step = ticket.get("step_record")
            if step:
                flag = self._in_progress_flag("job", "ticket", step, running)
                if flag:
                    flag["action"] += (
                        f" The ticket system is called with idempotency key {ticket['idempotency_key']}: "
                        "it returns the ticket a dead attempt created instead of opening another."
                    )
                    found.append(flag)
            if not ticket["recorded"] and (
                ticket.get("attempts") or (step or {}).get("status") != "COMPLETED"
            ):
                if ticket["in_ledger"]:
                    action = (
                        f"The ticket system holds ticket {ticket['ticket_id']} for this job: the next "
                        "CreateTicket attempt finds it by its idempotency key and records it; "
                        "no second ticket."
                    )
                else:
                    action = (
                        f"Search the ticket system for reference {self.job_id} before opening one by hand; a "
                        "redrive reconciles by reference and idempotency key before it creates anything."
                    )
                found.append(
                    {
                        "subject": "job",
                        "step": "ticket",
                        "what": "a ticket request has no recorded outcome (no jobs/{job}/ticket.json)"
                        + (f" after {ticket['attempts']} attempt(s)" if ticket.get("attempts") else ""),
                        "action": action,
                    }
                )
        return found

    @staticmethod
    def _in_progress_flag(
        subject: str, step: str, summary: dict[str, Any], running: bool
    ) -> dict[str, Any] | None:
        if summary["status"] == "INPROGRESS_EXPIRED":
            return {
                "subject": subject,
                "step": step,
                "what": f"an INPROGRESS record of step {step} is past its deadline "
                f"({summary['in_progress_until']}): the worker running it died mid-step",
                "action": "It no longer blocks: the next attempt (a retry or a redrive) runs the step again.",
            }
        if summary["status"] == "INPROGRESS" and not running:
            return {
                "subject": subject,
                "step": step,
                "what": f"an INPROGRESS record of step {step} holds until {summary['in_progress_until']} "
                "although no worker runs it",
                "action": f"Redrive after {summary['in_progress_until']}; earlier attempts meet "
                "IdempotencyAlreadyInProgressError (retried by the workflow).",
            }
        return None

    def _replayed(
        self, timeline: list[StateEntry], documents: list[dict[str, Any]], redrives: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        replayed: list[dict[str, Any]] = []
        execution_redrives = [redrive for redrive in redrives if redrive["kind"] == "execution"]
        if execution_redrives:
            rerun = {entry.name for entry in timeline if entry.after_redrive}
            kept = [entry.name for entry in timeline if not entry.after_redrive and entry.name not in rerun]
            for name in kept:
                replayed.append(
                    {"subject": name, "what": "succeeded before the redrive; kept, not run again (R1)"}
                )
            kept_documents = [
                doc["document_id"]
                for doc in documents
                if doc["status"] == "committed" and (doc["map_run"] or {}).get("redrive_count", 0) == 0
            ]
            if kept_documents:
                replayed.append(
                    {
                        "subject": "documents",
                        "what": f"{len(kept_documents)} documents that succeeded before the redrive kept "
                        "their results; their children did not run again (M1)",
                    }
                )
        for document in documents:
            for line in document["replayed"]:
                replayed.append({"subject": f"document {document['document_id']}", "what": line})
        return replayed

    def _next_step(self, report: dict[str, Any]) -> str:
        status = report["execution"]["status"]
        job = self.job_id
        if status == "SUCCEEDED":
            return "nothing: the job succeeded and was verified"
        if status == "RUNNING":
            if (report.get("approval") or {}).get("status") == "pending":
                return f"the job waits for approval: `docagent approve {job}` (or `docagent reject {job}`)"
            return f"the job is running: `docagent status {job} --watch`"
        blocking = [flag for flag in report["uncertain"] if "Redrive after" in flag["action"]]
        if blocking:
            return str(blocking[0]["action"])
        left = report["left"]["documents"]
        what = f"{len(left)} document(s) and " if left else ""
        states = flow_text(report["left"]["states"], report["left"]["conditional_states"])
        return f"`docagent redrive {job}` runs {what}{states} again"


# ------------------------------------------------------------------------------------- inspect: output


@command
def cmd_inspect(args: argparse.Namespace) -> int:
    ctx = OperatorContext.from_args(args)
    records = JobRecords(ctx, args.job_id)
    records.require_execution()
    report = Inspector(records).report()
    emit(args, report, lambda: print_report(report, show_all=args.all))
    return exit_code_for(report["execution"]["status"])


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
        f"[bold]Recovery report: job {report['job_id']}[/bold]  [{colour}]{execution['status']}[/{colour}]"
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
    stopped = report["stopped"]
    if stopped:
        out.print(
            f"  [red]stopped in {stopped['state']}[/red] at {stopped['at']}: {stopped['error']}: "
            f"{stopped['cause']}"
        )
    following = report.get("next_boundary")
    then = f"; next: {following['name']} ({following['detail']})" if following else ""
    out.print(f"  last committed boundary: [bold]{report['last_committed_boundary']}[/bold]{then}")


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


def _print_documents(out: Console, report: dict[str, Any], show_all: bool) -> None:
    documents = report["document_details"]
    counts = report["documents"]
    out.print(
        f"Documents: {counts['committed']}/{counts['total']} committed ({counts['extracted']} extracted, "
        f"{counts['rejected']} rejected), {counts['failed']} failed, {counts['pending']} pending, "
        f"{counts['unfinished'] + counts['not_started']} not started or unfinished"
    )
    shown = [
        doc
        for doc in documents
        if show_all or doc["status"] != "committed" or doc["flags"] or doc["resumed_by"]
    ]
    if shown:
        title = "Documents" if show_all else "Documents not committed, flagged or resumed"
        table = Table(title=title, title_justify="left")
        for column in ("document", "#", "status", "last committed", "active step", "error", "calls", "notes"):
            table.add_column(column, overflow="fold")
        for doc in shown:
            error = doc["error"]
            table.add_row(
                doc["document_id"],
                str(doc["index"]),
                doc["status"],
                doc["last_committed"],
                doc["active_step"] or "-",
                f"{error['error']} ({short_cause(error['cause'])})" if error else "",
                str(len(doc["model_calls"])),
                "; ".join(filter(None, [doc["resumed_by"], *doc["replayed"], *doc["flags"]])),
            )
        out.print(table)
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
    out.print(
        f"External effects: {calls['count']} model calls for {calls['documents']} documents "
        f"({calls['repeated']} repeated)"
    )
    for version in calls["by_version"]:
        out.print(
            f"  {version['count']} x model {version['model_id']}, prompt {version['prompt_version']} "
            f"(sha256 {str(version['prompt_sha256'])[:12]})"
        )
    ticket = effects["ticket"]
    if ticket is None:
        out.print("  ticket: none requested")
    else:
        out.print(
            f"  ticket: {ticket['ticket_id'] or 'unknown'} created {ticket['created_at'] or '-'}"
            f" (recorded in ticket.json: {'yes' if ticket['recorded'] else 'no'}, "
            f"idempotency key {ticket['idempotency_key']})"
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
        out.print("[yellow]Uncertain:[/yellow]")
        for flag in report["uncertain"]:
            out.print(
                f"  [yellow]{flag['subject']}[/yellow] ({flag['step']}): {flag['what']}. {flag['action']}"
            )
    for event in (report.get("drift") or {}).get("events", []):
        changes = ", ".join(f"{d['field']} {d['pinned']} → {d['deployed']}" for d in event["differences"])
        out.print(
            f"[yellow]Version drift allowed[/yellow] at {event['recorded_at']} by {event['allowed_by']} "
            f"(redrive {event['execution_redrive']}, {event['outcome']}): {changes}"
        )
    out.print(f"Next: {report['next_step']}")


# ============================================================================================ redrive


def deployed_versions(records: JobRecords, pinned: dict[str, Any]) -> dict[str, Any]:
    """What process_document would run with now: its environment, and the pinned prompt's file in its code."""
    configuration = records.function_configuration("ProcessDocumentFunctionName")
    environment = (configuration.get("Environment") or {}).get("Variables") or {}
    deployed: dict[str, Any] = {
        "function": configuration.get("FunctionName"),
        "model_id": environment.get("MODEL_ID"),
        "prompt_version": environment.get("PROMPT_VERSION"),
        "code_version": environment.get("CODE_VERSION"),
        "prompt_sha256": None,
        "prompt_source": None,
    }
    version = str(pinned.get("prompt_version"))
    if deployed["code_version"] and deployed["code_version"] == pinned.get("code_version"):
        deployed["prompt_sha256"] = pinned.get("prompt_sha256")
        deployed["prompt_source"] = "the job's code version is deployed: same prompt file"
        return deployed
    file_name = f"functions/prompts/{version.replace('-', '_')}.txt"
    if records.ctx.endpoint is None:
        try:
            location = records.ctx.client("lambda").get_function(FunctionName=configuration["FunctionName"])
            with urllib.request.urlopen(location["Code"]["Location"], timeout=30) as response:
                package = zipfile.ZipFile(io.BytesIO(response.read()))
            deployed["prompt_sha256"] = hashlib.sha256(package.read(file_name)).hexdigest()
            deployed["prompt_source"] = f"{file_name} in the deployed code package"
        except KeyError:
            deployed["prompt_sha256"] = "missing"
            deployed["prompt_source"] = f"{file_name} is not in the deployed code package"
        except (ClientError, OSError, zipfile.BadZipFile) as error:
            deployed["prompt_source"] = f"could not read the deployed code package: {error}"
        return deployed
    path = PROMPTS_DIR / f"{version.replace('-', '_')}.txt"
    # A local cloud does not serve function code back; `docagent local deploy` ships the project's source.
    deployed["prompt_sha256"] = hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else "missing"
    deployed["prompt_source"] = f"{file_name} in the project source (what `docagent local deploy` ships)"
    return deployed


def version_check(records: JobRecords) -> dict[str, Any]:
    pinned = (records.manifest or {}).get("versions")
    if not pinned:
        return {
            "pinned": None,
            "deployed": None,
            "differences": [],
            "drift": False,
            "note": "the job was never prepared: a redrive pins the deployed versions",
        }
    deployed = deployed_versions(records, pinned)
    differences = []
    for name in (*BLOCKING_DRIFT, "code_version"):
        if deployed.get(name) is None:
            continue
        if deployed[name] != pinned.get(name):
            differences.append(
                {
                    "field": name,
                    "pinned": pinned.get(name),
                    "deployed": deployed[name],
                    "blocking": name in BLOCKING_DRIFT,
                }
            )
    unknown = deployed["prompt_sha256"] is None
    return {
        "pinned": pinned,
        "deployed": deployed,
        "differences": differences,
        "drift": any(difference["blocking"] for difference in differences) or unknown,
        "note": "the deployed prompt could not be read: treated as drift" if unknown else None,
    }


def _estimated_events(definition: dict[str, Any], states: list[str]) -> int:
    """An upper bound of the history events a redrive adds: every attempt of every state that runs."""
    total = 2  # ExecutionRedriven, and the closing event
    for name in states:
        state = definition.get("States", {}).get(name, {})
        if state.get("Type") == "Task":
            retries = sum(int(rule.get("MaxAttempts", 3)) for rule in state.get("Retry", []))
            total += 2 + 3 * (1 + retries)
        elif state.get("Type") == "Map":
            total += 8
        else:
            total += 2
    return total


def _reason(code: str, message: str) -> dict[str, str]:
    return {"code": code, "message": message}


def eligibility(
    records: JobRecords, failed_state: str | None, will_states: list[str]
) -> list[dict[str, str]]:
    """Why the job cannot be redriven (shared spec R3, M3); empty when it can."""
    described = records.require_execution()
    status = str(described["status"])
    reasons: list[dict[str, str]] = []
    if status == "SUCCEEDED":
        reasons.append(_reason("Succeeded", "the job succeeded: there is nothing to redrive (R3)"))
    elif status == "RUNNING":
        reasons.append(_reason("Running", "the job is still running: only a closed job can be redriven (R3)"))
    stopped = as_datetime(described.get("stopDate"))
    if status != "RUNNING" and stopped is not None and now() - stopped > REDRIVE_WINDOW:
        reasons.append(
            _reason("TooOld", f"the job closed {iso(stopped)}, more than 14 days ago: start a new job (R3)")
        )
    machine = records.ctx.client("stepfunctions").describe_state_machine(
        stateMachineArn=str(described.get("stateMachineArn") or records.ctx.state_machine_arn)
    )
    if machine.get("type") == "EXPRESS":
        reasons.append(_reason("Express", "Express executions cannot be redriven (R3)"))
    events = len(records.history)
    estimate = _estimated_events(records.definition, will_states)
    if events >= HISTORY_LIMIT - 1:
        reasons.append(_reason("HistoryLimit", f"the history has {events} events; the limit is 24,999 (R3)"))
    elif events + estimate >= HISTORY_LIMIT:
        reasons.append(
            _reason(
                "HistoryNearLimit",
                f"the history has {events} events and the redrive may add up to {estimate}: it would cross "
                "the 25,000-event limit mid-run; start a new job for the unfinished documents (R3)",
            )
        )
    map_redrives = int((records.map_run or {}).get("redriveCount") or 0)
    if failed_state == map_state_name(records.definition) and map_redrives >= MAP_RUN_REDRIVE_LIMIT:
        reasons.append(
            _reason(
                "MapRunRedriveLimit",
                f"the Map Run was redriven {map_redrives} times; at 1,000 another redrive fails with "
                "States.Runtime: start a new job for the unfinished documents (M3)",
            )
        )
    if not reasons and described.get("redriveStatus") == "NOT_REDRIVABLE":
        reasons.append(
            _reason(
                "NotRedrivable", f"Step Functions says NOT_REDRIVABLE: {described.get('redriveStatusReason')}"
            )
        )
    return reasons


def rerun_everything(records: JobRecords, failed_state: str | None, will_states: list[str]) -> str | None:
    """Why a redrive would run every document again (shared spec M4), or None."""
    map_name = map_state_name(records.definition)
    if failed_state is None or map_name not in will_states:
        return None
    if will_states.index(map_name) > 0:
        return f"the job failed in {failed_state}, before its Map Run started"
    if not records.map_run_started():
        return "the Map Run never started (its item reader failed)"
    failure = records.map_run_failure() or {}
    if failure.get("error") in NEW_MAP_RUN_ERRORS:
        return f"the Map Run failed with {failure['error']}: a new Map Run starts"
    return None


def documents_to_run(records: JobRecords, rerun_all: bool) -> list[dict[str, Any]]:
    """The documents whose children run again: those that did not succeed (M1), or all of them (M4)."""
    results = records.result_ids
    by_document = records.map_run_entries_by_document()
    documents = []
    for entry in records.entries():
        document_id = str(entry["document_id"])
        child = by_document.get(document_id)
        if not rerun_all and child is not None and child["group"] == "SUCCEEDED":
            continue
        if not rerun_all and child is None and document_id in results:
            continue  # no result file names it, but it is committed
        documents.append(
            {
                "document_id": document_id,
                "index": entry.get("index"),
                "key": entry.get("key"),
                "last_status": child["status"] if child else None,
                "error": child["error"] if child else None,
                "has_result": document_id in results,
            }
        )
    return documents


def plan_redrive(records: JobRecords, *, allow_version_drift: bool) -> dict[str, Any]:
    described = records.require_execution()
    status = str(described["status"])
    definition = records.definition
    timeline = records.timeline()
    failed_state = timeline[-1].name if timeline and status in FAILED_STATUSES else None
    will_states = states_from(definition, failed_state) if failed_state else []
    reasons = eligibility(records, failed_state, will_states)
    warnings: list[str] = []

    rerun_reason = rerun_everything(records, failed_state, will_states)
    if rerun_reason:
        warnings.append(
            f"{rerun_reason}: the redrive runs every document again (M4); documents with a stored result "
            "return it without new model calls"
        )
    map_name = map_state_name(definition)
    documents = documents_to_run(records, bool(rerun_reason)) if map_name in will_states else []

    versions: dict[str, Any] = version_check(records) if failed_state else {"differences": [], "drift": False}
    if versions["drift"] and not allow_version_drift:
        changed = ", ".join(
            f"{d['field']} {d['pinned']} → {d['deployed']}" for d in versions["differences"] if d["blocking"]
        )
        reasons.append(
            _reason(
                "VersionDrift",
                "the deployed process_document differs from the job's pinned versions "
                f"({changed or versions.get('note')}): redeploy the pinned versions, or pass "
                "--allow-version-drift (recorded in jobs/{job}/drift.json)",
            )
        )
    elif any(not difference["blocking"] for difference in versions["differences"]):
        warnings.append(
            "the deployed code version differs from the job's: the redrive runs the deployed code "
            "(with the pinned model and prompt)"
        )
    map_run = records.map_run
    return {
        "job_id": records.job_id,
        "execution_arn": records.execution_arn,
        "status": status,
        "eligible": not reasons,
        "reasons": reasons,
        "warnings": warnings,
        "failed_state": failed_state,
        "error": described.get("error"),
        "redrive_count": int(described.get("redriveCount") or 0),
        "history_events": len(records.history),
        "map_run": None
        if map_run is None
        else {
            "map_run_arn": map_run.get("mapRunArn"),
            "status": map_run.get("status"),
            "redrive_count": int(map_run.get("redriveCount") or 0),
        },
        "rerun_all": bool(rerun_reason),
        "will_run": {
            "states": will_states,
            "conditional_states": sorted(conditional_states(definition, failed_state))
            if failed_state
            else [],
            "documents": documents,
            "document_count": len(documents),
            "documents_with_results": sum(1 for document in documents if document["has_result"]),
        },
        "versions": versions,
    }


def record_drift(records: JobRecords, plan: dict[str, Any], outcome: str) -> str:
    """Append this redrive's version drift to jobs/{job}/drift.json (before the redrive, then its outcome)."""
    key = drift_key(records.job_id)
    existing = records.read_json(key) or {"job_id": records.job_id, "events": []}
    versions = plan["versions"]
    event = {
        "recorded_at": iso(now()),
        "action": "redrive",
        "execution_redrive": plan["redrive_count"] + 1,
        "allowed_by": getpass.getuser(),
        "flag": "--allow-version-drift",
        "pinned": versions["pinned"],
        "deployed": versions["deployed"],
        "differences": versions["differences"],
        "outcome": outcome,
    }
    events = existing.setdefault("events", [])
    if events and events[-1].get("execution_redrive") == event["execution_redrive"]:
        events[-1] = event
    else:
        events.append(event)
    records.ctx.write_json(key, existing)
    records.__dict__.pop("drift", None)
    return key


def _client_token(job_id: str, redrive_number: int) -> str:
    """The same CLI redrive repeated quickly is one redrive (R7); at most 64 characters."""
    return f"docagent-{hashlib.sha256(job_id.encode()).hexdigest()[:32]}-{redrive_number}"


@command
def cmd_redrive(args: argparse.Namespace) -> int:
    ctx = OperatorContext.from_args(args)
    records = JobRecords(ctx, args.job_id)
    plan = plan_redrive(records, allow_version_drift=args.allow_version_drift)
    plan.update(
        {
            "dry_run": bool(args.dry_run),
            "redriven": False,
            "redrive_date": None,
            "drift_recorded": None,
            "final": None,
        }
    )
    if not plan["eligible"]:
        plan["error"] = "; ".join(reason["message"] for reason in plan["reasons"])
        plan["exit_code"] = EXIT_BAD_REQUEST
        emit(args, plan, lambda: _print_plan(plan))
        return EXIT_BAD_REQUEST
    if args.dry_run:
        emit(args, plan, lambda: _print_plan(plan))
        return EXIT_OK
    if plan["versions"].get("drift"):
        plan["drift_recorded"] = record_drift(records, plan, "redriving")
    try:
        response = ctx.client("stepfunctions").redrive_execution(
            executionArn=records.execution_arn,
            clientToken=_client_token(records.job_id, plan["redrive_count"] + 1),
        )
    except ClientError as error:
        if plan["drift_recorded"]:
            record_drift(records, plan, f"refused: {client_error_code(error)}")
        message = error.response.get("Error", {}).get("Message", str(error))
        plan.update(
            {
                "eligible": False,
                "error": f"Step Functions refused the redrive: {message}",
                "exit_code": EXIT_BAD_REQUEST,
            }
        )
        plan["reasons"].append({"code": client_error_code(error) or "RedriveRefused", "message": message})
        emit(args, plan, lambda: _print_plan(plan))
        return EXIT_BAD_REQUEST
    if plan["drift_recorded"]:
        record_drift(records, plan, "redriven")
    plan["redriven"] = True
    plan["redrive_date"] = iso(response.get("redriveDate"))
    code = EXIT_OK
    if not args.json:
        _print_plan(plan)
    if args.wait:
        final = follow(records, show=not args.json, description=f"{records.job_id} (redriven)")
        plan["final"] = final.as_json()
        code = EXIT_JOB_FAILED if final.status in FAILED_STATUSES else EXIT_OK
        if not args.json:
            Console().print(
                f"job {records.job_id}: {final.status}" + (f" ({final.error})" if final.error else "")
            )
    if args.json:
        emit(args, plan, lambda: None)
    return code


def _print_plan(plan: dict[str, Any]) -> None:
    out = wide_console()
    job = plan["job_id"]
    if plan["eligible"]:
        verb = "would redrive" if plan["dry_run"] else ("redriven" if plan["redriven"] else "can redrive")
        out.print(f"[green]job {job}: {verb}[/green] from {plan['failed_state']} ({plan['error']})")
    else:
        out.print(f"[red]job {job} cannot be redriven[/red] ({plan['status']}):")
        for reason in plan["reasons"]:
            out.print(f"  [red]{reason['code']}[/red]: {reason['message']}")
    for warning in plan["warnings"]:
        out.print(f"  [yellow]note[/yellow]: {warning}")
    will = plan["will_run"]
    if will["states"]:
        out.print(f"  states that run again: {flow_text(will['states'], will['conditional_states'])}")
    if plan["failed_state"] and will["documents"]:
        table = Table(title=f"documents that run again ({will['document_count']})", title_justify="left")
        for column in ("document", "#", "last status", "error", "stored result"):
            table.add_column(column)
        for document in will["documents"]:
            table.add_row(
                document["document_id"],
                str(document["index"]),
                str(document["last_status"] or "-"),
                str(document["error"] or ""),
                "yes (returned as is)" if document["has_result"] else "no",
            )
        out.print(table)
    elif plan["failed_state"]:
        out.print("  documents that run again: none")
    for difference in plan["versions"].get("differences", []):
        marker = "[red]drift[/red]" if difference["blocking"] else "[yellow]changed[/yellow]"
        out.print(
            f"  {marker} {difference['field']}: pinned {difference['pinned']}, "
            f"deployed {difference['deployed']}"
        )
    if plan.get("drift_recorded"):
        out.print(f"  drift recorded in {plan['drift_recorded']}")
    if plan.get("redrive_date"):
        out.print(f"  redriven at {plan['redrive_date']}")
