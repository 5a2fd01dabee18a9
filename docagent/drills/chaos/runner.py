"""``docagent chaos``'s run: synthesize, start one local cloud, deploy the app (and its EXPRESS variant),
then run the baseline, the cells and the at-least-once cell side by side, the slowest cells first."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docagent import project
from docagent.drills.chaos.matrix import (
    MODES,
    POINTS,
    RECOVERIES,
    Cell,
    expected_cost,
    full_matrix,
    is_probe,
    not_applicable,
)
from docagent.drills.chaos.outcome import IGNORED_REPORT_FIELDS, IGNORED_RESULT_FIELDS, CellOutcome
from docagent.drills.chaos.run import STACK_NAME, ChaosRun
from docagent.localcloud.bedrock.backends import ModelChoice, set_model
from docagent.localcloud.bedrock.model_faults import model_faults_of
from docagent.localcloud.deploy import LocalStack, deploy
from docagent.localcloud.server import LocalCloud
from docagent.localcloud.stepfunctions import status_events as alerts
from docagent.localcloud.synth import synth_local_variants

if TYPE_CHECKING:
    from docagent.drills.job_folder import JobFolder  # `chaos --job` only (the kit's definition and labels)

DEFAULT_DOCUMENTS = 3
DEFAULT_TIME_SCALE = 0.1
DEFAULT_PARALLEL = 6
EXPRESS_STACK_NAME = "DocAgentExpress"
EXPRESS_PROFILE: dict[str, Any] = {"child_execution_type": "EXPRESS", "stack_name": EXPRESS_STACK_NAME}
# Workers per function: AWS allows 1,000 concurrent executions per account; the local default of 16 would
# throttle a matrix's concurrent jobs (each holds a worker for a whole timeout while it hangs).
MAX_WORKERS_PER_FUNCTION = 64
# The first cells start this far apart: a worker's cold start costs about a second of CPU, and a burst of
# them on a small machine can push healthy invocations past their (scaled) timeouts.
START_STAGGER_SECONDS = 0.5


def run_chaos(
    cells: Sequence[Cell] | None = None,
    *,
    documents: int = DEFAULT_DOCUMENTS,
    at_least_once: bool = True,
    time_scale: float = DEFAULT_TIME_SCALE,
    parallel: int = DEFAULT_PARALLEL,
    state_dir: Path | None = None,
    on_cell: Callable[[CellOutcome], None] | None = None,
    job_folder: JobFolder | None = None,
    model: ModelChoice | None = None,
) -> dict[str, Any]:
    """Synthesize, start one local cloud, deploy, then run the baseline, the cells and the at-least-once cell
    side by side (every check waits for the baseline); return the matrix (the ``--json`` object). With
    ``job_folder`` (``--job PATH``) the jobs run that definition on its samples. With ``model`` (``--model``:
    a real model) the baseline runs first against it, its replies recorded, and every cell replays them: a
    cell checks a recovery against the baseline, which a model answering anew on every call would not
    allow; so the real model is asked once per document and purpose (``real_model_calls``)."""
    documents = documents if job_folder is None else len(job_folder.documents)
    if documents < 1:
        raise ValueError("--documents must be at least 1")
    if parallel < 1:
        raise ValueError("--parallel must be at least 1")
    cells = list(full_matrix() if cells is None else cells)
    started = time.time()
    phases: dict[str, float] = {}
    variants: list[dict[str, Any] | None] = [None, EXPRESS_PROFILE] if at_least_once else [None]
    standard_dir, *express_dirs = synth_local_variants(variants)
    phases["synth"] = round(time.time() - started, 1)
    # Redrive cells fail their jobs on purpose: their alerts go to the sink's file, not the console.
    with LocalCloud(
        state_dir or project.LOCAL_DIR / "chaos",
        time_scale=time_scale,
        alert_printer=alerts.discard,
        fresh=True,  # each run starts empty (the state of an earlier run is not replayed)
    ) as cloud:
        cloud.runtime.max_workers = max(cloud.runtime.max_workers, MAX_WORKERS_PER_FUNCTION)
        mark = time.time()
        stack = deploy(standard_dir, STACK_NAME, cloud.endpoint)
        express_stack = deploy(express_dirs[0], EXPRESS_STACK_NAME, cloud.endpoint) if express_dirs else None
        run = ChaosRun(
            cloud,
            stack,
            documents=documents,
            run_id=f"{time.strftime('%H%M%S')}{uuid.uuid4().hex[:4]}",
            job_timeout_seconds=max(120.0, 6000 * time_scale),
            job_folder=job_folder,
        )
        run.seed(run.base)
        phases["deploy"] = round(time.time() - mark, 1)
        mark = time.time()
        baseline_first = None
        if model is not None and model.kind != "labels":
            # keep the replies in the cloud's state (beside the samples too with --record)
            set_model(
                cloud.endpoint, model.model_copy(update={"record": True, "beside_samples": model.record})
            )
            baseline_first = run.run_baseline()
            set_model(cloud.endpoint, ModelChoice())  # the labels' mode: replays the recordings
        elif model is not None:
            set_model(cloud.endpoint, model)
        baseline, outcomes, once = _run_all(
            run, cells, express_stack, parallel, on_cell, baseline_done=baseline_first
        )
        phases["jobs"] = round(time.time() - mark, 1)
        real_calls = int(model_faults_of(cloud.endpoint)["stats"].get("forwarded", 0))
    counts = {status: sum(o.status == status for o in outcomes) for status in ("pass", "fail", "n/a")}
    passed = counts["fail"] == 0 and baseline.status == "pass" and (once is None or once["status"] == "pass")
    return {
        "passed": passed,
        "documents": documents,
        "definition": job_folder.name if job_folder is not None else None,
        "model": model.mode() if model is not None else "labels",
        "real_model_calls": real_calls,
        "document_index": run.document_index,
        "time_scale": time_scale,
        "parallel": parallel,
        "points": sorted({cell.point for cell in cells}, key=POINTS.index),
        "modes": sorted({cell.mode for cell in cells}, key=MODES.index),
        "recoveries": sorted({cell.recovery for cell in cells}, key=RECOVERIES.index),
        "counts": counts,
        "repeated_model_calls": sum(o.repeated_model_calls for o in outcomes),
        "baseline": baseline.as_json(),
        "cells": [outcome.as_json() for outcome in outcomes],
        "at_least_once": once,
        "ignored_result_fields": list(IGNORED_RESULT_FIELDS),
        "ignored_report_fields": list(IGNORED_REPORT_FIELDS),
        "seconds": round(time.time() - started, 1),
        "phase_seconds": phases,
    }


def _run_all(
    run: ChaosRun,
    cells: list[Cell],
    express_stack: LocalStack | None,
    parallel: int,
    on_cell: Callable[[CellOutcome], None] | None,
    *,
    baseline_done: CellOutcome | None = None,
) -> tuple[CellOutcome, list[CellOutcome], dict[str, Any] | None]:
    """The baseline (unless ``baseline_done``), the cells (in ``cells``' order; n/a ones decided, not run)
    and the at-least-once cell."""
    outcomes: dict[Cell, CellOutcome] = {}
    runnable: list[Cell] = []
    for cell in cells:
        reason = not_applicable(cell, run.definition)
        if reason is None or is_probe(cell):
            runnable.append(cell)
            continue
        outcomes[cell] = CellOutcome(cell.point, cell.mode, cell.recovery, status="n/a", reason=reason)
        if on_cell:
            on_cell(outcomes[cell])
    # The slowest cells first (a crash inside a durable step waits out its in-progress record on every
    # attempt), so the run does not end on one long cell.
    runnable.sort(key=expected_cost, reverse=True)

    def run_cell(slot: int, cell: Cell) -> CellOutcome:
        if slot < parallel and run.stopping.wait(slot * START_STAGGER_SECONDS):  # spread the cold starts
            raise KeyboardInterrupt
        begun = time.time()
        try:
            job, begun = run.start_cell(cell, slot)
            outcome = run.finish_cell(cell, job, begun)
        except Exception as error:  # a broken cell is a failed cell, not a crashed matrix
            outcome = CellOutcome(cell.point, cell.mode, cell.recovery, seconds=round(time.time() - begun, 1))
            outcome.checks = {"expected_path": f"the cell could not run: {type(error).__name__}: {error}"}
            outcome.settle()
        if on_cell:
            on_cell(outcome)
        return outcome

    with ThreadPoolExecutor(max_workers=parallel + (2 if express_stack else 1)) as pool:
        try:
            baseline_future = None if baseline_done is not None else pool.submit(run.run_baseline)
            express_future = pool.submit(run.run_at_least_once, express_stack) if express_stack else None
            futures = {cell: pool.submit(run_cell, slot, cell) for slot, cell in enumerate(runnable)}
            outcomes |= {cell: future.result() for cell, future in futures.items()}
            baseline = baseline_future.result() if baseline_future is not None else baseline_done
            assert baseline is not None  # run above, or before the cells
            once = express_future.result() if express_future else None
        except BaseException:  # Ctrl-C: stop waiting for jobs so the local cloud stops now
            run.stopping.set()
            pool.shutdown(wait=True, cancel_futures=True)
            raise
    return baseline, [outcomes[cell] for cell in cells], once
