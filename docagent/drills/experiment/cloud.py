"""The strategies that run on the local cloud, through the product's synthesized workflow:

- ``per document`` (the product): the Distributed Map runs ProcessDocument once per document, with durable
  steps (Powertools idempotency on DynamoDB) and the model call journalled in S3 before its step completes;
- ``per batch``: the same workflow with an ``ItemBatcher`` on the Distributed Map and a child that reviews its
  batch and stores the batch's results together at the end (batch_handler.py); PrepareJob, BuildReport,
  CreateTicket and VerifyJob are the product's own.

The kill is the product's fault point (demo_crash.py's ``Crash``): the Lambda worker process dies
(``os._exit(137)``, as an out-of-memory kill) after document K's model call and before its result is
stored, or after the ticket was opened for K equal to the job's size. ``redrive`` recovery (the demo's): it
dies on every attempt until the job fails and is redriven; ``retry``: it dies once and the child's Retry
recovers it.
"""

from __future__ import annotations

import io
import json
import time
import uuid
import zipfile
from pathlib import Path
from typing import Any

from docagent import project
from docagent.drills.demo_corpus import seed_inputs
from docagent.drills.experiment.measures import Run, comparable, repeats_of
from docagent.drills.local_job import LocalJob
from docagent.localcloud.bedrock.model_faults import ModelFaults
from docagent.localcloud.deploy import LocalStack, deploy
from docagent.localcloud.server import LocalCloud
from docagent.localcloud.synth import synth_local
from docagent.operations.records import execution_arn_for
from functions import storage
from stacks import outputs as names

BATCH_HANDLER = Path(__file__).with_name("batch_handler.py")
BATCH_MODULE = "experiment_batch_handler"
JOB_TIMEOUT_SECONDS = 1800.0
POLL_SECONDS = 0.02


def batch_code() -> bytes:
    """The product's Lambda code (functions/) plus the batch handler at the root of the zip."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted((project.ROOT / "functions").rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                archive.write(path, path.relative_to(project.ROOT).as_posix())
        archive.write(BATCH_HANDLER, f"{BATCH_MODULE}.py")
    return buffer.getvalue()


def batched_definition(definition: str, function_arn: str, batch_size: int) -> str:
    """The product's workflow with an ItemBatcher on its Distributed Map, the batch function as the child."""
    document = json.loads(definition)
    review = document["States"]["ReviewDocuments"]
    review["ItemBatcher"] = {"MaxItemsPerBatch": batch_size}
    child = review["ItemProcessor"]["States"]["ProcessDocument"]
    child["Parameters"] = {
        "FunctionName": function_arn,
        "Payload": {
            "items.$": "$.Items",
            "retry_count.$": "$$.State.RetryCount",
            "redrive_count.$": "$$.Execution.RedriveCount",
        },
    }
    return json.dumps(document)


class CloudJobError(RuntimeError):
    """A job that did not succeed, or not in time."""


