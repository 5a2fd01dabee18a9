"""A job whose definition says ``"review": {"wait": true}``, on the local cloud with the synthesized workflow
(docs/design.md, "Review"): it waits in WaitForReview (the token durable in review-wait.json, the execution in
the interpreter, not in a worker), the reviewers' last decision lets it go on, and its report shows the
decisions; a job stopped while it waited and redriven after its queue was decided goes on at once."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from docagent.drills.demo_corpus import seed_inputs
from docagent.drills.local_job import LocalJob
from docagent.localcloud.server import LocalCloud
from tests.support import EXAMPLES, wait_for_execution

DEFINITION = "invoices-wait"


@pytest.fixture
def published(docagent, tmp_path: Path) -> str:
    """The invoice example, its invoices over 1000 sent to review, its jobs waiting for the queue: a
    test-local definition folder, published under its own name (the session's other jobs keep the example)."""
    folder = tmp_path / DEFINITION
    shutil.copytree(EXAMPLES / "invoices", folder)
    job_file = folder / "job.json"
    definition = json.loads(job_file.read_text())
    definition["name"] = DEFINITION
    definition["review"] = {"wait": True}
    rule = {"type": "rule", "name": "small", "field": "amount", "maximum": 1000, "on_fail": "review"}
    definition["classes"]["invoice"]["checks"].append(rule)
    job_file.write_text(json.dumps(definition))
    code, answer = docagent("definition", "publish", str(folder))
    assert code == 0, answer
    return DEFINITION


def start(cloud: LocalCloud, deployed, job_id: str, documents: int) -> LocalJob:
    job = LocalJob.on(cloud.endpoint, deployed, job_id)
    prefix = f"incoming/{job_id}/"
    seed_inputs(job, documents, prefix)
    job.start({"job_id": job_id, "prefix": prefix, "definition": DEFINITION})
    return job


def wait_for_review(docagent, job: LocalJob, timeout: float = 180) -> dict[str, Any]:
    deadline = time.time() + timeout
    while time.time() < deadline:
        code, status = docagent("status", job.job_id)
        assert code == 0 and status["status"] == "RUNNING", status
        # WaitForReview is entered (the history) before its task has stored the token (review-wait.json):
        # the job waits for review once both are there.
        if status["waiting_for_review"] and status["review_wait"] is not None:
            return status
        time.sleep(0.3)
    raise AssertionError(f"{job.job_id} never waited for review")


def entered_states(job: LocalJob) -> list[str]:
    history = job.sfn.get_execution_history(executionArn=job.execution_arn, maxResults=1000)["events"]
    return [
        event["stateEnteredEventDetails"]["name"] for event in history if "stateEnteredEventDetails" in event
    ]


def queue_of(docagent, job: LocalJob) -> list[str]:
    code, listed = docagent("review", "list", job.job_id)
    assert code == 0, listed
    return [document["document_id"] for document in listed["documents"]]


def test_the_job_waits_for_its_queue_and_the_last_decision_lets_it_finish(
    cloud, deployed, docagent, published
):
    job = start(cloud, deployed, "integration-review-wait", documents=6)
    status = wait_for_review(docagent, job)
    queue = queue_of(docagent, job)
    assert len(queue) >= 2, "the seeded invoices put at least two in review"
    assert status["review_wait"]["status"] == "waiting"
    assert (status["review_wait"]["documents"], status["review_wait"]["decided"]) == (len(queue), 0)
    assert job.records.keys(f"jobs/{job.job_id}/report.json") == [], "no report before the queue is decided"
    code, inspected = docagent("inspect", job.job_id)
    assert code == 0 and "waits for review" in inspected["next_step"], inspected

    cloud.runtime.shutdown()  # every worker dies while the execution waits for the reviewers
    assert cloud.runtime.workers() == []

    first, *others = queue
    code, corrected = docagent(
        "review", "accept", job.job_id, first, "--set", "amount=999.00", "--by", "rita"
    )
    assert code == 0, corrected
    assert corrected["review_wait"]["status"] == "waiting" and not corrected["review_wait"]["sent"]
    for document_id in others[:-1]:
        code, rejected = docagent(
            "review", "reject", job.job_id, document_id, "--reason", "not ours", "--by", "rita"
        )
        assert code == 0 and not rejected["review_wait"]["sent"], rejected
    code, last = docagent("review", "accept", job.job_id, others[-1], "--by", "sam")
    assert code == 0, last
    assert last["review_wait"]["sent"] and last["review_wait"]["status"] == "released", last

    described = wait_for_execution(job.sfn, job.execution_arn, timeout=180)
    assert described["status"] == "SUCCEEDED", described.get("cause")
    output = json.loads(described["output"])
    assert output["review_wait"]["released_by"] == "reviewer sam"
    report = job.records.read_json(output["report"]["report_key"])
    rows = {row["document_id"]: row for row in report["rows"]}
    assert (rows[first]["status"], rows[first]["fields"]["amount"]) == ("extracted", "999.00")
    assert all(rows[document_id]["status"] == "rejected" for document_id in others[:-1])
    assert rows[others[-1]]["status"] == "extracted"
    assert report["review"] == 0
    assert report["rejection_reasons"].get("ReviewRejected", 0) == len(others) - 1
    assert len(job.tickets()) == 1
    states = entered_states(job)
    assert states.count("BuildReport") == 1
    assert states.index("ReviewDocuments") < states.index("WaitForReview") < states.index("BuildReport")

    code, again = docagent("review", "accept", job.job_id, first, "--set", "amount=999.00", "--by", "rita")
    assert code == 0 and not again["written"] and not again["review_wait"]["sent"], again
    assert job.records.read_json(output["report"]["report_key"]) == report  # nothing changed
    code, status = docagent("status", job.job_id)
    assert status["review_wait"]["status"] == "released" and not status["waiting_for_review"]


def test_a_job_stopped_while_it_waited_and_redriven_after_its_queue_was_decided_finishes(
    cloud, deployed, docagent, published
):
    job = start(cloud, deployed, "integration-review-redrive", documents=6)
    wait_for_review(docagent, job)
    job.sfn.stop_execution(executionArn=job.execution_arn, error="Operator", cause="stopped while waiting")
    assert wait_for_execution(job.sfn, job.execution_arn)["status"] == "ABORTED"

    queue = queue_of(docagent, job)
    for document_id in queue[:-1]:
        code, decided = docagent("review", "accept", job.job_id, document_id, "--by", "rita")
        assert code == 0, decided
    code, last = docagent("review", "accept", job.job_id, queue[-1], "--by", "rita")
    # The stopped execution's token is closed: reported, not an error.
    assert code == 0 and last["review_wait"]["settled"] == "TaskTimedOut", last

    code, redriven = docagent("redrive", job.job_id)
    assert code == 0, redriven
    described = wait_for_execution(job.sfn, job.execution_arn, timeout=180)
    assert described["status"] == "SUCCEEDED", described.get("cause")
    output = json.loads(described["output"])
    assert output["review_wait"]["released_by"] == "WaitForReview"  # the queue was decided: no stop
    report = job.records.read_json(output["report"]["report_key"])
    assert report["review"] == 0 and report["extracted"] >= len(queue)
    assert len(job.tickets()) == 1
