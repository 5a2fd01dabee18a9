"""The payloads and records of the batch path (docs/design.md, "Batch inference")."""

from __future__ import annotations

from bisect import bisect_right
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from functions.payloads.common import JOB_ID_PATTERN
from functions.payloads.job import JobOptions, ManifestEntry

# Bedrock's statuses (functions/batch_inference/facts.py), and docagent's own: NotSubmitted (a part with too
# few records, or too many bytes, for a batch job: its documents go on-demand).
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


class PlanEvent(_Strict):
    """PlanBatchJobs: the job's documents split into parts, one batch job each."""

    action: Literal["plan"] = "plan"
    job_id: str = Field(pattern=JOB_ID_PATTERN)


class BatchPlan(_Strict):
    """jobs/{job}/batch/plan.json, written once: the job's documents split into parts of consecutive indexes,
    each within one batch job's records and bytes (functions/batch_inference/plan.py)."""

    job_id: str
    documents: int = Field(ge=0)
    max_records: int = Field(ge=1, description="records per batch job the plan was made for")
    max_bytes: int = Field(ge=1, description="bytes of input per batch job the plan was made for")
    starts: list[int] = Field(description="the first document index of each part, ascending from 0")
    created_at: str

    @property
    def parts(self) -> int:
        return len(self.starts)

    def part_of(self, index: int) -> int:
        """The part a document index belongs to."""
        return max(bisect_right(self.starts, index) - 1, 0)


class PlanOutcome(_Strict):
    """PlanBatchJobs' output: how many batch jobs, and the BatchJobs Map's items (one line a part)."""

    job_id: str
    parts: int = Field(ge=0)
    parts_key: str


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
    """SubmitBatchJob (a child of BatchJobs): a part's batch job, created idempotently."""

    action: Literal["submit"] = "submit"
    job_id: str = Field(pattern=JOB_ID_PATTERN)
    part: int = Field(0, ge=0)
    # Sent by executions started before the split (their SubmitBatchJob): read, not used. Such an execution,
    # redriven, finds no plan and no records in part 0's folder: its documents go on-demand.
    document_count: int | None = Field(None, ge=0)
    # What the fault switch reads (functions/durability/faults.py; the point after_batch_submit).
    options: JobOptions = Field(default_factory=JobOptions)
    retry_count: int = Field(0, ge=0)
    redrive_count: int = Field(0, ge=0)


class WaitEvent(_Strict):
    """WaitForBatchJob (``waitForTaskToken``): the token is kept in the batch job record."""

    action: Literal["wait"] = "wait"
    job_id: str = Field(pattern=JOB_ID_PATTERN)
    part: int = Field(0, ge=0)
    task_token: str = Field(min_length=1)
    # What the fault switch reads (functions/durability/faults.py; the point after_batch_wait_token).
    options: JobOptions = Field(default_factory=JobOptions)
    retry_count: int = Field(0, ge=0)
    redrive_count: int = Field(0, ge=0)


class BatchJobRecord(_Strict):
    """jobs/{job}/batch/jobs/{part}.json: a part's batch job, and the token of the task waiting for it."""

    job_id: str
    part: int = Field(0, ge=0)
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
    part: int = Field(0, ge=0)
    status: BatchStatus
    job_arn: str | None = None
    message: str | None = None
