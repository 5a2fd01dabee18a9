"""Human approval before the actions, on the local cloud with the synthesized workflow (docs/semantics.md L3).

The pending approval is durable in S3 and the waiting execution lives in the interpreter, not in a worker: the
worker pool can die while a job waits, and the operator's decision still completes it.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from docagent import cli, project
from docagent.drills.demo_corpus import seed_inputs
from docagent.drills.local_job import LocalJob
from docagent.localcloud.server import LocalCloud
from tests.integration.conftest import aws_cli
from tests.support import wait_for_execution

APPROVAL = {"require_approval": True}


@pytest.fixture
def operator(cloud: LocalCloud, deployed, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys):
    """Runs ``docagent ... --endpoint <session cloud> --json`` in-process: (exit code, JSON output)."""
    stack_file = tmp_path / "stack.json"
    deployed.save(stack_file)
    monkeypatch.setattr(project, "LOCAL_STACK_FILE", stack_file)

    def run(*argv: str) -> tuple[int, dict[str, Any]]:
        capsys.readouterr()
        code = cli.main([*argv, "--endpoint", cloud.endpoint, "--json"])
        return code, json.loads(capsys.readouterr().out)

    return run


def start(cloud: LocalCloud, deployed, job_id: str, documents: int, options: dict[str, Any]) -> LocalJob:
    job = LocalJob.on(cloud.endpoint, deployed, job_id)
    prefix = f"incoming/{job_id}/"
    seed_inputs(job, documents, prefix)
    job.start({"job_id": job_id, "prefix": prefix, "options": options})
    return job


def wait_for_pending_approval(job: LocalJob, timeout: float = 180) -> dict[str, Any]:
    key = f"jobs/{job.job_id}/approval.json"
    deadline = time.time() + timeout
    while time.time() < deadline:
        if job.records.keys(key):
            approval: dict[str, Any] = job.records.read_json(key)
            if approval["status"] == "pending":
                return approval
        assert job.status() == "RUNNING", job.sfn.describe_execution(executionArn=job.execution_arn)
        time.sleep(0.2)
    raise AssertionError(f"{job.job_id} never asked for approval")


def wait_until_done(job: LocalJob, timeout: float = 180) -> dict[str, Any]:
    return wait_for_execution(job.sfn, job.execution_arn, timeout=timeout)


def entered_states(job: LocalJob) -> list[str]:
    history = job.sfn.get_execution_history(executionArn=job.execution_arn, maxResults=1000)["events"]
    return [
        event["stateEnteredEventDetails"]["name"] for event in history if "stateEnteredEventDetails" in event
    ]


def test_approval_survives_the_worker_pool_and_the_decision_reaches_the_report(cloud, deployed, operator):
    job = start(cloud, deployed, "integration-approve", documents=6, options=APPROVAL)
    pending = wait_for_pending_approval(job)
    assert pending["report_key"] == "jobs/integration-approve/report.json"
    assert pending["execution_arn"] == job.execution_arn
    assert pending["task_token"] and pending["requested_at"]
    assert job.tickets() == [], "no side effect before the approval"

    cloud.runtime.shutdown()  # every worker dies while the execution waits for the token
    assert cloud.runtime.workers() == []
    time.sleep(0.5)
    assert job.status() == "RUNNING"

    code, out = operator("approve", "integration-approve", "--by", "alice")
    assert code == 0, out
    assert (out["decision"], out["decided_by"]) == ("approved", "alice")

    described = wait_until_done(job)
    assert described["status"] == "SUCCEEDED", described.get("cause")
    output = json.loads(described["output"])
    assert output["verification"]["verified"] is True
    assert output["approval"]["decided_by"] == "alice"
    assert len(job.tickets()) == 1
    report = job.records.read_json(output["report"]["report_key"])
    assert report["approval"] == {
        "decision": "approved",
        "decided_by": "alice",
        "decided_at": out["decided_at"],
        "reason": None,
        "requested_at": pending["requested_at"],
    }
    approval = job.records.read_json("jobs/integration-approve/approval.json")
    assert (approval["status"], approval["decided_by"], approval["decided_at"]) == (
        "approved", "alice", out["decided_at"],
    )  # fmt: skip
    states = entered_states(job)
    assert states.index("RequestApproval") < states.index("RecordApproval") < states.index("RunActions")

    code, out = operator("approve", "integration-approve")
    assert code == 2 and "approved by alice" in out["error"]


def test_a_rejection_fails_the_job_without_a_ticket_and_its_redrive_asks_again(cloud, deployed, operator):
    """One job (two until 2026-12-07, the first only rejected): rejected, it fails without a ticket; redriven,
    it asks again with a new token, and the second decision reaches the report."""
    job = start(cloud, deployed, "approval-redrive", documents=3, options=APPROVAL)
    first = wait_for_pending_approval(job)

    code, out = operator("reject", "approval-redrive", "--reason", "totals look wrong", "--by", "bob")
    assert code == 0, out

    described = wait_until_done(job)
    assert described["status"] == "FAILED"
    assert described["error"] == "ApprovalRejected"
    cause = json.loads(described["cause"])
    assert (cause["decided_by"], cause["reason"]) == ("bob", "totals look wrong")
    assert job.tickets() == []
    assert "RunActions" not in entered_states(job)
    approval = job.records.read_json("jobs/approval-redrive/approval.json")
    assert (approval["status"], approval["decided_by"], approval["reason"]) == (
        "rejected", "bob", "totals look wrong",
    )  # fmt: skip

    code, out = operator("approve", "approval-redrive")
    assert code == 2 and "rejected by bob" in out["error"]

    # the standard AWS CLI's redrive-execution (test_local_job.py's own crashed job until 2026-12-07)
    aws_cli(cloud, "stepfunctions", "redrive-execution", "--execution-arn", job.execution_arn)
    again = wait_for_pending_approval(job)
    assert again["task_token"] != first["task_token"]
    assert [(past["status"], past["decided_by"]) for past in again["previous"]] == [("rejected", "bob")]

    assert operator("approve", "approval-redrive", "--by", "carol")[0] == 0
    described = wait_until_done(job)
    assert described["status"] == "SUCCEEDED", described.get("cause")
    assert described["redriveCount"] == 1
    assert json.loads(described["output"])["verification"]["verified"] is True
    assert len(job.tickets()) == 1
    assert job.records.read_json("jobs/approval-redrive/report.json")["approval"]["decided_by"] == "carol"


def test_l3_no_decision_within_timeout_seconds_fails_with_states_timeout(cloud, deployed, operator):
    """The deployed definition with RequestApproval's TimeoutSeconds (config approval_timeout_seconds) set to
    24: the local cloud scales task timeouts like retry intervals, Wait states and Lambda timeouts, so at
    this suite's time scale (0.25) the approval expires after 6 s."""
    states = LocalJob.on(cloud.endpoint, deployed, "unused").sfn
    machine = states.describe_state_machine(stateMachineArn=deployed.outputs["StateMachineArn"])
    definition = json.loads(machine["definition"])
    assert definition["States"]["RequestApproval"]["TimeoutSeconds"] == 86_400  # the default config
    definition["States"]["RequestApproval"]["TimeoutSeconds"] = 24
    # a machine the template does not have: the workflow role may not start its Map's children (local IAM),
    # so it runs as a role of its own, created by hand (not evaluated: docs/local-cloud.md "IAM")
    short = states.create_state_machine(
        name="DocAgent-ApprovalTimeout",
        definition=json.dumps(definition),
        roleArn=machine["roleArn"].replace(machine["roleArn"].rsplit("/", 1)[1], "approval-timeout-test"),
    )["stateMachineArn"]
    short_stack = type(deployed)(
        deployed.stack_name, deployed.physical, {**deployed.outputs, "StateMachineArn": short}
    )
    short_stack.save(project.LOCAL_STACK_FILE)  # the operator's approve looks for the job on this machine
    job = start(cloud, short_stack, "integration-timeout", documents=2, options=APPROVAL)
    wait_for_pending_approval(job)
    described = wait_until_done(job, timeout=60)
    assert described["status"] == "FAILED"
    assert described["error"] == "States.Timeout"
    assert job.tickets() == []

    code, out = operator("approve", "integration-timeout")
    assert code == 2 and "States.Timeout" in out["error"]
    assert job.records.read_json("jobs/integration-timeout/approval.json")["status"] == "expired"


