"""The demo's local cloud: its own in-process cloud, or (``--keep``) a detached one that stays up for the
operator's commands (KeptCloudError when another already runs); the time scale its function timeouts run at;
the synthesis it deploys (config overrides); and what the cloud counted of a job (requests, invocations,
workers, bytes, the journal's cost) and the alerts its sink recorded. docagent/drills/demo.py runs the demo
on it.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docagent import project
from docagent.drills.local_job import LocalJob
from docagent.localcloud.bedrock.backends import ModelChoice, set_model
from docagent.localcloud.bedrock.model_faults import ModelFaults, model_faults_spec
from docagent.localcloud.deploy import LocalStack
from docagent.localcloud.lambdas.runtime import InvocationRecord
from docagent.localcloud.server import LocalCloud, free_port
from docagent.localcloud.stepfunctions import status_events as local_alerts
from docagent.localcloud.synth import local_context, synth_local
from functions import storage
from stacks.config import CONTEXT_KEY, DocAgentConfig, load_config

# The shortest a function's timeout may be once scaled: a worker on a busy two-core machine must still read
# its document and have the model answer within it (120 s x 0.05 = 6 s timed the first attempts out on a
# loaded machine, issue #53), so the scale is at least this over the deployment's function timeout.
MIN_SCALED_FUNCTION_SECONDS = 15.0


def default_time_scale(documents: int, function_timeout_seconds: float | None = None) -> float:
    """0.05 for the 200-document demo, proportionally more for larger jobs (up to real time): compressed
    function timeouts must still fit steps whose work grows with the job (BuildReport and VerifyJob read its
    result files and listings; a ListDocuments step is bounded whatever the size); and never so little that
    the function timeout (config ``function_timeout_seconds``, 120 s unless given) is under
    MIN_SCALED_FUNCTION_SECONDS (0.125 at 120 s)."""
    timeout = function_timeout_seconds or DocAgentConfig.model_fields["function_timeout_seconds"].default
    floor = MIN_SCALED_FUNCTION_SECONDS / float(timeout)
    return min(1.0, max(floor, 0.05 * max(1.0, documents / 200)))


class KeptCloudError(ValueError):
    """``--keep`` needs the local cloud's place: another local cloud already runs."""


@dataclass
class DemoCloud:
    """Where the demo's job runs: an in-process local cloud, or (``--keep``) a detached one that stays up."""

    endpoint: str
    state_dir: Path
    cloud: LocalCloud | None = None  # in-process only: its runtime records every invocation
    pid: int | None = None


@contextmanager
def demo_cloud(
    time_scale: float,
    keep: bool,
    persist: bool = True,
    model_faults: ModelFaults | None = None,
    model: ModelChoice | None = None,
) -> Iterator[DemoCloud]:
    """The demo's local cloud (its own, or a kept one in its own process), answering the model steps as
    ``model`` says (--model: a real model, or the labels, recorded)."""
    with _demo_cloud(time_scale, keep, persist, model_faults) as where:
        if model is not None:
            set_model(where.endpoint, model)
        yield where


@contextmanager
def _demo_cloud(
    time_scale: float, keep: bool, persist: bool = True, model_faults: ModelFaults | None = None
) -> Iterator[DemoCloud]:
    if not keep:
        # The demo prints the alert itself, after the progress bar; the sink still records it. Each demo
        # starts empty (fresh); persist=False measures the cost of keeping the state on disk.
        with LocalCloud(
            project.LOCAL_DIR / "demo",
            time_scale=time_scale,
            alert_printer=local_alerts.discard,
            fresh=True,
            persist=persist,
            model_faults=model_faults,
        ) as cloud:
            yield DemoCloud(endpoint=cloud.endpoint, state_dir=cloud.state_dir, cloud=cloud)
        return
    running = project.running_cloud()
    if running:
        raise KeptCloudError(
            f"--keep starts its own local cloud, but one already runs at {running['endpoint']} "
            f"(pid {running['pid']}): stop it with `docagent local down` first"
        )
    # `docagent local up` in its own session, as `local up --detach` starts it (one interpreter fewer).
    command = [sys.executable, "-m", "docagent.cli", "local", "up"]
    command += ["--port", str(free_port()), "--time-scale", str(time_scale), "--fresh"]
    if model_faults is not None:
        command += ["--model-faults", model_faults_spec(model_faults)]
    project.LOCAL_DIR.mkdir(parents=True, exist_ok=True)
    log_file = project.LOCAL_DIR / "cloud.log"
    with log_file.open("ab") as log:
        process = subprocess.Popen(command, cwd=project.ROOT, stdout=log, stderr=log, start_new_session=True)
    deadline = time.time() + 90  # a loaded machine imports moto slowly
    while (record := project.running_cloud()) is None:
        if process.poll() is not None or time.time() > deadline:
            raise RuntimeError(f"the local cloud did not start; see {log_file}")
        time.sleep(0.1)
    yield DemoCloud(endpoint=str(record["endpoint"]), state_dir=project.LOCAL_DIR, pid=int(record["pid"]))


