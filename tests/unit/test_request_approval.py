"""request_approval: the pending approval is durable and idempotent, the decision lands in approval.json and
the report, and a job through the approval branch of the ASL still verifies."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from functions.errors import ApprovalNotForThisJob, ApprovalRejected, InvalidJobRequest
from functions.handlers import build_report, request_approval, run_actions, verify_job
from functions.logic.request_approval import load_approval, record_approval
from functions.payloads.approval import RecordApprovalEvent
from functions.payloads.job import JobOptions, JobRequest
from functions.payloads.report import Report, ReportSummary
from tests.fakes import FakeLambdaContext
from tests.moto_state import build_once
from tests.support import BUCKET, get_json, prepare, process_all, s3, seed_documents

JOB = "job-approval"
APPROVAL_KEY = f"jobs/{JOB}/approval.json"
DECISION = {
    "decision": "approved",
    "decided_by": "alice",
    "decided_at": "2026-11-29T12:00:00Z",
    "reason": None,
}


@pytest.fixture
def summary(cloud) -> dict[str, Any]:
    """A prepared, processed and reported job that requires approval: build_report's output."""

    def build() -> dict[str, Any]:
        seed_documents(3)
        job = prepare(JOB, options={"require_approval": True})
        assert job.options.require_approval is True
        process_all(job)
        return build_report.handler({"job_id": JOB, "map_run": {}}, FakeLambdaContext())

    return build_once("request_approval.summary", build)


def request(summary: dict[str, Any], token: str, **extra: Any) -> dict[str, Any]:
    event = {"action": "request", "job_id": JOB, "report": summary, "task_token": token, **extra}
    return request_approval.handler(event, FakeLambdaContext())


def record(summary: dict[str, Any], approval: dict[str, Any]) -> dict[str, Any]:
    event = {"action": "record", "job_id": JOB, "report": summary, "approval": approval}
    return request_approval.handler(event, FakeLambdaContext())


def raw(key: str) -> bytes:
    return bytes(s3().get_object(Bucket=BUCKET, Key=key)["Body"].read())


# ------------------------------------------------------------------------------------------- options


def test_require_approval_defaults_to_false_and_is_normalised():
    request = JobRequest.model_validate({"job_id": "j1", "prefix": "a/"})
    assert request.options.model_dump() == {
        "fault": None,
        "require_approval": False,
        "max_cost_usd": None,
        "inference": "on_demand",
    }
    assert JobOptions.model_validate({"require_approval": True}).require_approval is True


def test_the_old_reserved_approval_key_is_accepted_only_as_null():
    assert JobOptions.model_validate({"fault": None, "approval": None}) == JobOptions()
    with pytest.raises(ValidationError, match="require_approval"):
        JobOptions.model_validate({"approval": {"required": True}})


# ------------------------------------------------------------------------------------------- request


def test_request_records_a_pending_approval_and_returns_at_once(summary):
    arn = f"arn:aws:states:us-east-1:123456789012:execution:DocAgent-DocumentReview:{JOB}"
    assert request(summary, "token-1", execution_arn=arn) == {
        "approval_key": APPROVAL_KEY,
        "status": "pending",
    }
    stored = get_json(APPROVAL_KEY)
    assert stored["status"] == "pending"
    assert stored["job_id"] == JOB
    assert stored["report_key"] == f"jobs/{JOB}/report.json"
    assert stored["task_token"] == "token-1"
    assert stored["execution_arn"] == arn
    assert stored["requested_at"] == stored["token_updated_at"]
    assert stored["requests"] == 1
    assert stored["decided_by"] is None and stored["previous"] == []


def test_the_same_token_again_changes_nothing(summary):
    request(summary, "token-1")
    before = raw(APPROVAL_KEY)
    request(summary, "token-1")
    assert raw(APPROVAL_KEY) == before


def test_a_retried_request_with_a_new_token_replaces_the_token(summary):
    request(summary, "token-1")
    first = get_json(APPROVAL_KEY)
    request(summary, "token-2")
    second = get_json(APPROVAL_KEY)
    assert second["task_token"] == "token-2", "only the newest token is valid"
    assert second["status"] == "pending"
    assert second["requested_at"] == first["requested_at"]
    assert second["requests"] == 2


@pytest.mark.parametrize("outcome", ["approved", "rejected", "expired"])
def test_a_request_after_an_outcome_asks_again_and_keeps_the_old_one(summary, outcome):
    request(summary, "token-1")
    decided = get_json(APPROVAL_KEY) | {
        "status": outcome,
        "decided_by": "bob",
        "decided_at": "2026-11-29T13:00:00Z",
    }
    s3().put_object(Bucket=BUCKET, Key=APPROVAL_KEY, Body=json.dumps(decided).encode())
    request(summary, "token-redrive")
    reopened = get_json(APPROVAL_KEY)
    assert reopened["status"] == "pending" and reopened["task_token"] == "token-redrive"
    assert reopened["decided_by"] is None and reopened["requests"] == 1
    assert reopened["previous"] == [
        {
            "status": outcome,
            "requested_at": decided["requested_at"],
            "decided_by": "bob",
            "decided_at": "2026-11-29T13:00:00Z",
            "reason": None,
        }
    ]


