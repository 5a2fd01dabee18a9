"""Waiting for the review queue (docs/design.md, "Review"): the WaitForReview task and the decisions in
the report.

``wait_for_review`` runs in the WaitForReview task (``lambda:invoke.waitForTaskToken``, on the build_report
function) of a job whose options say ``wait_for_review``. It finds the review queue (the documents whose
outcome is ``review`` and the packets' sections whose own outcome is, each an item, from the Map Run's result
files as build_report reads them: never one read per document), writes it with the task token to
``jobs/{job_id}/review-wait.json`` (a read-modify-write: the same token changes nothing, a new one replaces it
and keeps ``requested_at``), then lists the decisions. When every queued item has one (an empty queue, a
redrive, a crash after the last decision) it completes the token itself; otherwise ``docagent review
accept|reject`` does, when its decision completes the queue. The token is written before the decisions are
listed and a decision before the token is read, so one of the two sees the other.

build_report applies the decisions to the report's rows (functions/reviews.py ``apply_decisions``).
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from functions import aws, s3_json, storage
from functions.errors import InvalidJobRequest
from functions.logic.build_report import read_map_run, read_results
from functions.observability import logger
from functions.payloads.common import utc_now
from functions.payloads.report import MapRunInfo
from functions.resplit import split_documents, split_rows
from functions.reviews import (
    SETTLED_TOKEN_CODES,
    ReviewWaitEvent,
    ReviewWaitOutput,
    ReviewWaitRecord,
    review_items,
)

WORKFLOW = "WaitForReview"


def review_queue(job_id: str, map_run: MapRunInfo) -> list[str]:
    """The job's review queue in job order, its items (functions/reviews.py ``review_items``: a document in
    review, a packet's sections in review): rows from the result files, stored results for the documents
    those do not cover (children that did not succeed; normally none)."""
    manifest = s3_json.get_manifest(job_id)
    if manifest is None:
        raise InvalidJobRequest(f"job {job_id} has no manifest; was it prepared?")
    entries = s3_json.manifest_entries(manifest)
    read = read_map_run(map_run)
    results = read_results(
        job_id, [entry.document_id for entry in entries if entry.document_id not in read.rows]
    )
    split = split_documents(job_id)  # a re-split packet's items are its re-run's (functions/resplit.py)
    queue: list[str] = []
    for entry in entries:
        row, result = read.rows.get(entry.document_id), results.get(entry.document_id)
        if row is None and result is not None:
            row = result.report_row([])  # its status and its sections' statuses are what counts here
        if row is not None and entry.document_id in split:
            row = split_rows(job_id, [row], None, split)[0]
        if row is not None:
            queue += review_items(row)
    return queue


def load_wait(job_id: str) -> ReviewWaitRecord | None:
    data = s3_json.get_json_or_none(storage.review_wait_key(job_id))
    return None if data is None else ReviewWaitRecord.model_validate(data)


def release_if_decided(
    record: ReviewWaitRecord,
    *,
    by: str,
    bucket: str | None = None,
    s3: Any = None,
    states: Any = None,
) -> tuple[ReviewWaitOutput, str | None]:
    """Complete the waiting task's token when every queued item has a decision, and mark the record
    released. Returns the output and the SendTaskSuccess error code that said the token was settled already
    (TaskTimedOut, InvalidToken, TaskDoesNotExist: reported, never raised), or None."""
    decided = set(s3_json.list_review_items(record.job_id, bucket=bucket, client=s3))
    waiting = record.undecided(decided)
    output = ReviewWaitOutput(
        job_id=record.job_id,
        status="released" if not waiting else "waiting",
        documents=len(record.documents),
        decided=len(record.documents) - len(waiting),
        released_by=by if not waiting else None,
    )
    if waiting or record.status == "released":
        return output.model_copy(update={"status": record.status, "released_by": record.released_by}), None
    settled: str | None = None
    try:
        (states or aws.stepfunctions_client()).send_task_success(
            taskToken=record.task_token, output=output.model_dump_json()
        )
    except ClientError as error:
        settled = str(error.response.get("Error", {}).get("Code", ""))
        if settled not in SETTLED_TOKEN_CODES:
            raise
        logger.info("review wait token already settled", extra={"code": settled})
    released = record.model_copy(update={"status": "released", "released_by": by, "released_at": utc_now()})
    s3_json.put_json(storage.review_wait_key(record.job_id), released, bucket=bucket, client=s3)
    return output, settled


def wait_for_review(event: ReviewWaitEvent) -> ReviewWaitOutput:
    """Record the token and the queue; complete the token at once if the queue is already decided."""
    logger.append_keys(job_id=event.job_id)
    existing = load_wait(event.job_id)
    now = utc_now()
    if existing is not None and existing.task_token == event.task_token:
        record = existing
    else:
        queue = review_queue(
            event.job_id, MapRunInfo.model_validate(event.map_run if isinstance(event.map_run, dict) else {})
        )
        record = ReviewWaitRecord(
            job_id=event.job_id,
            status="waiting",
            task_token=event.task_token,
            execution_arn=event.execution_arn,
            documents=queue,
            requested_at=existing.requested_at if existing is not None else now,
            token_updated_at=now,
            requests=existing.requests + 1 if existing is not None else 1,
        )
        s3_json.put_json(storage.review_wait_key(event.job_id), record)
    # Never log the token: whoever holds it can complete the task.
    output, settled = release_if_decided(record, by=WORKFLOW)
    logger.info(
        "review wait recorded",
        extra={
            "queue": output.documents,
            "decided": output.decided,
            "status": output.status,
            "settled": settled,
        },
    )
    return output
