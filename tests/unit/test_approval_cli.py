"""``docagent approve`` / ``reject`` against moto's S3, with a recording Step Functions client."""

from __future__ import annotations

import json
from typing import Any

import pytest
from botocore.exceptions import ClientError

from docagent import cli
from docagent.operations.context import OperatorContext
from docagent.operations.sessions import new_session
from functions.handlers import request_approval
from tests.fakes import FakeLambdaContext
from tests.support import BUCKET, get_json, s3

JOB = "job-cli"
KEY = f"jobs/{JOB}/approval.json"
STATE_MACHINE = "arn:aws:states:us-east-1:123456789012:stateMachine:DocAgent-DocumentReview"
EXECUTION = f"arn:aws:states:us-east-1:123456789012:execution:DocAgent-DocumentReview:{JOB}"
REPORT = {"report_key": f"jobs/{JOB}/report.json", "documents": 1, "extracted": 1, "rejected": 0}


class RecordingStepFunctions:
    """Accepts tokens in ``valid`` only; describe_execution answers ``status``; the history of an execution
    has a RequestApproval ``TaskScheduled`` event for each token in ``scheduled[execution ARN]``."""

    def __init__(self) -> None:
        self.valid = {"token-1"}
        self.scheduled: dict[str, list[str]] = {EXECUTION: ["token-0", "token-1"]}
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

    def get_execution_history(self, executionArn: str, **_: Any) -> dict[str, Any]:  # noqa: N803
        def scheduled(token: str) -> dict[str, Any]:
            payload = {"action": "request", "job_id": executionArn.rsplit(":", 1)[-1], "task_token": token}
            parameters = {"FunctionName": "f", "Payload": payload}
            return {
                "type": "TaskScheduled",
                "taskScheduledEventDetails": {"parameters": json.dumps(parameters)},
            }

        return {"events": [scheduled(token) for token in reversed(self.scheduled.get(executionArn, []))]}


@pytest.fixture
def states(cloud, monkeypatch) -> RecordingStepFunctions:
    fake = RecordingStepFunctions()
    context = OperatorContext(
        endpoint=None,
        stack_name="DocAgent",
        outputs={"BucketName": BUCKET, "StateMachineArn": STATE_MACHINE},
        session=new_session(),
    )
    context._clients["stepfunctions"] = fake
    monkeypatch.setattr(OperatorContext, "from_args", classmethod(lambda cls, args: context))
    return fake


def ask(token: str = "token-1", job_id: str = JOB) -> None:
    event = {
        "action": "request",
        "job_id": job_id,
        "report": {**REPORT, "report_key": f"jobs/{job_id}/report.json"},
        "task_token": token,
        "execution_arn": EXECUTION.replace(JOB, job_id),
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
        "execution_arn": EXECUTION,
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


def test_another_jobs_token_swapped_into_the_record_is_refused_and_changes_neither_job(states, capsys):
    other = "job-other"
    states.scheduled[EXECUTION.replace(JOB, other)] = ["token-other"]
    states.valid.add("token-other")
    ask()
    ask("token-other", job_id=other)
    mine = get_json(KEY)
    s3().put_object(Bucket=BUCKET, Key=KEY, Body=json.dumps({**mine, "task_token": "token-other"}))
    swapped = get_json(KEY)
    theirs = get_json(f"jobs/{other}/approval.json")
    for argv in (("approve", JOB, "--by", "mallory"), ("reject", JOB, "--reason", "no")):
        code, out = run(capsys, *argv)
        assert code == 2, out
        assert "not one job job-cli's execution asked for approval with" in out["error"]
    assert states.calls == [], "no token was sent"
    assert get_json(KEY) == swapped
    assert get_json(f"jobs/{other}/approval.json") == theirs


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("job_id", "job-other", "names job job-other"),
        ("execution_arn", EXECUTION.replace(JOB, "job-other"), "is for execution"),
        ("execution_arn", None, "is for execution None"),
    ],
)
def test_a_record_naming_another_job_or_execution_is_refused(states, capsys, field, value, says):
    ask()
    record = {**get_json(KEY), field: value}
    s3().put_object(Bucket=BUCKET, Key=KEY, Body=json.dumps(record))
    code, out = run(capsys, "approve", JOB)
    assert code == 2 and says in out["error"], out
    assert states.calls == []
    assert get_json(KEY) == record
