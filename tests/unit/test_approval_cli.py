"""``docagent approve`` / ``reject`` against moto's S3, with a recording Step Functions client."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from docagent import cli
from docagent.operator.context import OperatorContext
from functions.handlers import request_approval
from tests.fakes import FakeLambdaContext
from tests.support import BUCKET, get_json, s3

JOB = "job-cli"
KEY = f"jobs/{JOB}/approval.json"
EXECUTION = f"arn:aws:states:us-east-1:123456789012:execution:DocAgent-DocumentReview:{JOB}"
REPORT = {"report_key": f"jobs/{JOB}/report.json", "documents": 1, "extracted": 1, "rejected": 0}


class RecordingStepFunctions:
    """Accepts tokens in ``valid`` only; describe_execution answers ``status``."""

    def __init__(self) -> None:
        self.valid = {"token-1"}
        self.status: dict[str, Any] = {"status": "RUNNING"}
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.before_refusal: Any = None

    def _check(self, name: str, kwargs: dict[str, Any]) -> None:
        self.calls.append((name, kwargs))
        if kwargs["taskToken"] not in self.valid:
            if self.before_refusal:
                self.before_refusal()
            raise ClientError({"Error": {"Code": "InvalidToken", "Message": "Invalid token"}}, name)

    def send_task_success(self, **kwargs: Any) -> None:
        self._check("send_task_success", kwargs)

    def send_task_failure(self, **kwargs: Any) -> None:
        self._check("send_task_failure", kwargs)

    def describe_execution(self, executionArn: str) -> dict[str, Any]:  # noqa: N803 (boto3's name)
        return {"executionArn": executionArn, **self.status}


@pytest.fixture
def states(cloud, monkeypatch) -> RecordingStepFunctions:
    fake = RecordingStepFunctions()
    context = OperatorContext(
        endpoint=None,
        stack_name="DocAgent",
        outputs={"BucketName": BUCKET, "StateMachineArn": "arn:aws:states:::stateMachine:x"},
        session=boto3.session.Session(),
    )
    context._clients["stepfunctions"] = fake
    monkeypatch.setattr(OperatorContext, "from_args", classmethod(lambda cls, args: context))
    return fake


def ask(token: str = "token-1") -> None:
    event = {
        "action": "request",
        "job_id": JOB,
        "report": REPORT,
        "task_token": token,
        "execution_arn": EXECUTION,
    }
    request_approval.handler(event, FakeLambdaContext())


def run(capsys, *argv: str) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()  # drop the handler's log lines
    code = cli.main([*argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_approve_completes_the_token_and_stores_who_and_when(states, capsys):
    ask()
    code, out = run(capsys, "approve", JOB, "--by", "alice")
    assert code == 0, out
    assert out["decision"] == "approved" and out["decided_by"] == "alice" and out["approval_key"] == KEY
    ((name, kwargs),) = states.calls
    assert name == "send_task_success" and kwargs["taskToken"] == "token-1"
    sent = json.loads(kwargs["output"])
    assert sent == {
        "job_id": JOB,
        "decision": "approved",
        "decided_by": "alice",
        "decided_at": out["decided_at"],
        "reason": None,
    }
    stored = get_json(KEY)
    assert (stored["status"], stored["decided_by"], stored["decided_at"]) == (
        "approved",
        "alice",
        out["decided_at"],
    )


def test_reject_fails_the_task_with_approval_rejected(states, capsys):
    ask()
    code, out = run(capsys, "reject", JOB, "--reason", "totals look wrong", "--by", "bob")
    assert code == 0, out
    ((name, kwargs),) = states.calls
    assert name == "send_task_failure" and kwargs["error"] == "ApprovalRejected"
    assert json.loads(kwargs["cause"])["reason"] == "totals look wrong"
    stored = get_json(KEY)
    assert (stored["status"], stored["decided_by"], stored["reason"]) == (
        "rejected",
        "bob",
        "totals look wrong",
    )


def test_no_approval_request_is_not_found(states, capsys):
    code, out = run(capsys, "approve", JOB)
    assert code == 3
    assert "no approval request" in out["error"]
    assert states.calls == []


def test_a_decided_approval_is_refused(states, capsys):
    ask()
    assert run(capsys, "approve", JOB, "--by", "alice")[0] == 0
    code, out = run(capsys, "reject", JOB, "--reason", "too late")
    assert code == 2
    assert "approved by alice" in out["error"]
    assert len(states.calls) == 1


def test_a_bad_job_id_or_an_empty_reason_is_a_bad_request(states, capsys):
    assert run(capsys, "approve", "no such/job")[0] == 2
    ask()
    assert run(capsys, "reject", JOB, "--reason", "  ")[0] == 2
    assert states.calls == []


def test_an_execution_that_stopped_waiting_expires_the_approval(states, capsys):
    ask()
    states.status = {"status": "FAILED", "error": "States.Timeout"}
    code, out = run(capsys, "approve", JOB)
    assert code == 2
    assert "FAILED (States.Timeout)" in out["error"] and "Redrive" in out["error"]
    assert states.calls == []
    assert get_json(KEY)["status"] == "expired"
    assert run(capsys, "approve", JOB)[0] == 2


def test_a_token_replaced_by_a_retried_request_is_followed(states, capsys):
    ask("token-0")  # the approver read this one; a retry replaces it before the decision arrives
    states.before_refusal = lambda: ask("token-1")
    code, out = run(capsys, "approve", JOB, "--by", "carol")
    assert code == 0, out
    assert [kwargs["taskToken"] for _, kwargs in states.calls] == ["token-0", "token-1"]
    stored = get_json(KEY)
    assert (stored["status"], stored["task_token"], stored["requests"]) == ("approved", "token-1", 2)


def test_a_refused_token_on_a_running_execution_is_a_bad_request_and_stays_pending(states, capsys):
    ask("token-0")
    code, out = run(capsys, "approve", JOB)
    assert code == 2 and "InvalidToken" in out["error"]
    assert get_json(KEY)["status"] == "pending"


def test_the_human_view_names_the_decision(states, capsys):
    ask()
    assert cli.main(["approve", JOB, "--by", "dave"]) == 0
    assert s3().head_object(Bucket=BUCKET, Key=KEY)
