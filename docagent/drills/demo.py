"""``docagent demo``: the product's main job, end to end, on the local cloud.

Synthesizes the app with the local profile (when stale), starts the local cloud, deploys the
synthesized template, generates documents with known ground truth, runs a job through the real
Step Functions definition and reports what happened, measured from durable records only.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from docagent import project
from docagent.drills.batch_figures import batch_jobs_of, model_calls_by_mode, model_calls_by_model
from docagent.drills.budget_demo import DemoBudget, after_budget, spend_summary
from docagent.drills.cpu import CpuClock, cpu_clock, cpu_figures
from docagent.drills.demo_corpus import (
    Truth,
    extraction_accuracy,
    extraction_accuracy_by_format,
    seed_inputs,
)
from docagent.drills.document_files import DEFAULT_FORMATS, CorpusFormat
from docagent.drills.local_job import LocalJob
from docagent.localcloud.bedrock.backends import ModelChoice, set_model
from docagent.localcloud.bedrock.model_faults import ModelFaults, model_faults_spec
from docagent.localcloud.deploy import LocalStack, deploy
from docagent.localcloud.lambdas.runtime import InvocationRecord
from docagent.localcloud.server import LocalCloud, free_port
from docagent.localcloud.stepfunctions import status_events as local_alerts
from docagent.localcloud.synth import local_context, synth_local
from docagent.operations.context import OperatorContext
from docagent.operations.map_run_children import documents_of_input
from docagent.operations.progress import progress_bar
from docagent.operations.trace_job import build_trace, span_lines
from docagent.operations.unfinished_calls import unfinished_cause
from functions import storage
from functions.durability.fault_points import fault_point_named
from functions.payloads.model_calls import ModelCallRecord
from stacks import outputs as names
from stacks.config import CONTEXT_KEY, DocAgentConfig, load_config

if TYPE_CHECKING:  # imported where `demo --job` runs (it needs the kit's definition and label modules)
    from docagent.drills.job_folder import JobFolder


console = Console(stderr=True, markup=False)  # errors and alerts print as written


def follow(job: LocalJob, documents: int, show_progress: bool, description: str = "documents") -> str:
    with progress_bar(show_progress) as progress:
        task = progress.add_task(description, total=documents, detail="")
        # The Map Run's counts cost two calls whatever the job's size; listing the results would not. They are
        # read from the records status() has just refreshed, and only for a bar that is shown: the polling is
        # CPU of the process the local cloud runs in (docs/performance.md).
        while (status := job.status()) == "RUNNING":
            if show_progress:
                counts = job.records.map_run_counts() or {}
                progress.update(
                    task,
                    completed=counts.get("succeeded", 0),
                    detail=f"failed {counts.get('failed', 0)} · in flight {counts.get('running', 0)}",
                )
            time.sleep(0.25)
        job.records.refresh()
        progress.update(task, completed=len(job.records.result_ids), detail=status)
    return status


@dataclass(frozen=True)
class Crash:
    """A fault armed for one document (or, at a job-level point such as after_batch_submit, for the job): the
    worker dies at ``point`` (default: before the document's result is stored)."""

    document_index: int
    mode: str  # "redrive": on every attempt until the execution is redriven; "transient": first attempt only
    point: str = "before_store_result"

    def job_options(self) -> dict[str, Any]:
        until = {"until_redrive": 1} if self.mode == "redrive" else {"times": 1}
        return {
            "fault": {"point": self.point, "document_index": self.document_index, "mode": "exit", **until}
        }


def where_it_stopped(job: LocalJob) -> dict[str, Any]:
    """What the durable records say about a failed job: counts, failed documents, state and error."""
    counts = job.map_run_counts() or {}
    described = job.records.require_execution()
    failed = [  # the documents of the failed children (a batch's: each of its documents)
        {"index": document.get("index"), "error": entry.get("Error")}
        for entry in job.map_run_entries("FAILED")
        for document in documents_of_input(entry.get("Input"))
    ]
    return {
        "failed_state": job.records.current_state(),
        "error": described.get("error"),
        "documents_done": counts.get("succeeded", 0),
        "documents_failed": failed,
        "documents_pending": counts.get("pending", 0),
    }


def _first_new_progress(job: LocalJob, before: int, timeout: float = 30.0) -> float:
    """Seconds from the redrive until one more document has succeeded than before it."""
    started = time.time()
    while time.time() - started < timeout:
        if (job.map_run_counts() or {}).get("succeeded", 0) > before or job.status() != "RUNNING":
            break
        time.sleep(0.02)
    return round(time.time() - started, 3)


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


def default_crash_index(documents: int) -> int:
    """The mission's story crashes document 138 of 200; smaller jobs crash two thirds of the way in."""
    return 138 if documents > 138 else documents * 2 // 3


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


def run_demo(
    documents: int = 200,
    time_scale: float | None = None,
    show_progress: bool = True,
    crash: Crash | None = None,
    *,
    keep: bool = False,
    persist: bool = True,
    model_faults: ModelFaults | None = None,
    formats: Sequence[CorpusFormat] = DEFAULT_FORMATS,
    documents_per_child: int = 1,
    job_folder: JobFolder | None = None,
    demo_budget: DemoBudget | None = None,
    inference: str = "on_demand",
    model: ModelChoice | None = None,
    batch_records_per_job: int | None = None,
) -> dict[str, Any]:
    """The invoice review on generated documents; with ``job_folder`` (``--job PATH``), that definition on its
    samples instead (docagent/drills/job_folder.py)."""
    documents = documents if job_folder is None else len(job_folder.documents)
    time_scale = _checked_time_scale(documents, time_scale, crash)
    started = time.time()
    phases: dict[str, float] = {}
    marks = [started]

    def lap(name: str) -> None:
        marks.append(time.time())
        phases[name] = round(marks[-1] - marks[-2], 2)

    out_dir = synthesized(config_overrides(documents_per_child, batch_records_per_job))
    lap("synth")
    job_id = f"demo-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"
    with demo_cloud(time_scale, keep, persist, model_faults, model) as where:
        stack = deploy(out_dir, names.STACK_NAME, where.endpoint)
        if keep:
            stack.save(project.LOCAL_STACK_FILE)  # so inspect, logs and trace find the deployment
        lap("deploy")
        summary, cpu_before, cpu_job = demo_job(
            where,
            stack,
            job_id,
            documents,
            crash,
            show_progress=show_progress,
            formats=formats,
            job_folder=job_folder,
            demo_budget=demo_budget,
            inference=inference,
            model_faults=model_faults,
            model=model,
            lap=lap,
        )
        summary["wall_seconds"] = round(time.time() - started, 2)
        summary["phase_seconds"] = phases
        summary["kept"] = kept(where, job_id) if keep else None
        summary["persistence"] = _persistence_figures(where.cloud) if where.cloud is not None else None
    # The cloud has stopped: every worker has exited and been waited for, so its CPU is counted.
    summary["cpu_seconds"] = (
        cpu_figures(cpu_before, cpu_job, cpu_clock(), documents) if where.cloud is not None else None
    )
    return summary


def demo_job(
    where: DemoCloud,
    stack: LocalStack,
    job_id: str,
    documents: int,
    crash: Crash | None = None,
    *,
    show_progress: bool = False,
    formats: Sequence[CorpusFormat] = DEFAULT_FORMATS,
    job_folder: JobFolder | None = None,
    demo_budget: DemoBudget | None = None,
    inference: str = "on_demand",
    model_faults: ModelFaults | None = None,
    model: ModelChoice | None = None,
    lap: Callable[[str], None] = lambda _phase: None,
) -> tuple[dict[str, Any], CpuClock, CpuClock]:
    """The demo's job on a local cloud where ``stack`` is deployed (the demo's own, or one already running:
    the integration tests run some on their session cloud): its documents seeded, started, followed, a crash
    redriven and a budget raised, and what it did, read from durable records; with this process's CPU clock
    at the job's start and at its end. ``model_faults`` and ``model`` say what the cloud was given."""
    job = LocalJob.on(where.endpoint, stack, job_id)
    prefix = storage.incoming_prefix(job_id)
    truth = (
        seed_inputs(job, documents, prefix, formats) if job_folder is None else job_folder.seed(job, prefix)
    )
    lap("seed")
    request = start_request(job_id, prefix, crash, job_folder, demo_budget=demo_budget, inference=inference)
    invocations_before = start_counting(where)
    cpu_before = cpu_clock()
    job.start(request)
    status = follow(job, documents, show_progress)
    lap("job")
    stopped_at: dict[str, Any] | None = None
    redrive_to_progress = None
    alerts = _alerts_of_failure(where, job_id, show_progress) if status != "SUCCEEDED" else []
    if status != "SUCCEEDED" and crash is not None and crash.mode == "redrive":
        stopped_at = where_it_stopped(job)
        if show_progress:
            _print_stop(stopped_at)
        before = (job.map_run_counts() or {}).get("succeeded", 0)
        job.sfn.redrive_execution(executionArn=job.execution_arn)
        redrive_to_progress = _first_new_progress(job, before)
        status = follow(job, documents, show_progress, description="redriven")
        lap("redrive")
    status, budget_stop = after_budget(
        job, demo_budget, status, lambda: follow(job, documents, show_progress, description="redriven")
    )
    cpu_job = cpu_clock()
    summary = summarize(job, truth, documents, status)
    summary.update(
        **model_figures(job, inference),
        spend=(spent := spend_summary(job)),
        model_cost_usd=spent["model_cost_usd"],
        budget_exceeded=budget_stop,
        alerts=alerts,
        model_faults=model_faults.model_dump(exclude_defaults=True) if model_faults else None,
        model=(model or ModelChoice()).mode(),
        **(job_folder.summary(job, prefix) if job_folder is not None else {}),
    )
    if crash is not None:
        summary.update(
            crash=crash_summary(crash, attempts_killed(where, stack, job, crash)),
            stopped_at=stopped_at,
            redrive_to_first_progress_seconds=redrive_to_progress,
        )
    summary["usage"] = counted_usage(where, job, stack, invocations_before)
    return summary, cpu_before, cpu_job


def start_request(
    job_id: str,
    prefix: str,
    crash: Crash | None,
    job_folder: JobFolder | None = None,
    *,
    demo_budget: DemoBudget | None = None,
    inference: str = "on_demand",
) -> dict[str, Any]:
    """The demo job's start request: its documents, the crash's fault, the definition folder's name, the
    budget, how its model calls are made."""
    request: dict[str, Any] = {"job_id": job_id, "prefix": prefix}
    if job_folder is not None:
        request.update(job_folder.request())
    if crash is not None:
        request["options"] = crash.job_options()
    if demo_budget is not None:
        request["options"] = {**request.get("options", {}), **demo_budget.job_options()}
    if inference != "on_demand":
        request.setdefault("options", {})["inference"] = inference
    return request


def model_figures(job: LocalJob, inference: str) -> dict[str, Any]:
    """How the job's model calls were made and what they cost (docagent/drills/batch_figures.py)."""
    return {
        "inference": inference,
        "batch_jobs": batch_jobs_of(job.ctx.client("bedrock"), job.job_id),
        "model_calls_by_mode": model_calls_by_mode(job.records.model_calls),
        "model_calls_by_model": model_calls_by_model(job.records.model_calls),
    }


def _alerts_of_failure(where: DemoCloud, job_id: str, show_progress: bool) -> list[dict[str, Any]]:
    """The alerts the failed job raised, shown as they arrive on the topic."""
    alerts = job_alerts(where.state_dir, job_id)
    if show_progress:
        for alert in alerts:
            console.print(
                Text.assemble(("ALERT", "bold red"), f" to {alert['topic_arn']}:\n{_short(alert['message'])}")
            )
    return alerts


def crash_summary(crash: Crash, killed: int) -> dict[str, Any]:
    per_document = fault_point_named(crash.point).scope == "document"
    return {
        "document_index": crash.document_index if per_document else None,
        "fault_point": crash.point,
        "mode": crash.mode,
        "attempts_killed": killed,
    }


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


def event_indexes(event: dict[str, Any]) -> set[int]:
    """The indexes of the documents a ProcessDocument event carries (one ``document``, or a batch's items)."""
    batch = event.get("items")
    documents = documents_of_input({"Items": batch} if isinstance(batch, list) else event)
    return {int(document["index"]) for document in documents if isinstance(document.get("index"), int)}


def _checked_time_scale(documents: int, time_scale: float | None, crash: Crash | None) -> float:
    if documents < 1:
        raise ValueError("--documents must be at least 1")
    if crash is not None and not 0 <= crash.document_index < documents:
        raise ValueError(f"--crash-at must be a document index from 0 to {documents - 1}")
    return default_time_scale(documents) if time_scale is None else time_scale


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


def attempts_killed(where: DemoCloud, stack: LocalStack, job: LocalJob, crash: Crash) -> int:
    """How many invocations died at the crash's point (of its document, at a per-document point): the
    in-process runtime's records, or (a kept, detached cloud) the job's trace, where a killed attempt is a
    span the runtime reported dead."""
    document_index = crash.document_index
    if where.cloud is not None:
        point = fault_point_named(crash.point)
        batch_step = point.step in {"SubmitBatchJob", "WaitForBatchJob"}
        function = names.BATCH_INFERENCE if batch_step else point.step
        return len(
            [
                record
                for record in where.cloud.runtime.invocations_of(
                    stack.outputs[names.function_name_output(function)]
                )
                if record.error_type == "Runtime.ExitError"
                and (point.scope != "document" or document_index in event_indexes(record.event))
            ]
        )
    ctx = OperatorContext.local(where.endpoint)
    started = job.records.require_execution()["startDate"]
    trace = build_trace(job.job_id, {}, [], [], span_lines(ctx, job.job_id, started))
    return sum(doc["killed_attempts"] for doc in trace["documents"] if doc["index"] == document_index)


def _short(message: str) -> str:
    return "\n".join(line if len(line) <= 160 else f"{line[:160]}..." for line in message.splitlines())


def _persistence_figures(cloud: LocalCloud) -> dict[str, Any] | None:
    """What keeping the state on disk cost: journal records, disk syncs and bytes."""
    journal = cloud.journal
    if journal is None:
        return None
    return {"journal_records": journal.appended, "disk_syncs": journal.syncs, "journal_bytes": journal.size()}


def _print_stop(stopped: dict[str, Any]) -> None:
    failed = ", ".join(f"#{doc['index']} ({doc['error']})" for doc in stopped["documents_failed"]) or "none"
    console.print(
        Text.assemble(
            ("job failed", "red"),
            " in state ",
            (stopped["failed_state"], "bold"),
            f" with {stopped['error']}: {stopped['documents_done']} documents done, failed: {failed}, "
            f"{stopped['documents_pending']} pending. Redriving: only unfinished documents run again.",
        )
    )


def call_groups(
    journal: Mapping[str, Sequence[ModelCallRecord]],
) -> dict[tuple[str, str], list[ModelCallRecord]]:
    """The journal's calls by document, purpose, section and page window (a packet's page window or
    section, functions/reading/sections.py; a long PDF's extract window, functions/reading/page_windows.py:
    one call each): a document's classify call and its extract call are one each, so a group of more than one
    holds a repeated call."""
    groups: dict[tuple[str, str], list[ModelCallRecord]] = {}
    for document_id, calls in journal.items():
        for call in calls:
            record = call.model_dump(mode="json")
            purpose = str(record.get("purpose", "extract"))
            if record.get("section_id"):
                purpose = f"{purpose}-{record['section_id']}"
            if record.get("window"):
                purpose = f"{purpose} {record['window']}"
            groups.setdefault((document_id, purpose), []).append(call)
    return groups


def summarize(job: LocalJob, truth: dict[str, Truth], documents: int, status: str) -> dict[str, Any]:
    job.records.refresh()
    results = list(job.records.results.values())
    journal = job.records.model_calls
    model_calls = sum(len(calls) for calls in journal.values())
    description = job.records.require_execution()
    attempts = job.records.read_many(job.records.keys(storage.model_attempts_root(job.job_id)))
    output = json.loads(description.get("output") or "{}")
    return {
        "job_id": job.job_id,
        "status": status,
        "documents": documents,
        "results": len(results),
        "rejected_documents": sum(result.status == "rejected" for result in results),
        "documents_in_review": sum(result.status == "review" for result in results),
        "tickets": len(job.tickets()),
        "model_path": job.model_path(),
        "model_calls": model_calls,
        "repeated_model_calls": model_calls - len(call_groups(journal)),
        "model_calls_throttled": sum(attempt["error"] == "ModelThrottled" for attempt in attempts),
        "model_calls_unfinished": dict(sorted(Counter(map(unfinished_cause, attempts)).items())),
        "redrive_count": int(description.get("redriveCount", 0)),
        "verified": bool(output.get("verification", {}).get("verified", False)),
        "extraction_accuracy": extraction_accuracy(results, truth),
        "extraction_accuracy_by_format": extraction_accuracy_by_format(results, truth),
        "documents_by_format": dict(sorted(Counter(item.format for item in truth.values()).items())),
        "error": description.get("error"),
    }
