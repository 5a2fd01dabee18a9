"""A whole job through the five handlers, as the state machine drives them (payload shapes of the ASL)."""

from __future__ import annotations

import json
from typing import Any

from functions.handlers import build_report, prepare_job, process_document, run_actions, verify_job
from functions.payloads.job import PreparedJob
from tests.fakes import FakeLambdaContext
from tests.support import PREFIX, list_keys, put_object, s3, seed_documents


def run_state_machine(execution_input: dict[str, Any]) -> dict[str, Any]:
    """The data flow of statemachines/document_review.asl.json, without the retries."""
    state = prepare_job.handler({"request": execution_input, "execution_name": execution_input["job_id"]},
                                FakeLambdaContext())  # fmt: skip
    while not state["listing"]["done"]:  # ListDocuments until ListingDone, then SealJob
        listing = {"action": "list", "job_id": state["job_id"], "listing": state["listing"]}
        state["listing"] = prepare_job.handler(listing, FakeLambdaContext())
    sealing = {"action": "seal", "job_id": state["job_id"], "listing": state["listing"]}
    sealed = PreparedJob.model_validate(prepare_job.handler(sealing, FakeLambdaContext()))
    job = sealed.model_dump(mode="json")
    body = s3().get_object(Bucket=job["bucket"], Key=job["items_key"])["Body"].read()
    outcomes = [
        process_document.handler(
            {"job_id": job["job_id"], "options": job["options"], "document": item, "retry_count": 0},
            FakeLambdaContext(),
        )
        for item in (json.loads(line) for line in body.decode().splitlines())  # ItemReader InputType JSONL
    ]
    map_run = {"MapRunArn": "arn:aws:states:us-east-1:123456789012:mapRun:x/documents:1"}
    full_report = build_report.handler({"job_id": job["job_id"], "map_run": map_run}, FakeLambdaContext())
    report = {key: full_report[key] for key in ("report_key", "documents", "extracted", "rejected")}
    actions = run_actions.handler({"job_id": job["job_id"], "report": report}, FakeLambdaContext())["actions"]
    verification = verify_job.handler(
        {"job_id": job["job_id"], "report": report, "actions": actions}, FakeLambdaContext()
    )
    return {
        "job": job,
        "outcomes": outcomes,
        "report": report,
        "actions": actions,
        "verification": verification,
    }


def test_a_job_with_good_and_bad_documents_runs_end_to_end_and_verifies(cloud):
    seed_documents(12)
    put_object(f"{PREFIX}broken.txt", b"\xc3\x28 invalid utf-8")
    state = run_state_machine({"job_id": "job-e2e", "prefix": PREFIX})

    assert state["report"] == {
        "report_key": "jobs/job-e2e/report.json", "documents": 13, "extracted": 12, "rejected": 1,
    }  # fmt: skip
    assert state["verification"]["verified"] is True
    assert len(list_keys("jobs/job-e2e/results/")) == 13
    assert len(list_keys("action-ledger/")) == 1


def test_running_the_same_job_again_repeats_no_model_call_and_no_action(cloud):
    seed_documents(5)
    first = run_state_machine({"job_id": "job-again", "prefix": PREFIX})
    journal_before = list_keys("jobs/job-again/model-calls/")
    second = run_state_machine({"job_id": "job-again", "prefix": PREFIX})

    assert second == first
    assert list_keys("jobs/job-again/model-calls/") == journal_before
    assert len(journal_before) == 5
    assert len(list_keys("action-ledger/")) == 1
