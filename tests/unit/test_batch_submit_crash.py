"""SubmitBatchJob under crashes and refusals (docs/batch.md, "Crashes"): a worker that dies after Bedrock
created the batch job leaves no record, and the next attempt (a retry or the redrive) gets the same job by its
client request token; a refusal (4xx) is BatchUnavailable, which the workflow catches into on-demand; a 5xx
is not (the job may exist), so it fails the job for a redrive instead of paying twice."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError
from botocore.stub import ANY, Stubber

from functions import aws, s3_json, storage
from functions.batch_inference import invocation_jobs as jobs
from functions.batch_inference.input_records import write_record
from functions.batch_inference.output_records import clear_caches, get_batch_job
from functions.batch_inference.payloads import PlanEvent, SubmitEvent, WaitEvent, WriteRecordEvent
from functions.batch_inference.plan import plan
from functions.errors import BatchJobsInFlight, BatchUnavailable, InjectedFault
from functions.payloads.job import FaultSpec, JobOptions
from functions.settings import get_settings
from tests.moto_state import build_once
from tests.support import items, prepare, seed_documents

ROLE = "arn:aws:iam::123456789012:role/batch"
ARN = "arn:aws:bedrock:us-east-1:123456789012:model-invocation-job/abcdef123456"
JOB = "job-batch-crash"
# What the job's create call names; the rest of the request is tests/unit/test_batch_inference.py's.
CREATE = {
    "jobName": jobs.batch_job_name(JOB, 0),
    "roleArn": ROLE,
    "clientRequestToken": jobs.client_request_token(JOB, 0),
    "modelId": ANY,
    "modelInvocationType": "Converse",
    "inputDataConfig": ANY,
    "outputDataConfig": ANY,
    "timeoutDurationInHours": ANY,
    "tags": ANY,
}


@pytest.fixture
def written(cloud: None, env: pytest.MonkeyPatch, monkeypatch: pytest.MonkeyPatch) -> Any:
    clear_caches()
    env.setenv("BATCH_ROLE_ARN", ROLE)
    env.setenv("FAULT_INJECTION_ENABLED", "true")
    get_settings.cache_clear()

    def build() -> Any:
        seed_documents(3)
        prepared = prepare(JOB, options={"inference": "batch"})
        plan(PlanEvent(job_id=JOB))
        for entry in items(prepared):
            write_record(WriteRecordEvent(job_id=JOB, options=prepared.options, document=entry))
        return prepared

    prepared = build_once("batch_submit_crash.written", build)
    monkeypatch.setattr(jobs, "BATCH_MIN_RECORDS", 1)
    yield prepared
    clear_caches()
    get_settings.cache_clear()


def killed_until_redrive() -> JobOptions:
    return JobOptions(fault=FaultSpec(point="after_batch_submit", mode="raise", until_redrive=1))


def test_a_crash_after_the_create_records_nothing_and_the_redrive_gets_the_same_job(written):
    options = killed_until_redrive()
    with Stubber(aws.bedrock_client()) as stub:
        for _ in range(2):  # every attempt before the redrive: created (the same job), then the worker dies
            stub.add_response("create_model_invocation_job", {"jobArn": ARN}, CREATE)
        for retry in range(2):
            with pytest.raises(InjectedFault):
                jobs.submit(SubmitEvent(job_id=JOB, options=options, retry_count=retry))
            assert get_batch_job(JOB, 0) is None  # nothing of the batch job is recorded
        stub.add_response("create_model_invocation_job", {"jobArn": ARN}, CREATE)  # the same token again
        redriven = jobs.submit(SubmitEvent(job_id=JOB, options=options, redrive_count=1))
        again = jobs.submit(SubmitEvent(job_id=JOB, options=options, redrive_count=1))
        stub.assert_no_pending_responses()  # the record answers the last attempt: no fourth create
    assert redriven == again and redriven.job_arn == ARN and redriven.status == "Submitted"
    assert s3_json.get_json(storage.batch_jobs_index_key("abcdef123456")) == {"job_id": JOB, "part": 0}


def test_a_refused_create_is_batch_unavailable(written):
    with Stubber(aws.bedrock_client()) as stub:
        stub.add_client_error(
            "create_model_invocation_job",
            service_error_code="ValidationException",
            service_message="records are not valid",
            http_status_code=400,
        )
        with pytest.raises(BatchUnavailable, match="ValidationException"):
            jobs.submit(SubmitEvent(job_id=JOB))


def test_a_create_refused_for_the_batch_jobs_in_flight_is_retried_not_sent_on_demand(written):
    with Stubber(aws.bedrock_client()) as stub:
        stub.add_client_error(
            "create_model_invocation_job",
            service_error_code="ServiceQuotaExceededException",
            service_message="The number of requests exceeds the service quota. Resubmit your request later.",
            http_status_code=400,
        )
        with pytest.raises(BatchJobsInFlight, match="ServiceQuotaExceededException"):
            jobs.submit(SubmitEvent(job_id=JOB))
    assert get_batch_job(JOB, 0) is None  # nothing created, nothing recorded: the retry submits it


@pytest.mark.parametrize(("code", "status"), [("InternalServerException", 500), ("ThrottlingException", 429)])
def test_a_create_that_may_have_happened_or_was_throttled_fails_the_state_not_into_on_demand(
    written, code, status
):
    with Stubber(aws.bedrock_client()) as stub:
        stub.add_client_error("create_model_invocation_job", service_error_code=code, http_status_code=status)
        with pytest.raises(ClientError) as raised:
            jobs.submit(SubmitEvent(job_id=JOB))
    assert not isinstance(raised.value.__cause__, BatchUnavailable) and get_batch_job(JOB, 0) is None


def test_a_wait_without_a_batch_job_record_is_batch_unavailable(written):
    with pytest.raises(BatchUnavailable, match="no batch job record"):
        jobs.wait(WaitEvent(job_id=JOB, task_token="t"))


def test_a_crash_after_the_wait_kept_its_token_and_the_redrive_waits_again_and_completes(written):
    options = JobOptions(fault=FaultSpec(point="after_batch_wait_token", mode="raise", until_redrive=1))
    ended = {
        "jobArn": ARN,
        "jobName": "n",
        "modelId": "fake-model",
        "roleArn": ROLE,
        "status": "Completed",
        "submitTime": "2026-12-02T00:00:00Z",
        "inputDataConfig": {"s3InputDataConfig": {"s3Uri": "s3://b/i/"}},
        "outputDataConfig": {"s3OutputDataConfig": {"s3Uri": "s3://b/o/"}},
    }
    with Stubber(aws.bedrock_client()) as bedrock, Stubber(aws.stepfunctions_client()) as sfn:
        bedrock.add_response("create_model_invocation_job", {"jobArn": ARN}, CREATE)
        jobs.submit(SubmitEvent(job_id=JOB))
        bedrock.add_response("get_model_invocation_job", ended, {"jobIdentifier": ARN})
        with pytest.raises(InjectedFault):  # the token is kept, its completion not sent
            jobs.wait(WaitEvent(job_id=JOB, task_token="killed", options=options))
        assert get_batch_job(JOB, 0).task_token == "killed"  # type: ignore[union-attr]
        bedrock.add_response("get_model_invocation_job", ended, {"jobIdentifier": ARN})
        sfn.add_response("send_task_success", {}, {"taskToken": "redriven", "output": ANY})
        waited = jobs.wait(WaitEvent(job_id=JOB, task_token="redriven", options=options, redrive_count=1))
        bedrock.assert_no_pending_responses()
        sfn.assert_no_pending_responses()
    assert waited.status == "Completed" and waited.job_arn == ARN
