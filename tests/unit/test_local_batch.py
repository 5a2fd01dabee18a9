"""The local cloud's Bedrock batch inference (docagent/localcloud/bedrock/batch_api.py): jobs created once per
client request token, every record answered by the local model, failed records as error lines, and the
fault switches' failed, expired and slow jobs."""

from __future__ import annotations

import io
import json
import random
from typing import Any

import boto3
import pytest

from docagent.localcloud.bedrock import batch_api as bedrock_batch
from docagent.localcloud.bedrock.batch_api import BatchService
from docagent.localcloud.bedrock.model_faults import ModelFaults, parse_model_faults
from functions.batch_inference.facts import BATCH_MAX_RECORDS, BATCH_MIN_RECORDS
from tests.support import BUCKET, wait_until


def reply(
    model_id: str, system: Any, messages: Any, max_tokens: int, tool_config: Any = None
) -> tuple[int, dict[str, str], str]:
    text = messages[0]["content"][0]["text"]
    if text == "refuse me":
        return 400, {}, json.dumps({"message": "Input is too long for requested model."})
    body = {
        "output": {"message": {"role": "assistant", "content": [{"text": text.upper()}]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": 10, "outputTokens": 2, "totalTokens": 12},
    }
    return 200, {}, json.dumps(body)


def records(count: int, *, refuse: int = -1) -> str:
    lines = []
    for n in range(count):
        text = "refuse me" if n == refuse else f"record {n}"
        body = {
            "messages": [{"role": "user", "content": [{"text": text}]}],
            "inferenceConfig": {"maxTokens": 9},
        }
        lines.append(json.dumps({"recordId": f"R{n:010d}", "modelInput": body}))
    return "\n".join(lines) + "\n"


def request(token: str = "docagent-abc") -> dict[str, Any]:
    return {
        "jobName": "docagent-job",
        "roleArn": "arn:aws:iam::123456789012:role/batch",
        "clientRequestToken": token,
        "modelId": "fake-model",
        "modelInvocationType": "Converse",
        "inputDataConfig": {"s3InputDataConfig": {"s3Uri": f"s3://{BUCKET}/in/", "s3InputFormat": "JSONL"}},
        "outputDataConfig": {"s3OutputDataConfig": {"s3Uri": f"s3://{BUCKET}/out/"}},
        "timeoutDurationInHours": 24,
    }


@pytest.fixture
def service(cloud: None, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(bedrock_batch, "_s3", lambda role_arn: boto3.client("s3"))
    faults = {"value": ModelFaults()}
    made = BatchService(reply, lambda: faults["value"], random.Random(7).random)
    made.faults = faults  # type: ignore[attr-defined]
    yield made
    made.reset()


def ended(service: BatchService, arn: str) -> dict[str, Any]:
    def check() -> dict[str, Any] | None:
        _, job = service.get(arn)
        return job if job["status"] in {"Completed", "Failed", "Expired", "Stopped"} else None

    return wait_until(check, "the batch job to end")  # type: ignore[no-any-return]


def output(arn: str, name: str) -> list[dict[str, Any]]:
    key = f"out/{arn.rsplit('/', 1)[-1]}/{name}"
    body = boto3.client("s3").get_object(Bucket=BUCKET, Key=key)["Body"].read().decode()
    return (
        json.loads(body) if name.startswith("manifest") else [json.loads(line) for line in body.splitlines()]
    )


def test_a_job_answers_every_record_once_per_token(service):
    boto3.client("s3").put_object(Bucket=BUCKET, Key="in/a.jsonl", Body=records(BATCH_MIN_RECORDS, refuse=3))
    _, first = service.create(request())
    _, again = service.create(request())  # the same token: the same job, nothing new
    assert first == again and len(service.jobs) == 1
    job = ended(service, first["jobArn"])
    assert job["status"] == "Completed" and job["clientRequestToken"] == "docagent-abc"
    lines = output(first["jobArn"], "a.jsonl.out")
    assert len(lines) == BATCH_MIN_RECORDS
    assert lines[0]["modelOutput"]["output"]["message"]["content"][0]["text"] == "RECORD 0"
    assert lines[3]["error"]["errorCode"] == 400 and "modelOutput" not in lines[3]
    manifest = output(first["jobArn"], "manifest.json.out")
    assert (manifest["successRecordCount"], manifest["errorRecordCount"]) == (BATCH_MIN_RECORDS - 1, 1)
    assert manifest["inputTokenCount"] == 10 * (BATCH_MIN_RECORDS - 1)


def test_fault_switches_fail_records_and_jobs(service):
    boto3.client("s3").put_object(Bucket=BUCKET, Key="in/a.jsonl", Body=records(BATCH_MIN_RECORDS))
    service.faults["value"] = parse_model_faults("batch_record_error=0.3,seed=1")
    _, created = service.create(request("t1"))
    assert ended(service, created["jobArn"])["status"] == "Completed"
    errors = [line for line in output(created["jobArn"], "a.jsonl.out") if "error" in line]
    assert 0 < len(errors) < BATCH_MIN_RECORDS
    for fault, status in (("failed", "Failed"), ("expired", "Expired")):
        service.faults["value"] = parse_model_faults(f"batch_job={fault}")
        _, created = service.create(request(f"t-{fault}"))
        assert ended(service, created["jobArn"])["status"] == status


def test_a_slow_job_can_be_stopped_and_too_few_records_fail_validation(service):
    boto3.client("s3").put_object(Bucket=BUCKET, Key="in/a.jsonl", Body=records(BATCH_MIN_RECORDS))
    service.faults["value"] = parse_model_faults("batch_seconds=600")
    _, created = service.create(request("slow"))
    wait_until(lambda: service.get(created["jobArn"])[1]["status"] == "InProgress", "the job to start")
    assert service.stop_job(created["jobArn"]) == (200, {})
    assert ended(service, created["jobArn"])["status"] == "Stopped"
    boto3.client("s3").put_object(Bucket=BUCKET, Key="in/a.jsonl", Body=records(3))
    service.faults["value"] = ModelFaults()
    _, small = service.create(request("small"))
    job = ended(service, small["jobArn"])
    assert job["status"] == "Failed" and f"minimum of {BATCH_MIN_RECORDS}" in job["message"]


def test_the_api_routes(service):
    body = json.dumps(request("routes")).encode()
    answers: list[str] = []
    environ = {
        "PATH_INFO": "/model-invocation-job",
        "REQUEST_METHOD": "POST",
        "CONTENT_LENGTH": str(len(body)),
    }
    created = json.loads(
        service.handle({**environ, "wsgi.input": io.BytesIO(body)}, lambda s, h: answers.append(s))[0]
    )
    listed = service.handle(
        {"PATH_INFO": "/model-invocation-jobs", "REQUEST_METHOD": "GET"}, lambda s, h: answers.append(s)
    )
    assert [j["jobArn"] for j in json.loads(listed[0])["invocationJobSummaries"]] == [created["jobArn"]]
    for identifier in (created["jobArn"], created["jobArn"].rsplit("/", 1)[-1]):  # an ARN or a job id
        path = f"/model-invocation-job/{identifier}"
        assert bedrock_batch.PATH.match(path)["job"] == identifier  # type: ignore[index]
        got = service.handle({"PATH_INFO": path, "REQUEST_METHOD": "GET"}, lambda s, h: answers.append(s))
        assert json.loads(got[0])["jobArn"] == created["jobArn"]
    assert bedrock_batch.PATH.match(f"/model-invocation-job/{created['jobArn']}/stop")["stop"]  # type: ignore[index]
    missing = service.handle(
        {"PATH_INFO": "/model-invocation-job/nope", "REQUEST_METHOD": "GET"}, lambda s, h: answers.append(s)
    )
    assert answers[-1].startswith("404") and "not found" in json.loads(missing[0])["message"]


def test_a_job_over_the_records_per_job_fails_validation_as_bedrock_quota_says(service, monkeypatch):
    assert service.records_limit() == BATCH_MAX_RECORDS  # Bedrock's default quota, unless lowered
    monkeypatch.setenv("LOCAL_BATCH_MAX_RECORDS", "150")
    assert service.records_limit() == 150
    s3 = boto3.client("s3")
    s3.put_object(Bucket=BUCKET, Key="in/a.jsonl", Body=records(100))
    s3.put_object(Bucket=BUCKET, Key="in/b.jsonl", Body=records(51))  # 151 records across the job's files
    _, over = service.create(request("over"))
    job = ended(service, over["jobArn"])
    assert job["status"] == "Failed" and "151 records, over the maximum of 150" in job["message"]
    s3.delete_object(Bucket=BUCKET, Key="in/b.jsonl")
    _, within = service.create(request("within"))
    assert ended(service, within["jobArn"])["status"] == "Completed"  # 100 records: one job takes them
