"""The payloads and records of the batch path (docs/design.md, "Batch inference")."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from functions.payloads.common import JOB_ID_PATTERN
from functions.payloads.job import JobOptions, ManifestEntry

# Bedrock's statuses (functions/batch_inference/facts.py), and docagent's own: NotSubmitted (too few records
# for a batch
# job: every document goes on-demand).
BatchStatus = Literal[
    "NotSubmitted",
    "Submitted",
    "Validating",
    "Scheduled",
    "InProgress",
    "Completed",
    "PartiallyCompleted",
    "Failed",
    "Stopping",
    "Stopped",
    "Expired",
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class WriteRecordEvent(_Strict):
    """A child of WriteBatchRecords: one document's batch input record."""

    action: Literal["record"] = "record"
    job_id: str = Field(pattern=JOB_ID_PATTERN)
    options: JobOptions = Field(default_factory=JobOptions)
    document: ManifestEntry


class RecordWritten(_Strict):
    document_id: str
    record_id: str | None = Field(description="null: no record (the document is rejected before any call)")
    key: str | None = None


class SubmitEvent(_Strict):
    """SubmitBatchJob: the job's one batch job, created idempotently."""

    action: Literal["submit"] = "submit"
    job_id: str = Field(pattern=JOB_ID_PATTERN)
    document_count: int = Field(ge=0)
    # What the fault switch reads (functions/faults.py; the point after_batch_submit).
    options: JobOptions = Field(default_factory=JobOptions)
    retry_count: int = Field(0, ge=0)
    redrive_count: int = Field(0, ge=0)


class WaitEvent(_Strict):
    """WaitForBatchJob (``waitForTaskToken``): the token is kept in the batch job record."""

    action: Literal["wait"] = "wait"
    job_id: str = Field(pattern=JOB_ID_PATTERN)
    task_token: str = Field(min_length=1)
    # What the fault switch reads (functions/faults.py; the point after_batch_wait_token).
    options: JobOptions = Field(default_factory=JobOptions)
    retry_count: int = Field(0, ge=0)
    redrive_count: int = Field(0, ge=0)


class BatchJobRecord(_Strict):
    """jobs/{job}/batch/job.json: the job's batch job, and the token of the task waiting for it."""

    job_id: str
    status: BatchStatus
    model_id: str
    records: int = Field(ge=0)
    client_request_token: str
    job_name: str
    job_arn: str | None = None
    message: str | None = None
    task_token: str | None = None
    submitted_at: str
    updated_at: str

    @property
    def bedrock_job_id(self) -> str | None:
        """The last part of the job's ARN: the folder of its output."""
        return None if self.job_arn is None else self.job_arn.rsplit("/", 1)[-1]


class BatchOutcome(_Strict):
    """The output of SubmitBatchJob and of the wait (sent with the task token)."""

    job_id: str
    status: BatchStatus
    job_arn: str | None = None
    message: str | None = None
