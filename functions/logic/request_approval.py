"""request_approval: the human approval before the job's actions (docs/design.md, "Approval").

``request`` runs in the RequestApproval task (``lambda:invoke.waitForTaskToken``). It durably records the
pending approval in ``jobs/{job_id}/approval.json`` (job, report, task token, requested at) and returns at
once: the execution, not a worker, then waits until ``docagent approve``/``reject`` completes the token (or
the task's TimeoutSeconds pass). A read-modify-write of approval.json makes it idempotent:

- the same token again (a replayed invocation) changes nothing;
- a new token while pending (a retried attempt: only the newest token is valid) replaces the token and keeps
  ``requested_at``;
- a new token after a decision or an expiry (a redrive asks again) opens a new pending approval and keeps the
  earlier outcome under ``previous``.

``record`` runs in the RecordApproval task with the decision the token was completed with. It writes the
decision into approval.json (the CLI normally has already) and into the report's ``approval`` section. Its
times come from the decision, so a retry rewrites the same bytes.
"""

from __future__ import annotations

from functions import s3_json, storage
from functions.errors import ApprovalNotForThisJob, ApprovalRejected, InvalidJobRequest
from functions.observability import MetricUnit, logger, metrics
from functions.payloads.approval import (
    ApprovalRecord,
    ApprovalRequested,
    PastDecision,
    RecordApprovalEvent,
    RequestApprovalEvent,
)
from functions.payloads.common import utc_now
from functions.payloads.report import Report, ReportApproval


def load_approval(job_id: str) -> ApprovalRecord | None:
    data = s3_json.get_json_or_none(storage.approval_key(job_id))
    return None if data is None else ApprovalRecord.model_validate(data)


def _new_request(event: RequestApprovalEvent, now: str, previous: list[PastDecision]) -> ApprovalRecord:
    return ApprovalRecord(
        job_id=event.job_id,
        status="pending",
        report_key=event.report.report_key,
        task_token=event.task_token,
        execution_arn=event.execution_arn,
        requested_at=now,
        token_updated_at=now,
        previous=previous,
    )


def _past(record: ApprovalRecord) -> PastDecision:
    return PastDecision(
        status=record.status,
        requested_at=record.requested_at,
        decided_by=record.decided_by,
        decided_at=record.decided_at,
        reason=record.reason,
    )


def request_approval(event: RequestApprovalEvent) -> ApprovalRequested:
    logger.append_keys(job_id=event.job_id)
    key = storage.approval_key(event.job_id)
    existing = load_approval(event.job_id)
    now = utc_now()
    if existing is not None and existing.task_token == event.task_token:
        logger.info("approval already recorded for this token", extra={"approval_status": existing.status})
        return ApprovalRequested(approval_key=key, status="pending")
    if existing is None:
        record = _new_request(event, now, previous=[])
    elif existing.status == "pending":
        record = existing.model_copy(
            update={
                "task_token": event.task_token,
                "execution_arn": event.execution_arn,
                "report_key": event.report.report_key,
                "token_updated_at": now,
                "requests": existing.requests + 1,
            }
        )
    else:
        record = _new_request(event, now, previous=[*existing.previous, _past(existing)])
    s3_json.put_json(key, record)
    if record.requests == 1:
        metrics.add_metric(name="ApprovalsRequested", unit=MetricUnit.Count, value=1)
    # Never log the token: whoever holds it can complete the task.
    logger.info(
        "approval pending",
        extra={
            "report_key": record.report_key,
            "requests": record.requests,
            "reopened": bool(record.previous),
        },
    )
    return ApprovalRequested(approval_key=key, status="pending")


def check_decision_is_for(event: RecordApprovalEvent) -> None:
    """Refuse a decision made for another job or execution (docs/design.md, "Approval")."""
    decision = event.approval
    other_job = decision.job_id is not None and decision.job_id != event.job_id
    other_execution = (
        decision.execution_arn is not None
        and event.execution_arn is not None
        and decision.execution_arn != event.execution_arn
    )
    if other_job or other_execution:
        logger.warning(
            "approval decision for another job refused",
            extra={"decision_job_id": decision.job_id, "decision_execution_arn": decision.execution_arn},
        )
        raise ApprovalNotForThisJob(
            f"job {event.job_id} ({event.execution_arn}) got a decision made for job {decision.job_id} "
            f"({decision.execution_arn}); it asks for approval again"
        )


def record_approval(event: RecordApprovalEvent) -> ReportApproval:
    logger.append_keys(job_id=event.job_id)
    check_decision_is_for(event)
    decision = event.approval
    if decision.decision != "approved":
        raise ApprovalRejected(f"job {event.job_id}: the approval token was completed with a rejection")
    key = storage.approval_key(event.job_id)
    existing = load_approval(event.job_id)
    if existing is None:
        raise InvalidJobRequest(f"job {event.job_id} was approved but has no {key}")
    already = existing.status == "approved"
    section = ReportApproval(
        decision="approved",
        decided_by=decision.decided_by,
        decided_at=decision.decided_at or (existing.decided_at if already else None) or utc_now(),
        reason=decision.reason,
        requested_at=existing.requested_at,
    )
    recorded = existing.model_copy(
        update={
            "status": "approved",
            "decided_by": section.decided_by,
            "decided_at": section.decided_at,
            "reason": section.reason,
        }
    )
    if recorded != existing:
        if existing.status != "pending" and not already:
            logger.warning(
                "approval.json said otherwise; the workflow's decision wins", extra={"was": existing.status}
            )
        s3_json.put_json(key, recorded)

    report_data = s3_json.get_json_or_none(event.report.report_key)
    if report_data is None:
        raise InvalidJobRequest(f"job {event.job_id} has no report at {event.report.report_key}")
    report = Report.model_validate(report_data)
    if report.approval != section:
        s3_json.put_json(event.report.report_key, report.model_copy(update={"approval": section}))
        metrics.add_metric(name="ApprovalsRecorded", unit=MetricUnit.Count, value=1)
    logger.info(
        "approval recorded", extra={"decided_by": section.decided_by, "decided_at": section.decided_at}
    )
    return section