class CloudSession:
    """One local cloud with the product deployed and the per-batch variant next to it."""

    def __init__(
        self, state_dir: Path, time_scale: float, batch_size: int, model_latency_ms: int = 0
    ) -> None:
        # A hosted model's latency, as the worker strategies sleep it: the local Bedrock answers after it
        # (real time, not scaled by the time scale).
        faults = ModelFaults(latency=model_latency_ms / 1000) if model_latency_ms else None
        self.cloud = LocalCloud(state_dir, time_scale=time_scale, model_faults=faults)
        self.batch_size = batch_size
        self.stack: LocalStack | None = None
        self.batch_function = ""
        self.batch_state_machine = ""

    def __enter__(self) -> CloudSession:
        self.cloud.start()
        try:
            self.stack = deploy(synth_local(), "DocAgent", self.cloud.endpoint)
            self._deploy_batch_variant()
        except BaseException:
            self.cloud.stop()
            raise
        return self

    def __exit__(self, *_: Any) -> None:
        self.cloud.stop()

    def _job(self, job_id: str) -> LocalJob:
        assert self.stack is not None
        return LocalJob.on(self.cloud.endpoint, self.stack, job_id)

    def _deploy_batch_variant(self) -> None:
        assert self.stack is not None
        job = self._job("setup")
        lambda_ = job.ctx.client("lambda")
        product = lambda_.get_function_configuration(
            FunctionName=self.stack.outputs[names.function_name_output(names.PROCESS_DOCUMENT)]
        )
        self.batch_function = f"{self.stack.stack_name}-ExperimentPerBatch"
        created = lambda_.create_function(
            FunctionName=self.batch_function,
            Runtime=product["Runtime"],
            Role=product["Role"],
            Handler=f"{BATCH_MODULE}.handler",
            Code={"ZipFile": batch_code()},
            # A batch does the work of ``batch_size`` documents.
            Timeout=product["Timeout"] * self.batch_size,
            MemorySize=product["MemorySize"],
            Environment={"Variables": product["Environment"]["Variables"]},
        )
        described = job.sfn.describe_state_machine(stateMachineArn=job.ctx.state_machine_arn)
        # Not in the template: the workflow role may neither start this machine's Map children nor invoke the
        # batch function (the local IAM refuses both, as AWS would), so it runs as a role of its own, which
        # the local cloud does not evaluate (docs/local-cloud.md "IAM": roles not deployed from a template).
        name = f"{self.stack.stack_name}-ExperimentPerBatch"
        self.batch_state_machine = job.sfn.create_state_machine(
            name=name,
            definition=batched_definition(described["definition"], created["FunctionArn"], self.batch_size),
            roleArn=f"{described['roleArn'].rsplit('/', 1)[0]}/{name}",
            type="STANDARD",
        )["stateMachineArn"]

    def run(
        self,
        strategy: str,
        documents: int,
        kill_at: int | None,
        expected: dict[str, tuple[str, tuple[str, ...]]] | None,
        recovery: str = "redrive",
    ) -> tuple[Run, dict[str, tuple[str, tuple[str, ...]]]]:
        """One job of ``strategy`` ("per document" or "per batch"), killed at ``kill_at`` and recovered."""
        assert self.stack is not None
        batched = strategy == "per batch"
        job_id = f"exp-{'batch' if batched else 'doc'}-{uuid.uuid4().hex[:10]}"
        job = self._job(job_id)
        state_machine = self.batch_state_machine if batched else job.ctx.state_machine_arn
        execution = execution_arn_for(state_machine, job_id)
        prefix = storage.incoming_prefix(job_id)
        seed_inputs(job, documents, prefix)
        request: dict[str, Any] = {"job_id": job_id, "prefix": prefix}
        until = {"until_redrive": 1} if recovery == "redrive" else {"times": 1}
        if kill_at is not None and kill_at < documents:
            fault = {"point": "before_store_result", "document_index": kill_at, "mode": "exit", **until}
            request["options"] = {"fault": fault}
            product = self.stack.outputs[names.function_name_output(names.PROCESS_DOCUMENT)]
            target = self.batch_function if batched else product
        elif kill_at is not None:
            request["options"] = {"fault": {"point": "after_action", "mode": "exit", **until}}
            target = self.stack.outputs[names.function_name_output(names.RUN_ACTIONS)]
        else:
            target = ""
        idempotency_before = self._idempotency_items(job)
        started = time.monotonic()
        job.sfn.start_execution(stateMachineArn=state_machine, name=job_id, input=json.dumps(request))
        timings = self._follow(
            job,
            execution,
            started=started,
            target=target,
            kill_at=kill_at,
            documents=documents,
            redrive=recovery == "redrive",
        )
        journal = storage.model_calls_root(job_id)
        called = [storage.model_call_document(job_id, key) for key, _ in _objects(job, journal)]
        calls, repeated, repeated_documents = repeats_of(called)
        job.records.refresh()
        results = comparable(result.model_dump(mode="json") for result in job.records.results.values())
        storage_bytes, records = self._storage(
            job, execution, idempotency_before, include_journal=not batched
        )
        run = Run(
            strategy=strategy,
            documents=documents,
            kill_at=kill_at,
            job_seconds=timings["job"],
            recovery_first_progress_seconds=timings.get("first"),
            recovery_seconds=timings.get("recovery"),
            recovery=f"Step Functions {recovery}" + (", journal reused" if not batched else ", batch rerun"),
            model_calls=calls,
            repeated_model_calls=repeated,
            repeated_documents=repeated_documents,
            tickets=len(job.tickets()),
            results=len(results),
            correct=results == (expected if expected is not None else results),
            storage_bytes=storage_bytes,
            checkpoint_records=records,
        )
        return run, results

    def _follow(
        self,
        job: LocalJob,
        execution: str,
        *,
        started: float,
        target: str,
        kill_at: int | None,
        documents: int,
        redrive: bool,
    ) -> dict[str, float]:
        """Runs the job to its end; times the kill, the killed unit's recovery and the end."""
        runtime = self.cloud.runtime
        seen = len(runtime.invocations_of(target)) if target else 0

        def status() -> str:
            return str(job.sfn.describe_execution(executionArn=execution)["status"])

        killed = first = None
        redriven = False
        deadline = started + JOB_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            now_status = status()
            now = time.monotonic()
            if target:
                records = runtime.invocations_of(target)[seen:]
                if killed is None and any(r.error_type == "Runtime.ExitError" for r in records):
                    killed = now
                if (
                    killed is not None
                    and first is None
                    and any(r.error_type is None and _covers(r.event, kill_at, documents) for r in records)
                ):
                    first = now
            if now_status == "FAILED" and redrive and not redriven and killed is not None:
                job.sfn.redrive_execution(executionArn=execution)
                redriven = True
            elif now_status != "RUNNING":
                break  # SUCCEEDED, or failed for another reason than the kill (reported by the caller)
            time.sleep(POLL_SECONDS)
        ended = time.monotonic()
        if killed is None and kill_at is not None and status() == "SUCCEEDED":
            raise CloudJobError(f"job {job.job_id}: the fault at {kill_at} never killed a worker")
        if status() != "SUCCEEDED":
            described = job.sfn.describe_execution(executionArn=execution)
            raise CloudJobError(f"job {job.job_id} ended {described['status']}: {described.get('error')}")
        timings = {"job": round(ended - started, 4)}
        if killed is not None:
            timings["recovery"] = round(ended - killed, 4)
            timings["first"] = round((first or ended) - killed, 4)
        return timings

    def _idempotency_items(self, job: LocalJob) -> dict[str, int]:
        """Every idempotency record's id and size (attribute names and values, as DynamoDB counts them)."""
        assert self.stack is not None
        items: dict[str, int] = {}
        paginator = job.dynamodb.get_paginator("scan")
        for page in paginator.paginate(TableName=self.stack.outputs[names.IDEMPOTENCY_TABLE]):
            for item in page["Items"]:
                size = sum(len(name) + len(str(next(iter(value.values())))) for name, value in item.items())
                items[json.dumps(item.get("id"))] = size
        return items

    def _storage(
        self, job: LocalJob, execution: str, before: dict[str, int], include_journal: bool
    ) -> tuple[int, int]:
        """Bytes and records the job wrote to S3 and DynamoDB, apart from its inputs, its report and (for the
        per-batch child, whose records nothing reads back) the model-call records kept for counting."""
        runs = job.sfn.list_map_runs(executionArn=execution).get("mapRuns", [])
        prefixes = [storage.job_prefix(job.job_id)]
        prefixes += [storage.map_run_manifest_key(run["mapRunArn"]).rsplit("/", 1)[0] + "/" for run in runs]
        journal = storage.model_calls_root(job.job_id)
        sizes = [
            size
            for prefix in prefixes
            for key, size in _objects(job, prefix)
            if key != storage.report_key(job.job_id) and (include_journal or not key.startswith(journal))
        ]
        added = [size for key, size in self._idempotency_items(job).items() if key not in before]
        return sum(sizes) + sum(added), len(sizes) + len(added)


def _objects(job: LocalJob, prefix: str) -> list[tuple[str, int]]:
    """Every (key, size) under ``prefix`` in the job bucket."""
    found: list[tuple[str, int]] = []
    for page in job.s3.get_paginator("list_objects_v2").paginate(Bucket=job.bucket, Prefix=prefix):
        found += [(item["Key"], int(item["Size"])) for item in page.get("Contents", [])]
    return found


def _covers(event: Any, kill_at: int | None, documents: int) -> bool:
    """Whether an invocation's event holds the killed unit: document ``kill_at``, its batch, or the ticket."""
    if not isinstance(event, dict) or kill_at is None:
        return False
    if kill_at >= documents:
        return True
    items = event.get("items") or [event]
    return any(isinstance(item, dict) and item.get("document", {}).get("index") == kill_at for item in items)
