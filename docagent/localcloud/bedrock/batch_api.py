"""A local Bedrock batch inference (the control plane's model invocation jobs) at the local cloud's endpoint.

moto serves no model invocation jobs (moto 5.2: its Bedrock backend has custom models and invocation
logging only), so the local cloud answers ``CreateModelInvocationJob``, ``GetModelInvocationJob``,
``ListModelInvocationJobs`` and ``StopModelInvocationJob`` itself, as the Bedrock API Reference documents
them (functions/batch_inference/facts.py): a repeated ``clientRequestToken`` returns the job it created; the
input is
every ``.jsonl`` under the input location in the local S3, each record answered by the local Bedrock's
Converse (labels, recorded replies, its fault switches); the output is ``{file}.out`` per input file and
``manifest.json.out`` under ``{output location}/{job id}/``; a job under the minimum of records, or over
the records per job (``BATCH_MAX_RECORDS``, Bedrock's default quota; the environment variable
``LOCAL_BATCH_MAX_RECORDS`` or ``BatchService.max_records`` lowers it for tests), or over the bytes per
job, fails validation. Each status change is a "Batch Inference Job State Change" event (source aws.bedrock)
delivered to the deployed EventBridge rules' Lambda targets (invoked asynchronously, as EventBridge invokes
them).

Fault switches (``ModelFaults``, ``docagent local model-faults`` / ``--model-faults``): ``batch_record_error``
(a share of the records answered with an error line), ``batch_job`` (``failed``: the job fails;
``expired``: it never starts and expires), ``batch_seconds`` (how long a job stays in progress: a slow job).

Deviation (docs/local-cloud.md): the jobs live in the server's memory, so a restarted local cloud has none.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import secrets
import threading
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import boto3
from botocore.exceptions import ClientError

from docagent.localcloud.bedrock.batch_path import PATH
from docagent.localcloud.iam.role_tokens import role_credentials
from docagent.localcloud.stepfunctions.status_events import matching_targets
from functions.batch_inference.facts import (
    BATCH_MAX_JOB_BYTES,
    BATCH_MAX_RECORDS,
    BATCH_MIN_RECORDS,
    EVENT_DETAIL_TYPE,
    EVENT_SOURCE,
    TERMINAL_STATUSES,
)

ACCOUNT_ID, REGION = "123456789012", "us-east-1"


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class LocalBatchJob:
    arn: str
    name: str
    token: str | None
    model_id: str
    role_arn: str
    input_uri: str
    output_uri: str
    timeout_hours: int
    invocation_type: str
    status: str = "Submitted"
    message: str | None = None
    submit_time: str = field(default_factory=_now)
    last_modified: str = field(default_factory=_now)
    end_time: str | None = None
    counts: dict[str, int] = field(default_factory=dict)
    stop: threading.Event = field(default_factory=threading.Event)
    runner: threading.Thread | None = None

    @property
    def job_id(self) -> str:
        return self.arn.rsplit("/", 1)[-1]

    def describe(self) -> dict[str, Any]:
        answer: dict[str, Any] = {
            "jobArn": self.arn,
            "jobName": self.name,
            "modelId": self.model_id,
            "roleArn": self.role_arn,
            "status": self.status,
            "submitTime": self.submit_time,
            "lastModifiedTime": self.last_modified,
            "inputDataConfig": {"s3InputDataConfig": {"s3Uri": self.input_uri, "s3InputFormat": "JSONL"}},
            "outputDataConfig": {"s3OutputDataConfig": {"s3Uri": self.output_uri}},
            "timeoutDurationInHours": self.timeout_hours,
            "modelInvocationType": self.invocation_type,
            **self.counts,
        }
        if self.token is not None:
            answer["clientRequestToken"] = self.token
        if self.message is not None:
            answer["message"] = self.message
        if self.end_time is not None:
            answer["endTime"] = self.end_time
        return answer


# (model id, system, messages, max tokens, toolConfig) -> (HTTP status, headers, body)
Converse = Callable[
    [str, list[dict[str, Any]], list[dict[str, Any]], int, dict[str, Any] | None],
    tuple[int, dict[str, str], str],
]


class BatchService:
    """The process-wide model invocation jobs. ``converse`` answers one record (the local Bedrock's);
    ``faults`` reads the current fault switches."""

    def __init__(self, converse: Converse, faults: Callable[[], Any], draw: Callable[[], float]) -> None:
        self.lock = threading.Lock()
        self.jobs: dict[str, LocalBatchJob] = {}
        self._converse, self._faults, self._draw = converse, faults, draw
        # The records per job this service allows (None: LOCAL_BATCH_MAX_RECORDS, else Bedrock's default).
        self.max_records: int | None = None

    def records_limit(self) -> int:
        """Records per batch job, as the account's quota "Records per batch inference job" sets it."""
        if self.max_records is not None:
            return self.max_records
        return int(os.environ.get("LOCAL_BATCH_MAX_RECORDS") or BATCH_MAX_RECORDS)

    def reset(self) -> None:
        """Stops every job and waits for its thread: nothing of a job runs on after the service is reset."""
        with self.lock:
            jobs = list(self.jobs.values())
            for job in jobs:
                job.stop.set()
            self.jobs.clear()
        for job in jobs:
            if job.runner is not None:
                job.runner.join(timeout=30)

    # ------------------------------------------------------------------------------------- the API

    def handle(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        match = PATH.match(environ.get("PATH_INFO", ""))
        method = environ.get("REQUEST_METHOD", "GET")
        assert match is not None
        status, body = 404, {"message": "unknown route"}
        if match["many"] and method == "GET":
            query = urllib.parse.parse_qs(environ.get("QUERY_STRING", ""))
            status, body = self.list_jobs(
                query.get("statusEquals", [None])[0], query.get("nameContains", [None])[0]
            )
        elif match["job"] and match["stop"] and method == "POST":
            status, body = self.stop_job(urllib.parse.unquote(match["job"]))
        elif match["job"] and method == "GET":
            status, body = self.get(urllib.parse.unquote(match["job"]))
        elif not match["job"] and method == "POST":
            length = int(environ.get("CONTENT_LENGTH") or 0)
            status, body = self.create(json.loads(environ["wsgi.input"].read(length) or b"{}"))
        headers = [("Content-Type", "application/json")]
        if status >= 400:
            headers.append(("x-amzn-ErrorType", str(body.pop("__type", "ValidationException"))))
        start_response(f"{status} {'OK' if status < 400 else 'Error'}", headers)
        return [json.dumps(body).encode()]

    def create(self, request: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        token = request.get("clientRequestToken")
        with self.lock:
            for job in self.jobs.values():
                if token is not None and job.token == token:
                    return 200, {"jobArn": job.arn}  # the same token: the job it created, nothing new
            try:
                job = LocalBatchJob(
                    arn=f"arn:aws:bedrock:{REGION}:{ACCOUNT_ID}:model-invocation-job/{secrets.token_hex(6)}",
                    name=str(request["jobName"]),
                    token=token,
                    model_id=str(request["modelId"]),
                    role_arn=str(request["roleArn"]),
                    input_uri=str(request["inputDataConfig"]["s3InputDataConfig"]["s3Uri"]),
                    output_uri=str(request["outputDataConfig"]["s3OutputDataConfig"]["s3Uri"]),
                    timeout_hours=int(request.get("timeoutDurationInHours") or 168),
                    invocation_type=str(request.get("modelInvocationType") or "InvokeModel"),
                )
            except (KeyError, TypeError) as missing:
                return 400, {"__type": "ValidationException", "message": f"missing {missing}"}
            self.jobs[job.arn] = job
        job.runner = threading.Thread(target=self._run, args=(job,), name=f"batch-{job.job_id}", daemon=True)
        job.runner.start()
        return 200, {"jobArn": job.arn}

    def _find(self, identifier: str) -> LocalBatchJob | None:
        with self.lock:
            return next((j for j in self.jobs.values() if identifier in {j.arn, j.job_id}), None)

    def get(self, identifier: str) -> tuple[int, dict[str, Any]]:
        job = self._find(identifier)
        if job is None:
            return 404, {"__type": "ResourceNotFoundException", "message": f"job {identifier} not found"}
        return 200, job.describe()

    def list_jobs(self, status: str | None, name: str | None) -> tuple[int, dict[str, Any]]:
        with self.lock:
            jobs = [
                j.describe()
                for j in self.jobs.values()
                if (status is None or j.status == status) and (name is None or name in j.name)
            ]
        return 200, {"invocationJobSummaries": jobs}

    def stop_job(self, identifier: str) -> tuple[int, dict[str, Any]]:
        job = self._find(identifier)
        if job is None:
            return 404, {"__type": "ResourceNotFoundException", "message": f"job {identifier} not found"}
        if job.status in TERMINAL_STATUSES:
            return 400, {"__type": "ValidationException", "message": f"the job is {job.status}"}
        job.stop.set()
        self._move(job, "Stopping")
        return 200, {}

    # ----------------------------------------------------------------------------------- the runner

    def _move(self, job: LocalBatchJob, status: str, message: str | None = None) -> None:
        job.status, job.last_modified = status, _now()
        if message is not None:
            job.message = message
        if status in TERMINAL_STATUSES:
            job.end_time = job.last_modified
        deliver_state_change(job)

    def _run(self, job: LocalBatchJob) -> None:
        """The job's life; it reads its input and writes its output as its service role (``roleArn``), and
        fails with the service's message when that role may not (IAM enforced: docs/local-cloud.md)."""
        try:
            self._lifecycle(job)
        except ClientError as error:
            self._move(job, "Failed", str(error))

    def _lifecycle(self, job: LocalBatchJob) -> None:
        faults = self._faults()
        s3 = _s3(job.role_arn)
        self._move(job, "Validating")
        files, volume = _input_files(s3, job.input_uri)
        records = [(key, line) for key, lines in files.items() for line in lines]
        refusal = self._invalid(len(records), volume)
        if refusal is not None:
            self._move(job, "Failed", refusal)
            return
        self._move(job, "Scheduled")
        if faults.batch_job == "expired":
            job.stop.wait(faults.batch_seconds)
            self._move(job, "Expired", "the job did not start before its timeout")
            return
        self._move(job, "InProgress")
        if job.stop.wait(faults.batch_seconds):
            self._move(job, "Stopped")
            return
        if faults.batch_job == "failed":
            self._move(job, "Failed", "internal error (a local fault: batch_job=failed)")
            return
        self._answer(job, s3, files, faults)
        self._move(job, "Completed")

    def _invalid(self, records: int, volume: int) -> str | None:
        """Why validation fails the job (the quotas of functions/batch_inference/facts.py), or None."""
        if records < BATCH_MIN_RECORDS:
            return f"the job has {records} records, under the minimum of {BATCH_MIN_RECORDS}"
        if records > self.records_limit():
            return f"the job has {records} records, over the maximum of {self.records_limit()} per batch job"
        if volume > BATCH_MAX_JOB_BYTES:
            return f"the job's input files hold {volume} bytes, over the maximum of {BATCH_MAX_JOB_BYTES}"
        return None

    def _answer(
        self, job: LocalBatchJob, s3: Any, files: dict[str, list[dict[str, Any]]], faults: Any
    ) -> None:
        bucket, prefix = _split(job.output_uri)
        folder = f"{prefix.rstrip('/')}/{job.job_id}/" if prefix else f"{job.job_id}/"
        counts = {"success": 0, "error": 0, "input": 0, "output": 0}
        for key, lines in files.items():
            out = []
            for line in lines:
                out.append(self._answer_record(line, job.model_id, faults, counts))
            name = key.rsplit("/", 1)[-1]
            s3.put_object(
                Bucket=bucket, Key=f"{folder}{name}.out", Body="".join(json.dumps(o) + "\n" for o in out)
            )
        total = counts["success"] + counts["error"]
        manifest = {
            "totalRecordCount": total,
            "processedRecordCount": total,
            "successRecordCount": counts["success"],
            "errorRecordCount": counts["error"],
            "inputTokenCount": counts["input"],
            "outputTokenCount": counts["output"],
        }
        s3.put_object(Bucket=bucket, Key=f"{folder}manifest.json.out", Body=json.dumps(manifest))
        job.counts = {
            "totalRecordCount": total,
            "processedRecordCount": total,
            "successRecordCount": counts["success"],
            "errorRecordCount": counts["error"],
        }

    def _answer_record(
        self, line: dict[str, Any], model_id: str, faults: Any, counts: dict[str, int]
    ) -> dict[str, Any]:
        answer = {"recordId": line.get("recordId"), "modelInput": line.get("modelInput")}
        body = line.get("modelInput") or {}
        if self._draw() < faults.batch_record_error:
            counts["error"] += 1
            return {**answer, "error": {"errorCode": 500, "errorMessage": "Internal error (a local fault)"}}
        max_tokens = int((body.get("inferenceConfig") or {}).get("maxTokens") or 4096)
        status, _, text = self._converse(
            model_id, body.get("system") or [], body.get("messages") or [], max_tokens, body.get("toolConfig")
        )
        reply = json.loads(text)
        if status != 200:
            counts["error"] += 1
            return {**answer, "error": {"errorCode": status, "errorMessage": reply.get("message", "")}}
        counts["success"] += 1
        counts["input"] += int(reply["usage"]["inputTokens"])
        counts["output"] += int(reply["usage"]["outputTokens"])
        return {**answer, "modelOutput": reply}


def _split(uri: str) -> tuple[str, str]:
    bucket, _, prefix = uri.removeprefix("s3://").partition("/")
    return bucket, prefix


def _s3(role_arn: str) -> Any:
    """The local cloud's own S3, as the job's service role."""
    return _client("s3", role_arn)


def _client(service: str, role_arn: str | None = None) -> Any:
    """A client of the local cloud's own endpoint (MOTO_PORT: the server's port; so the writes are journalled
    like any other), acting as ``role_arn`` (None: the account's administrator: the service's own calls)."""
    credentials = role_credentials(role_arn, "BedrockBatch") if role_arn else {}
    return boto3.client(  # type: ignore[call-overload]
        service,
        endpoint_url=f"http://127.0.0.1:{os.environ['MOTO_PORT']}",
        region_name=REGION,
        aws_access_key_id=credentials.get("AWS_ACCESS_KEY_ID", "local"),
        aws_secret_access_key="local",
        aws_session_token=credentials.get("AWS_SESSION_TOKEN"),
    )


def _input_files(s3: Any, uri: str) -> tuple[dict[str, list[dict[str, Any]]], int]:
    """Every ``.jsonl`` file under the input location (or the one file it names), its records in order, and
    the files' bytes."""
    bucket, prefix = _split(uri)
    keys = [prefix] if prefix.endswith(".jsonl") else []
    if not keys:
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
            keys += [o["Key"] for o in page.get("Contents", []) if o["Key"].endswith(".jsonl")]
    files, volume = {}, 0
    for key in keys:
        body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
        volume += len(body)
        files[key] = [json.loads(line) for line in body.decode("utf-8").splitlines() if line.strip()]
    return files, volume


def state_change_event(job: LocalBatchJob) -> dict[str, Any]:
    """The "Batch Inference Job State Change" event of the job's current status."""
    return {
        "version": "0",
        "id": secrets.token_hex(16),
        "detail-type": EVENT_DETAIL_TYPE,
        "source": EVENT_SOURCE,
        "account": ACCOUNT_ID,
        "time": job.last_modified,
        "region": REGION,
        "resources": [job.arn],
        "detail": {
            "version": "0.0",
            "accountId": ACCOUNT_ID,
            "batchJobName": job.name,
            "batchJobArn": job.arn,
            "batchModelId": job.model_id,
            "status": job.status,
            "failureMessage": job.message or "",
        },
    }


def deliver_state_change(job: LocalBatchJob) -> int:
    """Invoke (asynchronously) each Lambda target of the enabled default-bus rules matching the event."""
    event = state_change_event(job)
    invoked = 0
    for _, target in matching_targets(event):
        arn = str(target.get("Arn", ""))
        if ":lambda:" in arn:
            _client("lambda").invoke(
                FunctionName=arn, InvocationType="Event", Payload=json.dumps(event).encode()
            )
            invoked += 1
    return invoked
