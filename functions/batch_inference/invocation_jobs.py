"""A job's Bedrock batch inference jobs, one per part of its plan (functions/batch_inference/plan.py): each
submitted idempotently and waited for durably by a child of the BatchJobs Map (docs/batch.md).

Submit: the client request token comes from the docagent job id and the part, so a retried or redriven
SubmitBatchJob never creates a second batch job for a part (Bedrock ignores a repeated token; the part's
record in jobs/{job}/batch/jobs/{part}.json is read first, and the token covers a crash between the create
call and that write). A part under Bedrock's minimum of records, or over its bytes per job: no job is
submitted (``NotSubmitted``) and the part's documents go on-demand.

Wait: WaitForBatchJob is a ``waitForTaskToken`` task; its invocation keeps the token in the part's record
and returns
at once (no Lambda waits). The state-change event (source aws.bedrock, "Batch Inference Job State Change")
reaches ``on_event``, which completes the token when the batch job ended. Events are best effort: the task's
TimeoutSeconds is the polling interval, and its retry invokes ``wait`` again, which asks Bedrock for the
status and completes the token itself when the job ended."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from botocore.exceptions import ClientError

from functions import aws, s3_json, storage
from functions.batch_inference.facts import (
    BATCH_MAX_JOB_BYTES,
    BATCH_MIN_RECORDS,
    BATCH_TIMEOUT_HOURS_MIN,
    INVOCATION_TYPE,
    TERMINAL_STATUSES,
)
from functions.batch_inference.output_records import get_batch_job
from functions.batch_inference.payloads import (
    BatchJobRecord,
    BatchOutcome,
    BatchStatus,
    SubmitEvent,
    WaitEvent,
)
from functions.durability.faults import fault_point, job_options
from functions.errors import BatchJobsInFlight, BatchUnavailable
from functions.inference.cascade import first_model
from functions.logic.process_document import load_definition, load_manifest
from functions.observability import logger
from functions.payloads.common import utc_now
from functions.settings import get_settings

# Errors of SendTaskSuccess that mean the token was completed already or the task no longer waits.
_SETTLED_TOKEN_CODES = frozenset({"TaskTimedOut", "InvalidToken", "TaskDoesNotExist"})


def client_request_token(job_id: str, part: int) -> str:
    """A part's batch job idempotency token: the same for every attempt and redrive of that part."""
    return f"docagent-{hashlib.sha256(f'{job_id}#{part}'.encode()).hexdigest()[:48]}"


def batch_job_name_prefix(job_id: str) -> str:
    """What every batch job name of a docagent job starts with (letters, digits, hyphens; no underscores)."""
    readable = "".join(c if c.isalnum() else "-" for c in job_id).strip("-")[:34] or "job"
    return f"docagent-{readable}-{hashlib.sha256(job_id.encode('utf-8')).hexdigest()[:8]}"


def batch_job_name(job_id: str, part: int) -> str:
    """A part's batch job name: the job's prefix and the part (at most 58 characters; Bedrock takes 63)."""
    return f"{batch_job_name_prefix(job_id)}-{part:05d}"


def _outcome(record: BatchJobRecord) -> BatchOutcome:
    return BatchOutcome(
        job_id=record.job_id,
        part=record.part,
        status=record.status,
        job_arn=record.job_arn,
        message=record.message,
    )


def _save(record: BatchJobRecord) -> None:
    s3_json.put_json(
        storage.batch_job_key(record.job_id, record.part), record.model_copy(update={"updated_at": utc_now()})
    )


def _not_submittable(records: int, volume: int) -> str | None:
    """Why a part's records cannot be one batch job (they then go on-demand), or None."""
    if records < BATCH_MIN_RECORDS:
        return (
            f"{records} batch records is under Bedrock's minimum of {BATCH_MIN_RECORDS} per batch job: "
            "the part's documents are called on-demand"
        )
    if volume > BATCH_MAX_JOB_BYTES:
        return (
            f"the part's records hold {volume:,} bytes, over Bedrock's {BATCH_MAX_JOB_BYTES:,} per batch "
            "job: the part's documents are called on-demand"
        )
    return None


def _not_allowed(model_id: str, allowed: list[str] | None) -> str | None:
    """Why no batch job is created for a model the deployment's functions may not call (MODELS_ALLOWED): its
    documents go on-demand, where each is refused before a call (ModelNotAllowed)."""
    if allowed is None or model_id in allowed:
        return None
    return f"the deployment does not allow the model {model_id} (MODELS_ALLOWED): no batch job for it"