def test_a_token_swapped_into_another_jobs_record_is_refused_and_changes_neither_job(
    cloud, deployed, operator
):
    mine = start(cloud, deployed, "swap-mine", documents=2, options=APPROVAL)
    theirs = start(cloud, deployed, "swap-theirs", documents=2, options=APPROVAL)
    my_record, their_record = wait_for_pending_approval(mine), wait_for_pending_approval(theirs)
    my_key, their_key = "jobs/swap-mine/approval.json", "jobs/swap-theirs/approval.json"
    swapped = {**my_record, "task_token": their_record["task_token"]}
    mine.records.ctx.write_json(my_key, swapped)

    # The CLI: the token is not one swap-mine's execution asked with (its history says which): nothing sent.
    for argv in (("approve", "swap-mine", "--by", "mallory"), ("reject", "swap-mine", "--reason", "x")):
        code, out = operator(*argv)
        assert code == 2 and "not one job swap-mine's execution asked" in out["error"], out
    assert mine.records.read_json(my_key) == swapped
    assert theirs.records.read_json(their_key) == their_record
    assert (mine.status(), theirs.status()) == ("RUNNING", "RUNNING")

    # The workflow: a decision naming swap-mine that reaches swap-theirs' task (completed by hand from the
    # swapped record) is refused by RecordApproval, which asks swap-theirs for approval again.
    decision = {"job_id": "swap-mine", "execution_arn": mine.execution_arn, "decision": "approved"}
    theirs.sfn.send_task_success(taskToken=swapped["task_token"], output=json.dumps(decision))
    deadline = time.time() + 120
    while theirs.records.read_json(their_key)["task_token"] == their_record["task_token"]:
        assert time.time() < deadline, "swap-theirs never asked again"
        time.sleep(0.2)
    asked_again = wait_for_pending_approval(theirs)
    assert asked_again["requests"] == 2 and asked_again["decided_by"] is None
    assert theirs.status() == "RUNNING" and theirs.tickets() == []
    assert theirs.records.read_json("jobs/swap-theirs/report.json")["approval"] is None
    states = entered_states(theirs)
    assert states.count("RequestApproval") == 2 and "RunActions" not in states

    # Each job, approved with its own record, completes as itself.
    mine.records.ctx.write_json(my_key, my_record)
    for job, name in ((mine, "swap-mine"), (theirs, "swap-theirs")):
        code, out = operator("approve", name, "--by", "alice")
        assert code == 0, out
        described = wait_until_done(job)
        assert described["status"] == "SUCCEEDED", described.get("cause")
        assert len(job.tickets()) == 1


