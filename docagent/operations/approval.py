"""``docagent approve JOB`` / ``docagent reject JOB --reason TEXT``: the operator's decision on a job that
waits for approval before its actions (docs/design.md, "Approval").

Both read ``jobs/{job}/approval.json``, refuse unless it is pending (no record: exit 3; decided or expired:
exit 2) and bound to the job (its job id, its execution the job's, its task token one that execution's
RequestApproval was scheduled with: else exit 2, nothing sent), complete the recorded task token
(SendTaskSuccess, or SendTaskFailure with ``ApprovalRejected``; both name the job and its execution, which
RecordApproval checks), and then store the decision, who and when in approval.json.
"""

from __future__ import annotations

import argparse
import getpass
import json
from typing import Any

from botocore.exceptions import ClientError
from pydantic import ValidationError

from docagent.operations.context import (
    EXIT_BAD_REQUEST,
    EXIT_JOB_FAILED,
    EXIT_NOT_FOUND,
    EXIT_OK,
    OperatorContext,
    OperatorError,
    command,
    emit,
    target_arguments,
)
from docagent.operations.display import wide_console
from docagent.operations.records import JobRecords, check_job_id, execution_arn_for
from functions.payloads.approval import APPROVAL_REJECTED_ERROR, ApprovalDecision, ApprovalRecord
from functions.payloads.common import utc_now
from functions.storage import approval_key

# What Step Functions answers for a token it no longer accepts.
TOKEN_REFUSED = frozenset({"InvalidToken", "TaskTimedOut", "TaskDoesNotExist"})


def register(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    common: argparse.ArgumentParser,
) -> None:
    target = target_arguments()
    approve = commands.add_parser(
        "approve",
        parents=[common, target],
        help="approve a job that waits for approval; its actions run next",
    )
    approve.add_argument("job_id", metavar="JOB")
    approve.add_argument("--by", help="who approves (default: the current user)")
    approve.add_argument("--reason", help="an optional note stored with the decision")
    approve.set_defaults(handler=cmd_approve)

    reject = commands.add_parser(
        "reject",
        parents=[common, target],
        help="reject a job that waits for approval; it fails with ApprovalRejected and runs no action",
    )
    reject.add_argument("job_id", metavar="JOB")
    reject.add_argument("--reason", required=True, help="why (stored with the decision)")
    reject.add_argument("--by", help="who rejects (default: the current user)")
    reject.set_defaults(handler=cmd_reject)


@command
def cmd_approve(args: argparse.Namespace) -> int:
    return _decide(args, "approved")


@command
def cmd_reject(args: argparse.Namespace) -> int:
    if not args.reason.strip():
        raise OperatorError("--reason must not be empty")
    return _decide(args, "rejected")


def _decide(args: argparse.Namespace, decision: str) -> int:
    payload = decide(OperatorContext.from_args(args), args.job_id, decision, by=args.by, reason=args.reason)
    verb = "approved: the actions run next" if decision == "approved" else "rejected: the job fails"
    emit(
        args,
        payload,
        lambda: wide_console().print(
            f"job {payload['job_id']} {verb} ({payload['decided_by']}, {payload['decided_at']})"
        ),
    )
    return EXIT_OK


def decide(
    context: OperatorContext, job_id: str, decision: str, *, by: str | None, reason: str | None
) -> dict[str, Any]:
    """Approve or reject job ``job_id``'s pending approval (bound to that job: see _check_bound); the
    decision as ``--json`` prints it. The console decides through this function too."""
    job_id = check_job_id(job_id)
    try:
        chosen = ApprovalDecision.model_validate(
            {
                "decision": decision,
                "decided_by": by or getpass.getuser(),
                "decided_at": utc_now(),
                "reason": reason,
            }
        )
    except ValidationError as error:
        raise OperatorError(f"invalid decision: {error.errors()[0]['msg']}") from None
    record = _pending(context, job_id)
    _check_bound(context, job_id, record)
    record = _complete_token(context, record, chosen)
    decided = record.model_copy(
        update={
            "status": chosen.decision,
            "decided_by": chosen.decided_by,
            "decided_at": chosen.decided_at,
            "reason": chosen.reason,
        }
    )
    _store(context, decided)
    return {
        "job_id": job_id,
        "decision": chosen.decision,
        "decided_by": chosen.decided_by,
        "decided_at": chosen.decided_at,
        "reason": chosen.reason,
        "approval_key": approval_key(job_id),
        "execution_arn": record.execution_arn,
    }


def _load(context: OperatorContext, job_id: str) -> ApprovalRecord | None:
    return JobRecords(context, job_id).approval


def _store(context: OperatorContext, record: ApprovalRecord) -> None:
    context.write_json(approval_key(record.job_id), record.model_dump(mode="json"))


def _pending(context: OperatorContext, job_id: str) -> ApprovalRecord:
    record = _load(context, job_id)
    if record is None:
        raise OperatorError(
            f"job {job_id} has no approval request ({approval_key(job_id)} in {context.where}): the job "
            "does not exist, does not require approval, or has not reached RequestApproval yet",
            EXIT_NOT_FOUND,
        )
    if record.status != "pending":
        by = f" by {record.decided_by} at {record.decided_at}" if record.decided_by else ""
        raise OperatorError(
            f"job {job_id} has no pending approval: its approval is {record.status}{by}", EXIT_BAD_REQUEST
        )
    return record


