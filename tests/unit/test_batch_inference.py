"""Bedrock batch inference (docs/batch.md): input records, the idempotent submit, the durable wait, and the
documents' durable steps reusing the output records (a failed or missing record goes on-demand)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from botocore.stub import ANY, Stubber

from docagent.localcloud.bedrock.evidence import with_evidence
from functions import aws, s3_json, storage
from functions.batch_inference import facts
from functions.batch_inference import invocation_jobs as jobs
from functions.batch_inference.input_records import write_record
from functions.batch_inference.output_records import clear_caches, get_batch_job, record_id
from functions.batch_inference.payloads import (
    BatchJobRecord,
    PlanEvent,
    SubmitEvent,
    WaitEvent,
    WriteRecordEvent,
)
from functions.batch_inference.plan import plan
from functions.errors import InvalidJobRequest
from functions.handlers.batch_inference import handler
from functions.logic.process_document import process_document
from functions.payloads.common import utc_now
from functions.settings import get_settings
from tests.fakes import FakeLambdaContext
from tests.moto_state import build_once
from tests.support import (
    BUCKET,
    document_event,
    example_bundle,
    items,
    prepare,
    seed_documents,
    seeded_provider,
)

ROLE = "arn:aws:iam::123456789012:role/batch"
ARN = "arn:aws:bedrock:us-east-1:123456789012:model-invocation-job/abcdef123456"


@pytest.fixture(autouse=True)
def _fresh() -> Any:
    clear_caches()
    yield
    clear_caches()


@pytest.fixture
def job(cloud: None, env: pytest.MonkeyPatch) -> Any:
    env.setenv("BATCH_ROLE_ARN", ROLE)

    def build() -> Any:
        documents = seed_documents(3)
        prepared = prepare("job-batch", options={"inference": "batch"})
        plan(PlanEvent(job_id=prepared.job_id))
        return prepared, items(prepared), documents

    return build_once("batch_inference.job", build)


def write_all(prepared: Any, entries: Any) -> list[Any]:
    return [
        write_record(WriteRecordEvent(job_id=prepared.job_id, options=prepared.options, document=entry))
        for entry in entries
    ]


def finished_batch(job_id: str, status: str = "Completed") -> BatchJobRecord:
    now = utc_now()
    record = BatchJobRecord(
        job_id=job_id,
        status=status,  # type: ignore[arg-type]
        model_id="fake-model",
        records=3,
        client_request_token=jobs.client_request_token(job_id, 0),
        job_name=jobs.batch_job_name(job_id, 0),
        job_arn=ARN,
        submitted_at=now,
        updated_at=now,
    )
    s3_json.put_json(storage.batch_job_key(job_id, 0), record)
    return record


def output_line(job_id: str, document_id: str, line: dict[str, Any]) -> None:
    key = storage.batch_output_key(job_id, 0, "abcdef123456", document_id)
    s3_json.put_bytes(key, (json.dumps(line) + "\n").encode(), content_type="application/jsonl")


def test_each_document_gets_one_record_of_the_call_the_review_makes(job):
    prepared, entries, documents = job
    written = write_all(prepared, entries)
    assert [w.record_id for w in written] == [record_id(e.document_id) for e in entries]
    line = json.loads(s3_json.get_bytes(storage.batch_input_key("job-batch", 0, entries[0].document_id)))
    assert line["recordId"].isalnum() and len(line["recordId"]) == 11
    body = line["modelInput"]
    document = body["messages"][0]["content"][0]["document"]
    assert base64.b64decode(document["source"]["bytes"]).decode() == documents[0].text
    assert body["inferenceConfig"] == {"maxTokens": 800, "temperature": 0.0}
    assert "invoice" in body["messages"][0]["content"][1]["text"]
    # written once: a retried child keeps the first record
    again = write_record(WriteRecordEvent(job_id="job-batch", options=prepared.options, document=entries[0]))
    assert again.key == written[0].key


def test_batch_replies_are_journalled_and_failed_or_missing_records_go_on_demand(job):
    prepared, entries, documents = job
    write_all(prepared, entries)
    finished_batch("job-batch")
    first = json.loads(s3_json.get_bytes(storage.batch_input_key("job-batch", 0, entries[0].document_id)))
    reply = with_evidence(documents[0].truth.model_dump_json(), [documents[0].text])  # quoted, as asked
    output_line("job-batch", entries[0].document_id, {
        **first,
        "modelOutput": {
            "output": {"message": {"role": "assistant", "content": [{"text": reply}]}},
            "stopReason": "end_turn",
            "usage": {"inputTokens": 321, "outputTokens": 45, "totalTokens": 366},
        },
    })  # fmt: skip
    second = json.loads(s3_json.get_bytes(storage.batch_input_key("job-batch", 0, entries[1].document_id)))
    output_line("job-batch", entries[1].document_id, {
        **second, "error": {"errorCode": 500, "errorMessage": "internal error"}
    })  # fmt: skip
    provider = seeded_provider()

    outcomes = [
        process_document(document_event(prepared, entry), FakeLambdaContext(), provider=provider)
        for entry in entries
    ]

    assert [o.status for o in outcomes] == ["extracted"] * 3
    assert provider.calls == [documents[1].text, documents[2].text]  # the failed and the missing record
    calls = [s3_json.list_model_calls("job-batch", e.document_id) for e in entries]
    assert [[c.inference for c in doc] for doc in calls] == [["batch"], ["on_demand"], ["on_demand"]]
    assert (calls[0][0].input_tokens, calls[0][0].output_tokens) == (321, 45)
    # the document again without its stored result: its durable step reuses the call, nothing is called again
    aws.s3_client().delete_object(Bucket=BUCKET, Key=storage.result_key("job-batch", entries[0].document_id))
    again = process_document(document_event(prepared, entries[0]), FakeLambdaContext(), provider=provider)
    assert again.status == "extracted" and len(provider.calls) == 2


def test_an_unfinished_batch_job_answers_nothing(job):
    prepared, entries, _ = job
    write_all(prepared, entries)
    finished_batch("job-batch", status="InProgress")
    provider = seeded_provider()
    process_document(document_event(prepared, entries[0]), FakeLambdaContext(), provider=provider)
    assert len(provider.calls) == 1


def test_too_few_records_submit_no_job(job):
    prepared, entries, _ = job
    write_all(prepared, entries)
    with Stubber(aws.bedrock_client()) as stub:  # any call would fail: none is expected
        outcome = jobs.submit(SubmitEvent(job_id="job-batch"))
        stub.assert_no_pending_responses()
    assert outcome.status == "NotSubmitted" and outcome.job_arn is None
    assert f"minimum of {facts.BATCH_MIN_RECORDS}" in str(outcome.message)


def test_submit_creates_one_job_with_a_token_from_the_job_id(job, monkeypatch):
    prepared, entries, _ = job
    write_all(prepared, entries)
    monkeypatch.setattr(jobs, "BATCH_MIN_RECORDS", 1)
    expected = {
        "jobName": jobs.batch_job_name("job-batch", 0),
        "roleArn": ROLE,
        "clientRequestToken": jobs.client_request_token("job-batch", 0),
        "modelId": prepared.versions.model_id,
        "modelInvocationType": "Converse",
        "inputDataConfig": {
            "s3InputDataConfig": {
                "s3Uri": f"s3://{BUCKET}/jobs/job-batch/batch/input/00000/",
                "s3InputFormat": "JSONL",
            }
        },
        "outputDataConfig": {
            "s3OutputDataConfig": {"s3Uri": f"s3://{BUCKET}/jobs/job-batch/batch/output/00000/"}
        },
        "timeoutDurationInHours": 24,
        "tags": [{"key": "docagent-job", "value": "job-batch"}, {"key": "docagent-part", "value": "0"}],
    }
    with Stubber(aws.bedrock_client()) as stub:
        stub.add_response("create_model_invocation_job", {"jobArn": ARN}, expected)
        first = jobs.submit(SubmitEvent(job_id="job-batch"))
        second = jobs.submit(SubmitEvent(job_id="job-batch"))  # a retry or a redrive
        stub.assert_no_pending_responses()
    assert first == second and first.job_arn == ARN and first.status == "Submitted"
    assert s3_json.get_json(storage.batch_jobs_index_key("abcdef123456")) == {
        "job_id": "job-batch",
        "part": 0,
    }
    assert "_" not in jobs.batch_job_name("a_b", 0) and jobs.client_request_token("x", 0).startswith(
        "docagent-"
    )
    assert jobs.client_request_token("x", 0) != jobs.client_request_token("x", 1)  # one batch job a part
    assert len(jobs.batch_job_name("j" * 80, 99_999)) <= 63  # Bedrock's longest job name


def test_wait_keeps_the_token_and_the_event_completes_it(job):
    finished_batch("job-batch", status="InProgress")
    s3_json.put_json(storage.batch_jobs_index_key("abcdef123456"), {"job_id": "job-batch", "part": 0})
    with Stubber(aws.bedrock_client()) as bedrock, Stubber(aws.stepfunctions_client()) as sfn:
        bedrock.add_response("get_model_invocation_job", _job("InProgress"), {"jobIdentifier": ARN})
        waiting = handler(
            {"action": "wait", "job_id": "job-batch", "task_token": "token-1"}, FakeLambdaContext()
        )
        assert waiting["status"] == "InProgress"
        assert get_batch_job("job-batch", 0).task_token == "token-1"  # type: ignore[union-attr]
        bedrock.add_response("get_model_invocation_job", _job("Completed"), {"jobIdentifier": ARN})
        output = {"job_id": "job-batch", "part": 0, "status": "Completed", "job_arn": ARN, "message": None}
        sfn.add_response(
            "send_task_success",
            {},
            {"taskToken": "token-1", "output": json.dumps(output, separators=(",", ":"))},
        )
        event = {
            "source": "aws.bedrock",
            "detail-type": facts.EVENT_DETAIL_TYPE,
            "resources": [ARN],
            "detail": {"status": "Completed"},
        }
        assert handler(event, FakeLambdaContext())["status"] == "Completed"
        sfn.assert_no_pending_responses()


def test_wait_completes_at_once_when_the_job_already_ended(job):
    finished_batch("job-batch", status="InProgress")
    with Stubber(aws.bedrock_client()) as bedrock, Stubber(aws.stepfunctions_client()) as sfn:
        bedrock.add_response("get_model_invocation_job", _job("Failed"), {"jobIdentifier": ARN})
        sfn.add_client_error("send_task_success", service_error_code="TaskTimedOut")  # settled: ignored
        assert jobs.wait(WaitEvent(job_id="job-batch", task_token="t")).status == "Failed"
        sfn.assert_no_pending_responses()


def _job(status: str) -> dict[str, Any]:
    return {
        "jobArn": ARN,
        "jobName": "n",
        "modelId": "fake-model",
        "roleArn": ROLE,
        "status": status,
        "submitTime": "2026-12-02T00:00:00Z",
        "inputDataConfig": {"s3InputDataConfig": {"s3Uri": "s3://b/i/"}},
        "outputDataConfig": {"s3OutputDataConfig": {"s3Uri": "s3://b/o/"}},
    }


def test_batch_inference_of_a_definition_of_several_classes_is_refused_at_start(cloud):
    seed_documents(1)
    with pytest.raises(InvalidJobRequest, match="inference 'batch' runs the extraction of a one-class"):
        prepare("job-claims", options={"inference": "batch"}, definition=example_bundle("claims"))
    assert s3_json.get_json_or_none(storage.request_key("job-claims")) is None  # nothing started
    auto = prepare("job-claims-auto", options={"inference": "auto"}, definition=example_bundle("claims"))
    assert auto.options.inference == "auto"  # auto chooses: on-demand for it (no records, no batch job)


def test_the_batch_job_of_a_definition_naming_two_models_runs_the_cheap_one(cloud, env, monkeypatch):
    """#42: the cheap model extracts first, so a batch job is created for it (the strong one escalates on
    demand: functions/inference/cascade.py)."""
    env.setenv("BATCH_ROLE_ARN", ROLE)
    cheap, strong = (
        "anthropic.claude-3-haiku-20240307-v1:0",
        "global.anthropic.claude-haiku-4-5-20251001-v1:0",
    )
    bundle = example_bundle()
    definition = bundle.definition.model_validate(
        {**bundle.definition.model_dump(mode="json", by_alias=True), "models": [cheap, strong]}
    )
    seed_documents(2)
    prepared = prepare(
        "job-batch-cascade",
        options={"inference": "batch"},
        definition=bundle.model_copy(update={"definition": definition}),
    )
    plan(PlanEvent(job_id=prepared.job_id))
    write_all(prepared, items(prepared))
    monkeypatch.setattr(jobs, "BATCH_MIN_RECORDS", 1)
    with Stubber(aws.bedrock_client()) as stub:
        asked = dict.fromkeys(
            ("jobName", "roleArn", "clientRequestToken", "modelInvocationType", "inputDataConfig"), ANY
        )
        asked |= dict.fromkeys(("outputDataConfig", "timeoutDurationInHours", "tags"), ANY)
        stub.add_response("create_model_invocation_job", {"jobArn": ARN}, {**asked, "modelId": cheap})
        jobs.submit(SubmitEvent(job_id="job-batch-cascade"))
        stub.assert_no_pending_responses()
    record = get_batch_job("job-batch-cascade", 0)
    assert record is not None and record.model_id == cheap != prepared.versions.model_id

    # the deployment does not allow the cheap model (MODELS_ALLOWED): no batch job is created for it
    env.setenv("MODELS_ALLOWED", json.dumps([strong]))
    get_settings.cache_clear()
    aws.s3_client().delete_object(Bucket=BUCKET, Key=storage.batch_job_key("job-batch-cascade", 0))
    with Stubber(aws.bedrock_client()) as stub:  # any call would fail: none is expected
        refused = jobs.submit(SubmitEvent(job_id="job-batch-cascade"))
        stub.assert_no_pending_responses()
    assert refused.status == "NotSubmitted" and refused.job_arn is None
    assert cheap in str(refused.message) and "MODELS_ALLOWED" in str(refused.message)
