"""``docagent demo``: the product's main job, end to end, on the local cloud.

Synthesizes the app with the local profile (when stale), starts the local cloud, deploys the
synthesized template, generates documents with known ground truth, runs a job through the real
Step Functions definition and reports what happened, measured from durable records only. The demo's local
cloud is docagent/drills/demo_cloud.py, its crash and redrive docagent/drills/demo_crash.py.
"""

from __future__ import annotations

import json
import time
import uuid
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from docagent import project
from docagent.drills.batch_figures import batch_jobs_of, model_calls_by_mode, model_calls_by_model
from docagent.drills.budget_demo import DemoBudget, after_budget, spend_summary
from docagent.drills.cpu import CpuClock, cpu_clock, cpu_figures
from docagent.drills.demo_cloud import (
    DemoCloud,
    config_overrides,
    counted_usage,
    default_time_scale,
    demo_cloud,
    job_alerts,
    kept,
    persistence_figures,
    start_counting,
    synthesized,
)
from docagent.drills.demo_corpus import (
    Truth,
    extraction_accuracy,
    extraction_accuracy_by_format,
    seed_inputs,
)
from docagent.drills.demo_crash import (
    Crash,
    attempts_killed,
    crash_summary,
    first_new_progress,
    where_it_stopped,
)
from docagent.drills.document_files import DEFAULT_FORMATS, CorpusFormat
from docagent.drills.local_job import LocalJob
from docagent.localcloud.bedrock.backends import ModelChoice
from docagent.localcloud.bedrock.model_faults import ModelFaults
from docagent.localcloud.deploy import LocalStack, deploy
from docagent.operations.progress import progress_bar
from docagent.operations.unfinished_calls import unfinished_cause
from functions import storage
from functions.payloads.model_calls import ModelCallRecord
from stacks import outputs as names

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
        summary["persistence"] = persistence_figures(where.cloud) if where.cloud is not None else None
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
        redrive_to_progress = first_new_progress(job, before)
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


def _checked_time_scale(documents: int, time_scale: float | None, crash: Crash | None) -> float:
    if documents < 1:
        raise ValueError("--documents must be at least 1")
    if crash is not None and not 0 <= crash.document_index < documents:
        raise ValueError(f"--crash-at must be a document index from 0 to {documents - 1}")
    return default_time_scale(documents) if time_scale is None else time_scale


def _short(message: str) -> str:
    return "\n".join(line if len(line) <= 160 else f"{line[:160]}..." for line in message.splitlines())


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
