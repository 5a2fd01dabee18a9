from __future__ import annotations

from typing import Any

import boto3
import pytest

from functions import storage
from functions.actions.ledger import LedgerClient
from functions.errors import JobVerificationFailed
from functions.handlers.verify_job import handler
from functions.payloads.job import PreparedJob
from functions.settings import get_settings
from tests.fakes import FakeLambdaContext
from tests.support import BUCKET, PREFIX, actions, prepare, process_all, put_object, report, seed_documents


def finished_job() -> tuple[PreparedJob, dict[str, Any]]:
    seed_documents(3)
    put_object(f"{PREFIX}empty.txt", b"")
    job = prepare("job-verify")
    summary = report(job, process_all(job))
    done = actions(job, summary)
    event = {
        "job_id": job.job_id,
        "report": summary.model_dump(),
        "actions": [action.model_dump(mode="json") for action in done.actions],
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
            "actions_done_once": "ok",
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
    assert "actions_done_once" not in message


def test_a_second_record_of_the_action_fails_verification_naming_the_check(cloud):
    job, event = finished_job()
    LedgerClient(BUCKET).create("docagent-job-verify-ticket-2", {"reference": job.job_id})
    boto3.client("s3").copy_object(
        Bucket=BUCKET,
        Key=storage.ledger_key("docagent-job-verify-ticket-2"),
        CopySource={"Bucket": BUCKET, "Key": storage.ledger_key("docagent-job-verify-ticket")},
    )  # a second record carrying the action's key (a target that ignored it)
    with pytest.raises(JobVerificationFailed, match="actions_done_once: ticket: expected 1 record"):
        handler(event, FakeLambdaContext())


def test_another_actions_record_at_the_same_target_is_not_counted(cloud):
    job, event = finished_job()
    LedgerClient(BUCKET).create("docagent-job-verify-other", {"reference": job.job_id})
    assert handler(event, FakeLambdaContext())["verified"] is True


def test_an_action_without_done_json_fails_verification(cloud):
    job, event = finished_job()
    boto3.client("s3").delete_object(Bucket=BUCKET, Key=storage.action_done_key(job.job_id, "ticket"))
    with pytest.raises(JobVerificationFailed, match=r"actions_done_once: ticket: done\.json is missing"):
        handler(event, FakeLambdaContext())


def test_a_step_output_whose_actions_differ_fails(cloud):
    _, event = finished_job()
    event["actions"][0]["reference"] = "REC-OTHER"
    with pytest.raises(JobVerificationFailed, match="the step output's actions differ"):
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


def test_an_http_target_the_deployment_no_longer_allows_fails_the_check_naming_it(cloud, env):
    _, event = finished_job()
    env.setenv("ACTIONS_ALLOWED", "{}")
    get_settings.cache_clear()
    with pytest.raises(JobVerificationFailed, match="ticket: cannot look its record up: action ticket: "):
        handler(event, FakeLambdaContext())