def job_alerts(state_dir: Path, job_id: str, wait_seconds: float = 10.0) -> list[dict[str, Any]]:
    """The alerts the local cloud's sink recorded for the job (waiting a moment for one in flight: the event
    is delivered just after the execution's status changes)."""
    deadline = time.time() + wait_seconds
    while True:
        found = [
            {key: alert[key] for key in ("time", "job_id", "status", "rule", "topic_arn", "message")}
            for alert in local_alerts.read_alerts(state_dir)
            if alert.get("job_id") == job_id
        ]
        if found or time.time() > deadline:
            return found
        time.sleep(0.1)


def kept(where: DemoCloud, job_id: str) -> dict[str, Any]:
    return {
        "endpoint": where.endpoint,
        "pid": where.pid,
        "commands": [
            f"docagent inspect {job_id}",
            f"docagent logs {job_id}",
            f"docagent trace {job_id}",
            "docagent local down",
        ],
    }


def config_overrides(documents_per_child: int, batch_records_per_job: int | None) -> dict[str, Any]:
    """What the demo's deployment changes of the local profile (none by default)."""
    overrides: dict[str, Any] = {}
    if documents_per_child != 1:
        overrides["documents_per_child"] = documents_per_child
    if batch_records_per_job is not None:
        overrides["batch_records_per_job"] = batch_records_per_job
    return overrides


def synthesized(overrides: dict[str, Any]) -> Path:
    """The local synthesis; with config overrides (documents_per_child K > 1, batch_records_per_job) a variant
    of it (cached under its own key)."""
    if not overrides:
        return synth_local()
    load_config(local_context(overrides)[CONTEXT_KEY])  # a clear refusal
    return synth_local(overrides)


def start_counting(where: DemoCloud) -> int:
    """Reset the endpoint's request counts; the number of invocations so far (in-process clouds only)."""
    if where.cloud is None:
        return 0
    where.cloud.requests.reset()
    return len(where.cloud.runtime.invocations)


def counted_usage(where: DemoCloud, job: LocalJob, stack: LocalStack, since: int) -> dict[str, Any] | None:
    """The job's usage (a redrive included); None for a kept cloud, which counts in its own process."""
    if where.cloud is None:
        return None
    usage = job_usage(job, stack, where.cloud.requests.snapshot(), where.cloud.runtime.invocations[since:])
    usage["endpoint_ms_per_request"] = where.cloud.requests.milliseconds()  # what the local cloud costs
    usage["endpoint_cpu_seconds"] = where.cloud.requests.cpu_seconds()  # its serving threads', by request
    # Worker processes started: forked (by a function's template, with its handler imported, or by the fork
    # server), or fresh (lambdas/forking.py).
    launcher = where.cloud.runtime.launcher
    usage["lambda_workers"] = {
        "forked": launcher.forked,
        "forked_by_template": launcher.from_template,
        "fresh": launcher.started,
    }
    return usage


def job_usage(
    job: LocalJob, stack: LocalStack, requests: dict[str, dict[str, int]], invocations: list[InvocationRecord]
) -> dict[str, Any]:
    """What the job used, counted by the local cloud: requests by service and operation, Lambda invocations
    and durations by function (construct id), state transitions (the parent's history, one per child state),
    and the bytes the job left in the bucket (its jobs/ prefix and Map Run files). The operator's own
    requests (the progress polling, these reads) are marked and not counted."""
    names = {
        value: key.removesuffix("FunctionName")
        for key, value in stack.outputs.items()
        if key.endswith("FunctionName")
    }
    functions: dict[str, dict[str, float]] = {}
    for record in invocations:
        entry = functions.setdefault(
            names.get(record.function, record.function), {"invocations": 0, "ms": 0.0}
        )
        entry["invocations"] += 1
        entry["ms"] = round(entry["ms"] + record.duration_ms, 1)
    history = job.sfn.get_execution_history(executionArn=job.execution_arn, maxResults=1000)["events"]
    parent = sum(1 for event in history if str(event["type"]).endswith("StateEntered"))
    # One transition per child (its one state): child executions, not items (a batch is one child).
    counts = (job.records.map_run or {}).get("executionCounts") or {}
    children = sum(int(counts.get(name, 0)) for name in ("succeeded", "failed", "timedOut", "aborted"))
    stored = 0
    bucket = stack.outputs["BucketName"]
    for prefix in (storage.job_prefix(job.job_id), f"{storage.MAP_RUNS_PREFIX}/"):
        for page in job.s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
            stored += sum(int(item["Size"]) for item in page.get("Contents", []))
    return {
        "requests": requests,
        "lambda": functions,
        "state_transitions": parent + children,
        "stored_bytes": stored,
    }


def persistence_figures(cloud: LocalCloud) -> dict[str, Any] | None:
    """What keeping the state on disk cost: journal records, disk syncs and bytes."""
    journal = cloud.journal
    if journal is None:
        return None
    return {"journal_records": journal.appended, "disk_syncs": journal.syncs, "journal_bytes": journal.size()}