def _check_bound(context: OperatorContext, job_id: str, record: ApprovalRecord) -> None:
    """Refuse a record that would complete another job's task: the decision must reach this job's
    execution."""
    execution = execution_arn_for(context.state_machine_arn, job_id)
    where = approval_key(job_id)
    if record.job_id != job_id:
        raise OperatorError(
            f"{where} names job {record.job_id}, not {job_id}: nothing sent", EXIT_BAD_REQUEST
        )
    if record.execution_arn != execution:
        raise OperatorError(
            f"{where} is for execution {record.execution_arn}, not job {job_id}'s ({execution}): "
            "nothing sent",
            EXIT_BAD_REQUEST,
        )
    if record.task_token not in _requested_tokens(context, execution):
        raise OperatorError(
            f"the task token in {where} is not one job {job_id}'s execution asked for approval with (it "
            "may be another job's): nothing sent. Redrive the job to ask for approval again.",
            EXIT_BAD_REQUEST,
        )


def _requested_tokens(context: OperatorContext, execution_arn: str) -> set[str]:
    """The task tokens the execution's RequestApproval tasks were scheduled with (the ``TaskScheduled``
    events' parameters carry the resolved payload, ``task_token`` included); newest first, so a long history
    is read only back to its latest request."""
    states = context.client("stepfunctions")
    tokens: set[str] = set()
    request: dict[str, Any] = {"executionArn": execution_arn, "reverseOrder": True, "maxResults": 1000}
    while True:
        try:
            page = states.get_execution_history(**request)
        except ClientError:
            return tokens
        for event in page.get("events", []):
            details = event.get("taskScheduledEventDetails") or {}
            try:
                payload = json.loads(details.get("parameters") or "{}").get("Payload") or {}
            except (ValueError, AttributeError):
                continue
            if isinstance(payload, dict) and payload.get("action") == "request" and payload.get("task_token"):
                tokens.add(str(payload["task_token"]))
        if tokens or not page.get("nextToken"):
            return tokens
        request["nextToken"] = page["nextToken"]


def _execution_state(context: OperatorContext, record: ApprovalRecord) -> dict[str, Any] | None:
    if not record.execution_arn:
        return None
    try:
        described: dict[str, Any] = context.client("stepfunctions").describe_execution(
            executionArn=record.execution_arn
        )
    except ClientError:
        return None
    return described


def _send(context: OperatorContext, record: ApprovalRecord, decision: ApprovalDecision) -> None:
    states = context.client("stepfunctions")
    bound = {"job_id": record.job_id, "execution_arn": record.execution_arn}
    if decision.decision == "approved":
        output = {**decision.model_dump(mode="json", exclude={"job_id", "execution_arn"}), **bound}
        states.send_task_success(taskToken=record.task_token, output=json.dumps(output))
    else:
        cause = {
            **bound,
            "decided_by": decision.decided_by,
            "decided_at": decision.decided_at,
            "reason": decision.reason,
        }
        states.send_task_failure(
            taskToken=record.task_token, error=APPROVAL_REJECTED_ERROR, cause=json.dumps(cause)
        )


def _complete_token(
    context: OperatorContext, record: ApprovalRecord, decision: ApprovalDecision
) -> ApprovalRecord:
    """Complete the newest token; the record it was sent with (a retried request may have replaced it)."""
    for _ in range(2):
        # Step Functions refuses a token whose task timed out; checking first also covers local clouds that
        # accept a failure for a finished execution.
        execution = _execution_state(context, record)
        if execution is not None and execution["status"] != "RUNNING":
            _expire(context, record)
            raise _no_longer_waiting(record, execution)
        try:
            _send(context, record, decision)
            return record
        except ClientError as error:
            code = error.response.get("Error", {}).get("Code", "")
            if code not in TOKEN_REFUSED:
                raise
        fresh = _load(context, record.job_id)
        if fresh is None or fresh.status != "pending" or fresh.task_token == record.task_token:
            execution = _execution_state(context, record)
            if execution is not None and execution["status"] != "RUNNING":
                _expire(context, record)
                raise _no_longer_waiting(record, execution)
            raise OperatorError(
                f"Step Functions refused job {record.job_id}'s approval token ({code}); if the job is "
                "retrying its approval request, try again in a few seconds",
                EXIT_BAD_REQUEST,
            )
        _check_bound(context, record.job_id, fresh)
        record = fresh  # a retried RequestApproval replaced the token: the newest one is the valid one
    raise OperatorError(f"job {record.job_id}'s approval token keeps changing; try again", EXIT_BAD_REQUEST)


def _expire(context: OperatorContext, record: ApprovalRecord) -> None:
    current = _load(context, record.job_id)
    if current is not None and current.status == "pending" and current.task_token == record.task_token:
        _store(context, current.model_copy(update={"status": "expired"}))


def _no_longer_waiting(record: ApprovalRecord, execution: dict[str, Any]) -> OperatorError:
    if execution["status"] == "ABORTED":  # StopExecution: the job failed by an operator's hand, not by itself
        given = ": ".join(str(execution[key]) for key in ("error", "cause") if execution.get(key))
        return OperatorError(
            f"job {record.job_id} was stopped (ABORTED{f', {given}' if given else ''}) while it waited for "
            "approval: nothing was approved. Redrive the execution to ask for approval again.",
            EXIT_JOB_FAILED,
            "JobStopped",
        )
    error = f" ({execution['error']})" if execution.get("error") else ""
    return OperatorError(
        f"job {record.job_id} no longer waits for approval: its execution is {execution['status']}{error}. "
        "Redrive the execution to ask for approval again.",
        EXIT_BAD_REQUEST,
    )
