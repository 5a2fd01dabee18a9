"""``docagent inspect``, per document: where each document stopped (its last committed boundary and the
step after it), its error and Retry policy, who resumed it, what a redrive replays instead of re-running."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from typing import Any

from docagent.operations.map_run_children import document_outcome
from docagent.operations.records import JobRecords
from docagent.operations.step_records import MODEL_STEPS, IdempotencyRecord, document_step_key
from docagent.operations.workflow_definition import retry_policy
from functions import storage
from functions.payloads.document import DocumentResult
from functions.payloads.job import ManifestEntry
from functions.payloads.model_calls import ModelCallRecord

# What inspect shows of a section's review decision (the full record: `docagent review list`).
DECISION_SHOWN = {"verdict", "decided_by", "decided_at", "reason"}


def document_keys(job_id: str, steps: dict[str, list[str]]) -> dict[str, dict[str, str]]:
    """The idempotency record key of each durable step of each document (step_records.document_steps)."""
    return {
        document_id: {step: document_step_key(step, job_id, document_id) for step in taken}
        for document_id, taken in steps.items()
    }


CALL_SUMMARY_FIELDS = {
    "call_id",
    "purpose",
    # a packet's section or page window (functions/reading/sections.py), null for the whole document
    "section_id",
    # a long PDF's or TIFF's page window (functions/reading/page_windows.py), null for the whole document
    "window",
    "model_id",
    "prompt_version",
    "prompt_sha256",
    "outcome",
    "retry_count",
    "finished_at",
}


def _call_summary(call: ModelCallRecord) -> dict[str, Any]:
    return call.model_dump(mode="json", include=CALL_SUMMARY_FIELDS)


def _called_again(calls: list[ModelCallRecord]) -> dict[str, int]:
    """The steps whose model call was made more than once, and how often: a step is a purpose of the
    document, of a packet's section or page window, or of a long document's page window (each its own)."""
    steps = Counter(" ".join(filter(None, (call.journal_name, call.window))) for call in calls)
    return {step: n for step, n in steps.items() if n > 1}


def _with_status(steps: dict[str, IdempotencyRecord | None], status: str) -> list[str]:
    """The steps whose record has ``status``, in flow order."""
    return [name for name, record in steps.items() if record is not None and record.status == status]


def _step_status(record: IdempotencyRecord | None, at: dt.datetime) -> str | None:
    return None if record is None else str(record.summary(at)["status"])


def _execution_redrive(redrives: list[dict[str, Any]], number: int) -> dict[str, Any] | None:
    """The execution redrive that started a child's ``number``-th Map Run redrive (the latest if fewer)."""
    executions = [redrive for redrive in redrives if redrive["kind"] == "execution"]
    return executions[min(number, len(executions)) - 1] if executions and number > 0 else None


