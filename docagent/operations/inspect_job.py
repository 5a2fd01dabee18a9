"""``docagent inspect``: the recovery report.

It answers "where was I when I crashed, and what did I already do?" from durable records only (records.py):
per job and per document (inspect_documents.py), the last committed boundary, the step that was active when
the worker stopped and its error, the external effects (model calls, the actions), who resumed it, what was
replayed instead of re-run, what is left, anything uncertain with what to do, and a fault drill still armed.
"""

from __future__ import annotations

import argparse
from collections import Counter
from typing import Any

from docagent.kit.registry import pinned_view
from docagent.operations.context import OperatorContext, command, emit, target_arguments
from docagent.operations.display import as_datetime, iso
from docagent.operations.execution_history import StateEntry
from docagent.operations.inspect_documents import document_counts, document_keys, document_view
from docagent.operations.inspect_print import flow_text, print_report
from docagent.operations.json_shapes import BudgetExceededView
from docagent.operations.model_breaker import model_breaker
from docagent.operations.model_breaker import next_step as model_breaker_step
from docagent.operations.progress import exit_code_for
from docagent.operations.records import JobRecords
from docagent.operations.redrive_plan import armed_fault
from docagent.operations.spend import job_spend
from docagent.operations.spend import next_step as budget_next_step
from docagent.operations.step_records import MODEL_STEPS, IdempotencyRecord, document_steps, job_step_key
from docagent.operations.unfinished_calls import UnfinishedCalls, read_unfinished_calls
from docagent.operations.workflow_definition import conditional_states, map_state_name, states_from
from functions import storage


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
        document_ids = [entry.document_id for entry in entries]
        steps = {doc: document_steps(records.bundle, records.results.get(doc)) for doc in document_ids}
        keys = document_keys(self.job_id, steps)
        job_keys = {step: job_step_key(step, self.job_id) for step in ("prepare", "actions")}
        wanted = [key for steps in keys.values() for key in steps.values()] + list(job_keys.values())
        idempotency = records.idempotency_records(wanted)
        map_entries = records.map_run_entries_by_document()
        definition = records.definition
        processor_task = self._processor_task(definition)

        documents = []
        for entry in entries:
            document_id = entry.document_id
            documents.append(
                document_view(
                    records,
                    self.at,
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
        counts = document_counts(documents)
        actions_step = idempotency.get(job_keys["actions"])
        actions = self._actions()
        uncertain = self._uncertain(documents, idempotency.get(job_keys["prepare"]), status)
        uncertain += self._uncertain_actions(actions, actions_step, status)
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
            "versions": records.manifest.versions.model_dump(mode="json") if records.manifest else None,
            "definition": pinned_view(
                records.ctx.client("s3"),
                records.ctx.bucket,
                records.manifest.versions if records.manifest else None,
            ),
            "boundaries": self._boundaries(status, counts, timeline),
            "stopped": stopped,
            "states": [entry.as_json() for entry in timeline],
            "documents": counts,
            "document_details": documents,
            "external_effects": {
                "model_calls": self._model_call_totals(
                    documents, read_unfinished_calls(records, as_datetime(described.get("startDate")))
                ),
                "actions": actions,
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
            "approval": records.approval.model_dump(
                mode="json", include={"status", "requested_at", "decided_by", "decided_at"}
            )
            if records.approval
            else None,
            "review_wait": records.review_wait(),
            "armed_fault": armed_fault(records),
            "drift": records.drift,
            "model_breaker": model_breaker(records),
            "spend": (figures := job_spend(records)).model_dump(mode="json"),
        }
        for document in documents:
            document["model_cost_usd"] = figures.by_document.get(document["document_id"], 0.0)
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
            decided = records.approval.status if records.approval else None
            boundaries.append({"name": "approval", "committed": decided == "approved", "detail": decided})
        boundaries += [
            {
                "name": "actions",
                "committed": "RunActions" in succeeded,
                "detail": ", ".join(
                    f"{name}: {done.outcome.outcome if done else 'not done'}"
                    for name, (_, done) in records.actions.items()
                )
                or "no action recorded",
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
    def _model_call_totals(documents: list[dict[str, Any]], unfinished: UnfinishedCalls) -> dict[str, Any]:
        """The finished calls (the journal) and those started and never finished (unfinished_calls.py)."""
        by_version: dict[tuple[Any, Any, Any], int] = {}
        by_step: Counter[str] = Counter()
        total = repeated = 0
        for document in documents:
            calls = document["model_calls"]
            total += len(calls)
            by_step.update(str(call.get("purpose") or "extract") for call in calls)
            # one call per step once finished: a step is a purpose of the document, of a packet's section or
            # page window, or of a long document's page window (extract-w0021), each its own
            steps = Counter(
                (call.get("purpose") or "extract", call.get("section_id"), call.get("window"))
                for call in calls
            )
            repeated += sum(count - 1 for count in steps.values())
            for call in calls:
                version = (call["model_id"], call["prompt_version"], call["prompt_sha256"])
                by_version[version] = by_version.get(version, 0) + 1
        called = {document["document_id"] for document in documents if document["model_calls"]}
        return {
            "count": total + unfinished.count,
            "documents": len(called | set(unfinished.by_document)),
            "by_step": dict(sorted(by_step.items())),
            "repeated": repeated + unfinished.remade,
            "unfinished": unfinished.count,
            "by_version": [
                {"model_id": model, "prompt_version": prompt, "prompt_sha256": sha, "count": count}
                for (model, prompt, sha), count in sorted(by_version.items(), key=str)
            ],
        }

    def _actions(self) -> list[dict[str, Any]]:
        """Each recorded action: its outcome (done.json) and its attempts (attempt.json)."""
        return [
            {
                "name": name,
                "type": (done.outcome.type if done else attempt.type if attempt else None),
                "done": done is not None,
                "outcome": done.outcome.outcome if done else None,
                "reference": done.outcome.reference if done else None,
                "idempotency_key": (
                    done.outcome.idempotency_key if done else attempt.idempotency_key if attempt else None
                ),
                "attempts": attempt.attempts if attempt else 0,
                "attempt_errors": [error.model_dump(mode="json") for error in attempt.errors]
                if attempt
                else [],
            }
            for name, (attempt, done) in self.records.actions.items()
        ]

    def _uncertain_actions(
        self, actions: list[dict[str, Any]], step: IdempotencyRecord | None, status: str
    ) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        if step is not None:
            flag = self._in_progress_flag("job", "actions", step.summary(self.at), status == "RUNNING")
            if flag:
                flag["action"] += (
                    " Each action is sent with its idempotency key; a done action (done.json) is never "
                    "run again, and one with an unknown outcome is reconciled before anything is sent."
                )
                found.append(flag)
        for action in actions:
            if action["done"] or not action["attempts"]:
                continue
            found.append(
                {
                    "subject": "job",
                    "step": f"action {action['name']}",
                    "what": f"the {action['type']} action {action['name']} has no recorded outcome "
                    f"(no {storage.action_done_key(self.job_id, action['name'])}) after "
                    f"{action['attempts']} attempt(s)",
                    "action": "A redrive settles it first (http: by reference; eventbridge and sns: sent "
                    f"again with idempotency key {action['idempotency_key']}, which consumers dedupe on; "
                    "export: the same files again); do not repeat it by hand.",
                }
            )
        return found

    def _uncertain(
        self,
        documents: list[dict[str, Any]],
        prepare: IdempotencyRecord | None,
        status: str,
    ) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        running = status == "RUNNING"
        for document in documents:
            for step, summary in document["step_records"].items():
                flag = self._in_progress_flag(f"document {document['document_id']}", step, summary, running)
                if flag is None:
                    continue
                if step in MODEL_STEPS:
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
                    {
                        "subject": name,
                        "what": "succeeded before the redrive; kept, not run again",
                    }  # docs/semantics.md R1
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
                        "their results; their children did not run again",  # docs/semantics.md M1
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
            wait = report.get("review_wait") or {}
            if wait.get("status") == "waiting":
                left = wait["documents"] - wait["decided"]
                return (
                    f"the job waits for review: {left} item(s) without a decision (`docagent review list "
                    f"{job}`, then `docagent review accept|reject {job} ITEM`)"
                )
            return f"the job is running: `docagent status {job} --watch`"
        if report.get("model_breaker"):
            return model_breaker_step(job, report["model_breaker"])
        if report["spend"]["budget_exceeded"]:
            return budget_next_step(job, BudgetExceededView(**report["spend"]["budget_exceeded"]))
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


def register(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    common: argparse.ArgumentParser,
) -> None:
    inspect = commands.add_parser(
        "inspect",
        parents=[common, target_arguments()],
        help="the recovery report: where the job stopped, what it already did, what is left",
    )
    inspect.add_argument("job_id", metavar="JOB")
    inspect.add_argument("--all", action="store_true", help="list every document, not only the unfinished")
    inspect.set_defaults(handler=cmd_inspect)
