"""``docagent experiment``: the same job under every checkpoint strategy, killed at each kill point,
recovered, and measured against the ground truth and the strategy's crash-free run (min and median over
the repeats)."""

from __future__ import annotations

import importlib.util
import shutil
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from docagent import project
from docagent.drills.demo_cloud import default_time_scale
from docagent.drills.experiment.cloud import CloudJobError, CloudSession
from docagent.drills.experiment.measures import Run, growth_rows, strategy_rows
from docagent.drills.experiment.processes import HAND_WRITTEN, PEER, WorkerError, WorkerStrategy, run_worker

CLOUD_STRATEGIES = ("per batch", "per document")
ALL_STRATEGIES = tuple(s.name for s in HAND_WRITTEN) + CLOUD_STRATEGIES + tuple(s.name for s in PEER)
LANGGRAPH_MISSING = "langgraph is not installed (pip install -e '.[experiment]', or `make experiment`)"

Results = dict[str, tuple[str, tuple[str, ...]]]


def langgraph_available() -> bool:
    return all(
        importlib.util.find_spec(name) is not None for name in ("langgraph", "langgraph.checkpoint.sqlite")
    )


def select_strategies(names: Sequence[str] | None) -> list[str]:
    """Strategies by name; ``langgraph`` selects every peer variant. Unknown names are refused."""
    if not names:
        return list(ALL_STRATEGIES)
    chosen: list[str] = []
    for name in names:
        matches = [
            s for s in ALL_STRATEGIES if s == name or (name == "langgraph" and s.startswith("langgraph"))
        ]
        if not matches:
            raise ValueError(
                f"unknown strategy {name!r}; choose from: {', '.join(ALL_STRATEGIES)}, langgraph"
            )
        chosen += [m for m in matches if m not in chosen]
    return [s for s in ALL_STRATEGIES if s in chosen]


def check_kill_points(documents: int, kill_points: Sequence[int]) -> None:
    if documents < 2:
        raise ValueError("--documents must be at least 2")
    bad = [k for k in kill_points if not 0 <= k <= documents]
    if bad:
        raise ValueError(
            f"--kill-at must be a document index from 0 to {documents - 1}, "
            f"or {documents} for after the ticket: {bad}"
        )


def run_experiment(
    *,
    documents: int = 200,
    kill_points: Sequence[int] = (138,),
    repeat: int = 3,
    strategies: Sequence[str] | None = None,
    growth: Sequence[int] = (),
    cloud_growth: bool = False,
    batch_size: int = 10,
    recovery: str = "redrive",
    time_scale: float | None = None,
    latency_ms: int = 0,
    previous: Sequence[Run] = (),
    work_dir: Path | None = None,
    on_run: Callable[[Run], None] | None = None,
) -> dict[str, Any]:
    check_kill_points(documents, kill_points)
    if repeat < 1:
        raise ValueError("--repeat must be at least 1")
    names = select_strategies(strategies) if strategies is not None or not previous else []
    skipped: dict[str, str] = {}
    if any(name.startswith("langgraph") for name in names) and not langgraph_available():
        skipped = {name: LANGGRAPH_MISSING for name in names if name.startswith("langgraph")}
        names = [name for name in names if name not in skipped]
    workers = {s.name: s for s in (*HAND_WRITTEN, *PEER) if s.name in names}
    cloud_names = [name for name in names if name in CLOUD_STRATEGIES]
    work_dir = work_dir or project.LOCAL_DIR / "experiment"
    shutil.rmtree(work_dir, ignore_errors=True)
    work_dir.mkdir(parents=True)
    started = time.time()
    # Runs measured earlier (``--merge``), except those of the strategies run now.
    runs: list[Run] = [run for run in previous if run.strategy not in names]
    counter = iter(range(1_000_000))

    def record(run: Run) -> None:
        runs.append(run)
        if on_run is not None:
            on_run(run)

    failures: list[dict[str, Any]] = []

    def worker_job(
        strategy: WorkerStrategy, size: int, kill_at: int | None, expected: Results | None
    ) -> Results:
        run_dir = work_dir / f"run-{next(counter):04d}"
        try:
            run, results = run_worker(strategy, run_dir, size, kill_at, expected, latency_ms=latency_ms)
        except WorkerError as error:  # kept (with its worker.log) and reported; the experiment goes on
            failures.append(
                {"name": strategy.name, "documents": size, "kill_at": kill_at, "error": str(error)}
            )
            return expected or {}
        shutil.rmtree(run_dir)  # measured; a LangGraph loop's store at 2,000 documents is ~600 MB
        record(run)
        return results

    def cloud_job(
        session: CloudSession, name: str, size: int, kill_at: int | None, expected: Results | None
    ) -> Results:
        try:
            run, results = session.run(name, size, kill_at, expected, recovery)
        except CloudJobError as error:
            failures.append({"name": name, "documents": size, "kill_at": kill_at, "error": str(error)})
            return expected or {}
        record(run)
        return results

    for _ in range(repeat):
        for strategy in workers.values():
            expected = worker_job(strategy, documents, None, None)
            for kill_at in kill_points:
                worker_job(strategy, documents, kill_at, expected)
    for size in growth:
        for strategy in workers.values():
            worker_job(strategy, size, None, None)
    if cloud_names:
        scale = default_time_scale(documents) if time_scale is None else time_scale
        with CloudSession(work_dir / "cloud", scale, batch_size, latency_ms) as session:
            for _ in range(repeat):
                for name in cloud_names:
                    expected = cloud_job(session, name, documents, None, None)
                    for kill_at in kill_points:
                        cloud_job(session, name, documents, kill_at, expected)
            for size in growth if cloud_growth else ():
                for name in cloud_names:
                    cloud_job(session, name, size, None, None)
    main = [run for run in runs if run.documents == documents]
    none_clean = [run.job_seconds for run in main if run.strategy == "none" and run.kill_at is None]
    baseline = float(statistics.median(none_clean)) if none_clean else 0.0
    rows = strategy_rows(main, baseline)
    order = {name: index for index, name in enumerate(ALL_STRATEGIES)}
    rows.sort(key=lambda row: (order[row["name"]], row["kill_at"]))
    return {
        "documents": documents,
        "kill_points": list(kill_points),
        "repeat": repeat,
        "batch_size": batch_size,
        "cloud_recovery": recovery,
        "model_latency_ms": latency_ms,
        "growth_documents": list(growth),
        "cloud_growth": cloud_growth,
        "baseline_none_seconds": round(baseline, 4),
        "strategies": rows,
        "storage_growth": growth_rows(runs),
        "skipped": skipped,
        "failures": failures,
        "runs": [run.model_dump() for run in runs],
        "wall_seconds": round(time.time() - started, 1),
    }