def document_view(
    records: JobRecords,
    at: dt.datetime,
    entry: ManifestEntry,
    *,
    result: DocumentResult | None,
    calls: list[ModelCallRecord],
    steps: dict[str, IdempotencyRecord | None],
    map_entry: dict[str, Any] | None,
    redrives: list[dict[str, Any]],
    processor_task: str | None,
) -> dict[str, Any]:
    document_id = entry.document_id
    outcome = document_outcome(result is not None, map_entry)  # as `status` counts it
    child_failed = map_entry is not None and document_outcome(False, map_entry) == "failed"
    execution_status = str((records.description or {}).get("status"))

    if outcome == "succeeded":
        status = "committed"
    elif outcome == "failed":
        status = "failed"
    elif map_entry is not None and map_entry["group"] == "PENDING":
        status = "pending"
    elif execution_status == "RUNNING":
        status = "unfinished"
    else:
        status = "not_started"

    last, active = last_boundary(result, calls, steps)
    if status in {"pending", "not_started", "unfinished"} and active == "read_document":
        active = None  # nothing says a worker ever started it
    error = None
    retries = None
    if child_failed and map_entry is not None:
        error = {"error": map_entry["error"], "cause": map_entry["cause"]}
        policy = retry_policy(records.definition, processor_task or "", map_entry["error"])
        history = records.child_history(map_entry.get("execution_arn"))
        attempts = sum(1 for event in history if event.get("type") == "TaskScheduled") if history else None
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
            f"model call {call.call_id} (finished {call.finished_at}) was reused "
            "from its durable record, not made again"
        )
    if result is not None and child_failed:
        flags.append("its result is stored but its worker died after storing it: a redrive returns it")
    again = _called_again(calls)
    if again:
        said = ", ".join(f"{purpose} {n} times" for purpose, n in sorted(again.items()))
        flags.append(f"the model was called for {said} (only a call cut off mid-flight is repeated)")
    completed = _with_status(steps, "COMPLETED")
    if result is None and status != "not_started":
        if completed:
            replaying = " and ".join(completed) + (" replay" if len(completed) > 1 else " replays")
            replayed.append(f"on redrive {replaying} the stored result (no new model call), then {active}")
        elif calls:
            replayed.append(
                f"on redrive the journalled model call {calls[-1].call_id} is reused: no new model call"
            )
    return {
        "document_id": document_id,
        "index": entry.index,
        "key": entry.key,
        "status": status,
        "result": None if result is None else result_view(records, result),
        "last_committed": last,
        "active_step": None if status == "committed" and not child_failed else active,
        "error": error,
        "retries": retries,
        "map_run": None
        if map_entry is None
        else {"status": map_entry["status"], "redrive_count": map_entry["redrive_count"]},
        "steps": {name: _step_status(record, at) for name, record in steps.items()},
        "step_records": {name: record.summary(at) for name, record in steps.items() if record is not None},
        "model_calls": [_call_summary(call) for call in calls],
        "resumed_by": resumed_by,
        "replayed": replayed,
        "flags": flags,
    }


def result_view(records: JobRecords, result: DocumentResult) -> dict[str, Any]:
    """What inspect shows of a stored result: its class (``class``: a packet's sections' classes), a packet's
    sections each with its own outcome (functions/reading/sections.py) and, as its own review item, its
    reviewer's decision (null: none)."""
    view = result.model_dump(
        mode="json",
        include={"status", "error", "reason", "class_name", "processed_at", "model_call_id", "sections"},
    )
    view["class"] = result.class_label  # a packet's: ``packet: `` and its sections' classes
    for section in view.get("sections") or []:
        decided = records.reviews.get(storage.review_item(result.document_id, section["section_id"]))
        section["review"] = None if decided is None else decided.model_dump(include=DECISION_SHOWN)
    return view


def last_boundary(
    result: DocumentResult | None, calls: list[ModelCallRecord], steps: dict[str, IdempotencyRecord | None]
) -> tuple[str, str | None]:
    """(last committed boundary, the step after it) of one document; ``steps`` in flow order."""
    if result is not None:
        return "result_stored", "after store_result (returning the outcome)"
    order = list(steps)
    done = _with_status(steps, "COMPLETED")
    if done:
        last = done[-1]
        record = steps[last]
        data = record.data if record is not None and isinstance(record.data, dict) else {}
        if last in MODEL_STEPS and data.get("ok") is False:  # a failed extraction is stored as it is
            return last, "store_result"
        following = order[order.index(last) + 1 :]
        return last, following[0] if following else "store_result"
    model_steps = [name for name in order if name in MODEL_STEPS]
    if calls:
        return "model_call_journalled", model_steps[0] if model_steps else None
    running = _with_status(steps, "INPROGRESS")
    if running:
        return "none", running[0]
    return "none", "read_document"


def document_counts(documents: list[dict[str, Any]]) -> dict[str, int]:
    counts = {"total": len(documents), "committed": 0, "extracted": 0, "review": 0, "rejected": 0}
    counts.update({"failed": 0, "pending": 0, "unfinished": 0, "not_started": 0})
    for document in documents:
        counts[document["status"]] = counts.get(document["status"], 0) + 1
        if document["result"]:
            status = document["result"]["status"]
            counts[status] = counts.get(status, 0) + 1
    # Pending as `status` counts it (records.document_outcome): neither committed nor failed, whether its
    # child is listed as pending, has not started, or is unfinished.
    counts["pending"] += counts["unfinished"] + counts["not_started"]
    return counts
