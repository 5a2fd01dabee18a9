"""Crash-matrix cells that kill the local cloud itself (``docagent chaos --cloud``).

At each fault point, a small job's worker is held at the point (``hang``, first attempt only); the moment it
logs the fault, the whole local cloud is killed (``kill -9`` of its process group and its Lambda workers),
started again from its journal, and the job must finish with no redrive and every invariant of the worker
cells (docagent/drills/chaos/): each document's result once and equal to a crash-free run's, no finished
model call repeated, exactly one ticket, a verified report, nothing left in progress. Cells run one after
the other on one cloud process (killing it stops everything it runs).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rich.text import Text

from docagent import project
from docagent.drills.chaos import (
    DEFAULT_DOCUMENTS,
    DEFAULT_TIME_SCALE,
    DOCUMENT_POINTS,
    INPUT_PREFIX,
    POINT_STATES,
    POINTS,
    STACK_NAME,
    CellOutcome,
    ChaosRun,
)
from docagent.drills.cloud_crash import CloudProcess, wait_for_fault
from docagent.drills.demo_corpus import seed_inputs
from docagent.drills.local_job import LocalJob
from docagent.localcloud.deploy import LocalStack, deploy
from docagent.localcloud.server import free_port
from docagent.localcloud.synth import synth_local

REDUCED_CLOUD_POINTS = ("before_store_result", "before_action")
_FUNCTION_OUTPUTS = {
    "ProcessDocument": "ProcessDocumentFunctionName",
    "BuildReport": "BuildReportFunctionName",
    "RunActions": "RunActionsFunctionName",
    "VerifyJob": "VerifyJobFunctionName",
}


class _Tickets:
    """The ticket service of a cloud in another process, read over its HTTP API."""

    def __init__(self, job: LocalJob) -> None:
        self._job = job

    def tickets(self, reference: str) -> list[dict[str, Any]]:
        return self._job.renamed(reference).tickets()


class _RemoteCloud:
    """What ChaosRun needs of a cloud: its endpoint and its tickets."""

    def __init__(self, process: CloudProcess, base: LocalJob) -> None:
        self.endpoint = process.endpoint
        self.tickets = _Tickets(base)


def _fault(point: str, document_index: int) -> dict[str, Any]:
    spec: dict[str, Any] = {"point": point, "mode": "hang", "times": 1}
    if point in DOCUMENT_POINTS:
        spec["document_index"] = document_index
    return spec


def _log_group(job: LocalJob, stack: LocalStack, point: str) -> str:
    function = stack.outputs[_FUNCTION_OUTPUTS[POINT_STATES[point]]]
    arn = job.ctx.client("lambda").get_function(FunctionName=function)["Configuration"]["FunctionArn"]
    tags: dict[str, str] = job.ctx.client("lambda").list_tags(Resource=arn).get("Tags", {})
    return tags.get("docagent:log-group", f"/aws/lambda/{function}")


def run_cloud_cell(run: ChaosRun, cloud: CloudProcess, stack: LocalStack, point: str) -> CellOutcome:
    outcome = CellOutcome(point, "kill cloud", "restart")
    started = time.time()
    job = run.job(f"cloud-{point}".replace("_", "-"))
    outcome.job_id = job.job_id
    run.start(job, {"fault": _fault(point, run.document_index)})
    document_index = run.document_index if point in DOCUMENT_POINTS else None
    fired = wait_for_fault(
        job, _log_group(job, stack, point), document_index, timeout=run.job_timeout_seconds
    )
    cloud.kill()
    restored = cloud.start()
    outcome.first_status = outcome.final_status = status = run.wait(job)
    outcome.first_error = run.error_of(job)
    outcome.redrives = redrives = int(
        job.sfn.describe_execution(executionArn=job.execution_arn).get("redriveCount", 0)
    )
    path = None
    if not fired:
        path = "the fault never fired before the job ended: the cloud was not killed at the point"
    elif "1 running, resuming" not in restored:
        path = f"the restarted cloud did not resume the job: {restored!r}"
    elif status != "SUCCEEDED" or redrives:
        path = f"the job ended {status} after {redrives} redrive(s) (expected SUCCEEDED, none)"
    outcome.checks = {"expected_path": path}
    if status != "TIMED_OUT_WAITING":
        seen = run.observe(job)
        outcome.checks |= run.check(seen)
        outcome.model_calls = sum(len(calls) for calls in seen.calls.values())
        outcome.repeated_model_calls = outcome.model_calls - len(seen.calls)
    outcome.faulted_attempts = int(fired)
    outcome.seconds = round(time.time() - started, 1)
    return outcome.settle()


def run_cloud_chaos(
    points: Sequence[str] = POINTS,
    *,
    documents: int = DEFAULT_DOCUMENTS,
    time_scale: float = DEFAULT_TIME_SCALE,
    state_root: Path | None = None,
    on_cell: Callable[[CellOutcome], None] | None = None,
) -> dict[str, Any]:
    unknown = sorted(set(points) - set(POINTS))
    if unknown:
        raise ValueError(f"unknown fault points: {', '.join(unknown)}")
    started = time.time()
    out_dir = synth_local()
    cloud = CloudProcess(state_root or project.STATE_DIR / "chaos-cloud", free_port(), time_scale)
    try:
        cloud.start(fresh=True)
        stack = deploy(out_dir, STACK_NAME, cloud.endpoint)
        base = LocalJob.on(cloud.endpoint, stack, "seed")
        run = ChaosRun(
            _RemoteCloud(cloud, base),  # type: ignore[arg-type]  # the endpoint and tickets are all it uses
            stack,
            documents=documents,
            run_id=f"{time.strftime('%H%M%S')}{uuid.uuid4().hex[:4]}",
            job_timeout_seconds=max(120.0, 6000 * time_scale),
        )
        seed_inputs(run.base, documents, INPUT_PREFIX)
        baseline = run.run_baseline()
        outcomes = []
        for point in points:
            outcome = run_cloud_cell(run, cloud, stack, point)
            outcomes.append(outcome)
            if on_cell is not None:
                on_cell(outcome)
    finally:
        cloud.stop()
    failed = [outcome for outcome in outcomes if outcome.status != "pass"]
    return {
        "passed": not failed and baseline.status == "pass",
        "documents": documents,
        "time_scale": time_scale,
        "cloud_restarts": len(outcomes),
        "repeated_model_calls": sum(outcome.repeated_model_calls for outcome in outcomes),
        "baseline": baseline.as_json(),
        "cells": [outcome.as_json() for outcome in outcomes],
        "seconds": round(time.time() - started, 1),
    }


def print_cloud_cells(summary: dict[str, Any], console: Any) -> None:
    for cell in summary["cells"]:
        colour = "green" if cell["status"] == "pass" else "bold red"
        console.print(
            Text.assemble(
                (cell["status"], colour),
                f" kill the cloud at {cell['point']}: {cell['final_status']}, "
                f"{cell['repeated_model_calls']} repeated model calls, {cell['seconds']:.0f} s"
                + (f" ({cell['reason']})" if cell["reason"] else ""),
            )
        )
    console.print(json.dumps({"passed": summary["passed"], "seconds": summary["seconds"]}))
