from __future__ import annotations

from typing import Any

import boto3
import pytest
from functions.tickets import LedgerTicketClient

from functions import storage
from functions.errors import JobVerificationFailed
from functions.handlers.verify_job import handler
from functions.models import PreparedJob, TicketPayload
from tests.fakes import FakeLambdaContext
from tests.support import BUCKET, PREFIX, prepare, process_all, put_object, report, seed_documents, ticket


def finished_job() -> tuple[PreparedJob, dict[str, Any]]:
    seed_documents(3)
    put_object(f"{PREFIX}empty.txt", b"")
    job = prepare("job-verify")
    summary = report(job, process_all(job))
    opened = ticket(job, summary)
    event = {
        "job_id": job.job_id,
        "report": summary.model_dump(),
        "ticket": {"ticket_id": opened.ticket_id, "reference": opened.reference},
    }
    return job, event


def test_a_good_job_verifies(cloud):
    _, event = finished_job()
    assert handler(event, FakeLambdaContext()) == {
        "verified": True,
        "checks": {
            "one_result_per_document": "ok",
            "results_valid": "ok",
            "model_calls_journalled": "ok",
            "report_matches": "ok",
            "exactly_one_ticket": "ok",
        },
    }


def test_a_missing_result_fails_verification_naming_the_check(cloud):
    job, event = finished_job()
    boto3.client("s3").delete_object(Bucket=BUCKET, Key=storage.result_key(job.job_id, "doc-00001.txt"))
    with pytest.raises(JobVerificationFailed) as raised:
        handler(event, FakeLambdaContext())
    message = str(raised.value)
    assert "one_result_per_document: 1 document(s) without a result: doc-00001.txt" in message
    assert "report_matches" in message  # report.json counted a result that is gone
    assert "exactly_one_ticket" not in message


def test_two_tickets_fail_verification_naming_the_check(cloud):
    job, event = finished_job()
    LedgerTicketClient(BUCKET).create(
        "someone-elses-key", TicketPayload(reference=job.job_id, title="duplicate", body="")
    )
    with pytest.raises(JobVerificationFailed, match="exactly_one_ticket: expected exactly one ticket with "
                                                    "reference job-verify, found 2"):  # fmt: skip
        handler(event, FakeLambdaContext())


def test_an_invalid_result_and_a_stray_result_fail_verification(cloud):
    job, event = finished_job()
    put_object(storage.result_key(job.job_id, "doc-00000.txt"), '{"status": "extracted"}')
    put_object(storage.result_key(job.job_id, "stray"), "{}")
    with pytest.raises(JobVerificationFailed) as raised:
        handler(event, FakeLambdaContext())
    message = str(raised.value)
    assert "results_valid: invalid results: doc-00000.txt" in message
    assert "result(s) for documents not in the manifest: stray" in message


def test_a_step_output_that_disagrees_with_storage_fails(cloud):
    _, event = finished_job()
    event["report"]["extracted"] += 1
    with pytest.raises(JobVerificationFailed, match="report_matches: extracted is 4 in the step output"):
        handler(event, FakeLambdaContext())


def test_an_unprepared_job_fails_verification(cloud, load_event):
    with pytest.raises(JobVerificationFailed, match=r"manifest\.json is missing"):
        handler(load_event("verify_job"), FakeLambdaContext())