def test_a_job_stopped_while_it_waits_is_aborted_and_approve_says_so(cloud, deployed, operator):
    """StopExecution (the AWS CLI's stop-execution) on a job waiting for approval: ABORTED at once with the
    given error and cause; `status` shows it stopped, `approve` refuses with exit 1 and approves nothing."""
    job = start(cloud, deployed, "integration-stopped", documents=2, options=APPROVAL)
    wait_for_pending_approval(job)
    aws_cli(
        cloud, "stepfunctions", "stop-execution", "--execution-arn", job.execution_arn,
        "--error", "Operator.Cancelled", "--cause", "wrong batch",
    )  # fmt: skip

    code, status = operator("status", "integration-stopped")
    assert code == 1
    assert (status["status"], status["error"], status["cause"]) == (
        "ABORTED",
        "Operator.Cancelled",
        "wrong batch",
    )

    code, out = operator("approve", "integration-stopped", "--by", "alice")
    assert code == 1, out
    assert out["error_type"] == "JobStopped"
    assert (
        "was stopped" in out["error"]
        and "Operator.Cancelled" in out["error"]
        and "wrong batch" in out["error"]
    )
    assert job.records.read_json("jobs/integration-stopped/approval.json")["status"] == "expired"
    assert job.status() == "ABORTED"
    assert job.tickets() == []
