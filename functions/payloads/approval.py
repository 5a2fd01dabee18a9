"""RequestApproval and RecordApproval: the decision, its record and the events."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from functions.payloads.common import JOB_ID_PATTERN, StrictModel
from functions.payloads.report import ReportSummary

ApprovalStatus = Literal["pending", "approved", "rejected", "expired"]
APPROVAL_REJECTED_ERROR = "ApprovalRejected"


class ApprovalDecision(BaseModel):
    """The operator's decision as the workflow receives it: the SendTaskSuccess output (approved) or the
    SendTaskFailure cause (rejected). Lenient, so a token completed by hand (console, aws cli) still
    records."""

    model_config = ConfigDict(extra="ignore")

    decision: Literal["approved", "rejected"] = "approved"
    # The job and execution the decision was made for (docagent approve/reject set them; a token completed by
    # hand may not): RecordApproval refuses a decision naming another job or execution.
    job_id: str | None = None
    execution_arn: str | None = None
    decided_by: str = Field("unknown", min_length=1, max_length=200)
    decided_at: str | None = None
    reason: str | None = Field(None, max_length=2000)


class PastDecision(StrictModel):
    """A decision that a later request (a redrive after a rejection or a timeout) replaced."""

    status: ApprovalStatus
    requested_at: str
    decided_by: str | None = None
    decided_at: str | None = None
    reason: str | None = None


class ApprovalRecord(StrictModel):
    """jobs/{job_id}/approval.json: the pending approval, durable while the execution waits, then its outcome.

    Only the newest ``task_token`` is valid: a retried RequestApproval (new attempt, new token) replaces it.
    """

    job_id: str = Field(pattern=JOB_ID_PATTERN)
    status: ApprovalStatus
    report_key: str
    task_token: str = Field(min_length=1)
    execution_arn: str | None = None
    requested_at: str
    token_updated_at: str
    requests: int = Field(1, ge=1, description="invocations that recorded this request")
    decided_by: str | None = None
    decided_at: str | None = None
    reason: str | None = None
    previous: list[PastDecision] = Field(default_factory=list)


class RequestApprovalEvent(StrictModel):
    """The RequestApproval task's payload (``lambda:invoke.waitForTaskToken``)."""

    action: Literal["request"] = "request"
    job_id: str = Field(pattern=JOB_ID_PATTERN)
    report: ReportSummary
    task_token: str = Field(min_length=1)
    execution_arn: str | None = None


class RecordApprovalEvent(StrictModel):
    """The RecordApproval task's payload: the decision the RequestApproval task returned."""

    action: Literal["record"]
    job_id: str = Field(pattern=JOB_ID_PATTERN)
    execution_arn: str | None = None
    report: ReportSummary
    approval: ApprovalDecision


class ApprovalRequested(StrictModel):
    """request_approval's output for a request (Step Functions ignores it: the task waits for the token)."""

    approval_key: str
    status: Literal["pending"]