def test_a_malformed_request_is_refused(summary):
    with pytest.raises(ValidationError):
        request(summary, "")


# -------------------------------------------------------------------------------------------- record


def test_record_writes_the_decision_into_approval_json_and_the_report(summary):
    request(summary, "token-1")
    requested_at = get_json(APPROVAL_KEY)["requested_at"]
    section = record(summary, {"job_id": JOB, **DECISION})
    assert section == {
        "decision": "approved",
        "decided_by": "alice",
        "decided_at": "2026-11-29T12:00:00Z",
        "reason": None,
        "requested_at": requested_at,
    }
    stored = get_json(APPROVAL_KEY)
    assert (stored["status"], stored["decided_by"], stored["decided_at"]) == (
        "approved", "alice", "2026-11-29T12:00:00Z",
    )  # fmt: skip
    assert stored["task_token"] == "token-1"
    report = Report.model_validate(get_json(summary["report_key"]))
    assert report.approval is not None and report.approval.model_dump() == section


def test_recording_twice_rewrites_nothing(summary):
    request(summary, "token-1")
    record(summary, DECISION)
    approval, report = raw(APPROVAL_KEY), raw(summary["report_key"])
    record(summary, DECISION)
    assert (raw(APPROVAL_KEY), raw(summary["report_key"])) == (approval, report)


def test_a_decision_completed_by_hand_still_records_and_stays_stable(summary):
    """SendTaskSuccess with an empty output (console, aws cli): who is unknown; when is fixed by the first
    record."""
    request(summary, "token-1")
    first = record(summary, {})
    assert first["decided_by"] == "unknown" and first["decided_at"]
    assert record(summary, {}) == first


def test_a_rejection_passed_as_success_fails_the_step(summary):
    request(summary, "token-1")
    event = RecordApprovalEvent.model_validate(
        {
            "action": "record",
            "job_id": JOB,
            "report": summary,
            "approval": DECISION | {"decision": "rejected"},
        }
    )
    with pytest.raises(ApprovalRejected):
        record_approval(event)
    assert get_json(APPROVAL_KEY)["status"] == "pending"


EXECUTION = f"arn:aws:states:us-east-1:123456789012:execution:DocAgent-DocumentReview:{JOB}"


@pytest.mark.parametrize(
    "bound",
    [
        {"job_id": "job-other"},
        {"job_id": JOB, "execution_arn": EXECUTION.replace(JOB, "job-other")},
    ],
)
def test_a_decision_for_another_job_or_execution_is_refused_and_records_nothing(summary, bound):
    request(summary, "token-1", execution_arn=EXECUTION)
    before = (raw(APPROVAL_KEY), raw(summary["report_key"]))
    event = RecordApprovalEvent.model_validate(
        {
            "action": "record",
            "job_id": JOB,
            "execution_arn": EXECUTION,
            "report": summary,
            "approval": {**DECISION, **bound},
        }
    )
    with pytest.raises(ApprovalNotForThisJob, match="job-other"):
        record_approval(event)
    assert (raw(APPROVAL_KEY), raw(summary["report_key"])) == before
    assert get_json(APPROVAL_KEY)["status"] == "pending"


def test_a_decision_naming_this_job_and_execution_records(summary):
    request(summary, "token-1", execution_arn=EXECUTION)
    event = {"action": "record", "job_id": JOB, "execution_arn": EXECUTION, "report": summary}
    section = request_approval.handler(
        {**event, "approval": {**DECISION, "job_id": JOB, "execution_arn": EXECUTION}}, FakeLambdaContext()
    )
    assert section["decided_by"] == "alice"
    assert get_json(APPROVAL_KEY)["status"] == "approved"


def test_recording_without_a_request_is_an_error(summary):
    event = RecordApprovalEvent.model_validate(
        {"action": "record", "job_id": JOB, "report": summary, "approval": DECISION}
    )
    with pytest.raises(InvalidJobRequest, match=r"approval\.json"):
        record_approval(event)
    assert load_approval(JOB) is None


def test_reports_without_approval_say_so(summary):
    assert get_json(summary["report_key"])["approval"] is None


def test_an_approved_job_still_verifies(summary):
    """The ASL's approval branch: BuildReport, RequestApproval, RecordApproval, RunActions, VerifyJob."""
    report = ReportSummary.model_validate(summary).model_dump(mode="json")
    request(summary, "token-1")
    record(summary, DECISION)
    actions = run_actions.handler({"job_id": JOB, "report": report}, FakeLambdaContext())["actions"]
    verification = verify_job.handler(
        {"job_id": JOB, "report": report, "actions": actions}, FakeLambdaContext()
    )
    assert verification["verified"] is True
    assert get_json(summary["report_key"])["approval"]["decided_by"] == "alice"
