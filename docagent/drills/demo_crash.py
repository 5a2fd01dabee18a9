"""The demo's crash (``--crash-at``): the fault it arms for one document (or the job), where the failed job
stopped, how long the redrive took to make progress, and how many attempts died at the fault's point.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from docagent.drills.demo_cloud import DemoCloud
from docagent.drills.local_job import LocalJob
from docagent.localcloud.deploy import LocalStack
from docagent.operations.context import OperatorContext
from docagent.operations.map_run_children import documents_of_input
from docagent.operations.trace_job import build_trace, span_lines
from functions.durability.fault_points import fault_point_named
from stacks import outputs as names


@dataclass(frozen=True)
class Crash:
    """A fault armed for one document (or, at a job-level point such as after_batch_submit, for the job): the
    worker dies at ``point`` (default: before the document's result is stored)."""

    document_index: int
    mode: str  # "redrive": on every attempt until the execution is redriven; "transient": first attempt only
    point: str = "before_store_result"

    def job_options(self) -> dict[str, Any]:
        until = {"until_redrive": 1} if self.mode == "redrive" else {"times": 1}
        return {
            "fault": {"point": self.point, "document_index": self.document_index, "mode": "exit", **until}
        }


def default_crash_index(documents: int) -> int:
    """The mission's story crashes document 138 of 200; smaller jobs crash two thirds of the way in."""
    return 138 if documents > 138 else documents * 2 // 3


def where_it_stopped(job: LocalJob) -> dict[str, Any]:
    """What the durable records say about a failed job: counts, failed documents, state and error."""
    counts = job.map_run_counts() or {}
    described = job.records.require_execution()
    failed = [  # the documents of the failed children (a batch's: each of its documents)
        {"index": document.get("index"), "error": entry.get("Error")}
        for entry in job.map_run_entries("FAILED")
        for document in documents_of_input(entry.get("Input"))
    ]
    return {
        "failed_state": job.records.current_state(),
        "error": described.get("error"),
        "documents_done": counts.get("succeeded", 0),
        "documents_failed": failed,
        "documents_pending": counts.get("pending", 0),
    }


def first_new_progress(job: LocalJob, before: int, timeout: float = 30.0) -> float:
    """Seconds from the redrive until one more document has succeeded than before it."""
    started = time.time()
    while time.time() - started < timeout:
        if (job.map_run_counts() or {}).get("succeeded", 0) > before or job.status() != "RUNNING":
            break
        time.sleep(0.02)
    return round(time.time() - started, 3)


def crash_summary(crash: Crash, killed: int) -> dict[str, Any]:
    per_document = fault_point_named(crash.point).scope == "document"
    return {
        "document_index": crash.document_index if per_document else None,
        "fault_point": crash.point,
        "mode": crash.mode,
        "attempts_killed": killed,
    }


def attempts_killed(where: DemoCloud, stack: LocalStack, job: LocalJob, crash: Crash) -> int:
    """How many invocations died at the crash's point (of its document, at a per-document point): the
    in-process runtime's records, or (a kept, detached cloud) the job's trace, where a killed attempt is a
    span the runtime reported dead."""
    document_index = crash.document_index
    if where.cloud is not None:
        point = fault_point_named(crash.point)
        batch_step = point.step in {"SubmitBatchJob", "WaitForBatchJob"}
        function = names.BATCH_INFERENCE if batch_step else point.step
        return len(
            [
                record
                for record in where.cloud.runtime.invocations_of(
                    stack.outputs[names.function_name_output(function)]
                )
                if record.error_type == "Runtime.ExitError"
                and isinstance(record.event, dict)
                and record.event.get("job_id") == job.job_id  # a cloud may hold other jobs' crashes
                and (point.scope != "document" or document_index in event_indexes(record.event))
            ]
        )
    ctx = OperatorContext.local(where.endpoint)
    started = job.records.require_execution()["startDate"]
    trace = build_trace(job.job_id, {}, [], [], span_lines(ctx, job.job_id, started))
    return sum(doc["killed_attempts"] for doc in trace["documents"] if doc["index"] == document_index)


def event_indexes(event: dict[str, Any]) -> set[int]:
    """The indexes of the documents a ProcessDocument event carries (one ``document``, or a batch's items)."""
    batch = event.get("items")
    documents = documents_of_input({"Items": batch} if isinstance(batch, list) else event)
    return {int(document["index"]) for document in documents if isinstance(document.get("index"), int)}