def submit(event: SubmitEvent) -> BatchOutcome:
    """A part's batch job, created at most once."""
    existing = get_batch_job(event.job_id, event.part)
    if existing is not None and (existing.job_arn is not None or existing.status == "NotSubmitted"):
        return _outcome(existing)
    settings, manifest = get_settings(), load_manifest(event.job_id)
    listed = list(s3_json.list_objects(storage.batch_input_prefix(event.job_id, event.part)))
    records, volume = len(listed), sum(int(item.get("Size", 0)) for item in listed)
    now = utc_now()
    record = BatchJobRecord(
        job_id=event.job_id,
        part=event.part,
        status="NotSubmitted",
        # the cheap model of a definition naming two (functions/inference/cascade.py)
        model_id=first_model(load_definition(manifest.versions), manifest.versions.model_id),
        records=records,
        client_request_token=client_request_token(event.job_id, event.part),
        job_name=batch_job_name(event.job_id, event.part),
        submitted_at=now,
        updated_at=now,
    )
    refusal = _not_submittable(records, volume) or _not_allowed(record.model_id, settings.models_allowed)
    if refusal is not None:
        record.message = refusal
        _save(record)
        logger.info("batch job not submitted", extra={"records": records, "bytes": volume})
        return _outcome(record)
    if not settings.batch_role_arn:
        raise BatchUnavailable("BATCH_ROLE_ARN is not set: the deployment has no batch inference role")
    bucket = settings.bucket_name
    with _refused_means_unavailable("CreateModelInvocationJob"):
        response = aws.bedrock_client().create_model_invocation_job(
            jobName=record.job_name,
            roleArn=settings.batch_role_arn,
            clientRequestToken=record.client_request_token,
            modelId=record.model_id,
            modelInvocationType=INVOCATION_TYPE,
            inputDataConfig={
                "s3InputDataConfig": {
                    "s3Uri": f"s3://{bucket}/{storage.batch_input_prefix(event.job_id, event.part)}",
                    "s3InputFormat": "JSONL",
                }
            },
            outputDataConfig={
                "s3OutputDataConfig": {
                    "s3Uri": f"s3://{bucket}/{storage.batch_output_prefix(event.job_id, event.part)}"
                }
            },
            timeoutDurationInHours=BATCH_TIMEOUT_HOURS_MIN,
            tags=[
                {"key": "docagent-job", "value": event.job_id},
                {"key": "docagent-part", "value": str(event.part)},
            ],
        )
    record.job_arn, record.status = str(response["jobArn"]), "Submitted"
    # The batch job exists and nothing of it is recorded: a retry or a redrive gets it again by its token.
    fault_point(
        "after_batch_submit",
        job_options(event.job_id, event.options),
        event.retry_count,
        job_id=event.job_id,
        redrive_count=event.redrive_count,
        part=event.part,
    )
    s3_json.put_json(
        storage.batch_jobs_index_key(str(record.bedrock_job_id)), {"job_id": event.job_id, "part": event.part}
    )
    _save(record)
    logger.info("batch job submitted", extra={"job_arn": record.job_arn, "records": records})
    return _outcome(record)


@contextmanager
def _refused_means_unavailable(operation: str) -> Iterator[None]:
    """Bedrock's 4xx (a refusal: nothing created, nothing to wait for) as BatchUnavailable, which the workflow
    catches into on-demand, or, for the account's batch jobs in flight, BatchJobsInFlight, which it retries
    first; a 5xx or a lost connection stays itself and fails the job (the batch job may exist: a redrive finds
    it by its token, docs/batch.md "Crashes")."""
    try:
        yield
    except ClientError as error:
        status = int(error.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
        if not 400 <= status < 500 or status == 429:  # throttled: botocore retried it; a redrive resumes
            raise
        code = error.response.get("Error", {}).get("Code", "ClientError")
        if code == "ServiceQuotaExceededException":  # the batch jobs in flight: resubmit later, not on-demand
            raise BatchJobsInFlight(f"Bedrock refused {operation} ({code}): {error}") from error
        raise BatchUnavailable(f"Bedrock refused {operation} ({code}): {error}") from error


def _status(record: BatchJobRecord) -> tuple[BatchStatus, str | None]:
    if record.job_arn is None:
        return record.status, record.message
    with _refused_means_unavailable("GetModelInvocationJob"):
        answer = aws.bedrock_client().get_model_invocation_job(jobIdentifier=record.job_arn)
    return answer["status"], answer.get("message")


def _complete(record: BatchJobRecord, token: str) -> None:
    """Send the waiting task its output; a token already completed (the event and a poll both saw the end)
    or no longer waiting changes nothing."""
    try:
        aws.stepfunctions_client().send_task_success(
            taskToken=token, output=_outcome(record).model_dump_json()
        )
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") not in _SETTLED_TOKEN_CODES:
            raise
        logger.info("task token already settled", extra={"code": error.response["Error"]["Code"]})


def wait(event: WaitEvent) -> BatchOutcome:
    """Keep the task token; complete it at once if the batch job has ended (the polling fallback)."""
    record = get_batch_job(event.job_id, event.part)
    if record is None:
        raise BatchUnavailable(
            f"job {event.job_id} part {event.part} has no batch job record: SubmitBatchJob did not run"
        )
    record.task_token = event.task_token
    record.status, record.message = _status(record)
    _save(record)
    fault_point(  # the token is kept; its completion, if the batch job ended, not yet sent
        "after_batch_wait_token",
        job_options(event.job_id, event.options),
        event.retry_count,
        job_id=event.job_id,
        redrive_count=event.redrive_count,
        part=event.part,
    )
    if record.status in TERMINAL_STATUSES or record.status == "NotSubmitted":
        _complete(record, event.task_token)
    return _outcome(record)


def on_event(event: dict[str, Any]) -> BatchOutcome | None:
    """A Batch Inference Job State Change event: when the job ended, complete the waiting task's token."""
    resources = event.get("resources") or []
    detail = event.get("detail") or {}
    job_arn = str(resources[0] if resources else detail.get("batchJobArn", ""))
    index = s3_json.get_json_or_none(storage.batch_jobs_index_key(job_arn.rsplit("/", 1)[-1]))
    if not job_arn or not isinstance(index, dict):
        logger.info("state change of a batch job docagent did not submit", extra={"job_arn": job_arn})
        return None
    record = get_batch_job(str(index["job_id"]), int(index.get("part", 0)))
    if record is None or record.job_arn != job_arn:
        return None
    record.status, record.message = _status(record)
    _save(record)
    if record.status in TERMINAL_STATUSES and record.task_token is not None:
        _complete(record, record.task_token)
    logger.info("batch job state change", extra={"status": record.status, "event": json.dumps(detail)[:500]})
    return _outcome(record)
