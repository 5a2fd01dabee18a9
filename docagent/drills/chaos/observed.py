"""What a finished job left behind, read from its durable records only: the manifest, the results, the
model-call journal, the report, the execution's output, the actions' done.json, the ticket service's records
and the idempotency records."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from docagent.drills.demo import call_groups
from docagent.operations.records import JobRecords
from docagent.operations.step_records import document_step_key, document_steps, job_step_key

if TYPE_CHECKING:
    from docagent.drills.local_job import LocalJob


class Tickets(Protocol):
    """The ticket service (the local http actions' target): its records by the job's reference."""

    def tickets(self, reference: str) -> list[dict[str, Any]]: ...


@dataclass
class Observed:
    """What a finished job left behind, read from durable records only."""

    job_id: str
    manifest_ids: list[str]
    results: dict[str, dict[str, Any]]
    calls: dict[str, list[str]]
    repeats: dict[str, list[str]]  # the journalled calls of documents with more than one of a purpose
    report: dict[str, Any] | None
    output: dict[str, Any]
    actions: dict[str, dict[str, Any] | None]  # each recorded action's done.json outcome (None: not done)
    tickets: list[dict[str, Any]]
    in_progress: list[str]
    missing_records: list[str]
    call_groups: int = 0  # journalled calls counted once per document, purpose and page window


def observe(job: LocalJob, tickets: Tickets) -> Observed:
    """What ``job`` left behind; ``tickets``: the ticket service it sent its http actions to."""
    records = job.records
    records.refresh()
    manifest_ids = [entry.document_id for entry in records.entries()]
    journal = records.model_calls
    groups = call_groups(journal)
    repeats: dict[str, list[str]] = {}
    for (document_id, _), calls in groups.items():
        if len(calls) > 1:
            repeats.setdefault(document_id, []).extend(
                f"{call.call_id} (retry {call.retry_count}, {call.duration_ms} ms, "
                f"finished {call.finished_at})"
                for call in calls
            )
    in_progress, missing = _in_progress(records, manifest_ids)
    return Observed(
        job_id=job.job_id,
        manifest_ids=manifest_ids,
        results={
            document_id: result.model_dump(mode="json") for document_id, result in records.results.items()
        },
        calls={document_id: [call.call_id for call in calls] for document_id, calls in journal.items()},
        repeats=repeats,
        call_groups=len(groups),
        report=records.report.model_dump(mode="json") if records.report else None,
        output=json.loads(records.require_execution().get("output") or "{}"),
        actions={
            name: done.outcome.model_dump(mode="json") if done else None
            for name, (_, done) in records.actions.items()
        },
        tickets=tickets.tickets(job.job_id),
        in_progress=in_progress,
        missing_records=missing,
    )


def _in_progress(records: JobRecords, document_ids: list[str]) -> tuple[list[str], list[str]]:
    """The job's idempotency records left INPROGRESS, and the completed steps with no record at all."""
    job_id = records.job_id
    keys = {job_step_key("prepare", job_id): "prepare", job_step_key("actions", job_id): "actions"}
    for document_id in document_ids:
        for step in document_steps(records.bundle, records.results.get(document_id)):
            keys[document_step_key(step, job_id, document_id)] = f"{step} {document_id}"
    found = records.idempotency_records(list(keys))
    in_progress = sorted(keys[key] for key, record in found.items() if record.status == "INPROGRESS")
    missing = sorted(step for key, step in keys.items() if key not in found)
    return in_progress, missing
