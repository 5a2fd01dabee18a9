"""Runs the worker-process strategies (none, at exit, async, and the LangGraph peer): starts the worker,
SIGKILLs it when it reports the kill point, starts it again the way the strategy recovers, and measures the
outcome from the worker's instruments and checkpoint store."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from docagent import project
from docagent.drills.experiment.measures import Run, comparable, repeats_of
from docagent.drills.experiment.workload import CALLS_LOG, REPORT_FILE, TICKETS_LOG, heard

WORKER_TIMEOUT_SECONDS = 1800.0


class WorkerError(RuntimeError):
    """A worker ended without the line the experiment waited for."""


@dataclass(frozen=True)
class WorkerStrategy:
    """A strategy run by a worker process: ``name`` in the table, its command, its checkpoint file."""

    name: str
    module: str
    arguments: tuple[str, ...]
    checkpoint_file: str | None
    resume_flag: str | None = None
    recovery: str = "restart"

    def command(
        self, run_dir: Path, documents: int, kill_at: int | None, resume: bool, latency_ms: int = 0
    ) -> list[str]:
        command = [
            sys.executable,
            "-m",
            self.module,
            *self.arguments,
            str(run_dir),
            "--documents",
            str(documents),
        ]
        if kill_at is not None:
            command += ["--kill-at", str(kill_at)]
        if latency_ms:
            command += ["--latency-ms", str(latency_ms)]
        if resume and self.resume_flag:
            command.append(self.resume_flag)
        return command


WORKER_MODULE = "docagent.drills.experiment.worker"
PEER_MODULE = "docagent.drills.experiment.peer"
HAND_WRITTEN = (
    WorkerStrategy("none", WORKER_MODULE, ("none",), None, recovery="restart from document 0"),
    WorkerStrategy(
        "at exit", WORKER_MODULE, ("exit",), "checkpoints.sqlite", recovery="restart, skip stored"
    ),
    WorkerStrategy("async", WORKER_MODULE, ("async",), "checkpoints.sqlite", recovery="restart, skip stored"),
)
PEER = tuple(
    WorkerStrategy(
        f"langgraph {shape} {durability}",
        PEER_MODULE,
        (shape, durability),
        "langgraph.sqlite",
        resume_flag="--resume",
        recovery="invoke(None, same thread_id)",
    )
    for shape in ("loop", "fanout")
    for durability in ("exit", "async", "sync")
)


class _Worker:
    """A running worker and the lines it writes to its stdout."""

    def __init__(self, command: list[str], run_dir: Path) -> None:
        self.log = (run_dir / "worker.log").open("ab")
        self.process = subprocess.Popen(
            command, cwd=project.ROOT, stdout=subprocess.PIPE, stderr=self.log, start_new_session=True
        )
        assert self.process.stdout is not None
        self.stdout: IO[bytes] = self.process.stdout
        self.lines: list[str] = []

    def until(self, *prefixes: str) -> tuple[str, float]:
        """The first line starting with one of ``prefixes``, and when the worker wrote it (its stamp)."""
        deadline = time.monotonic() + WORKER_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            raw = self.stdout.readline()
            if not raw:
                code = self.process.wait()
                raise WorkerError(f"worker exited ({code}) before {'/'.join(prefixes)}; see worker.log")
            line, when = heard(raw.decode().strip())
            self.lines.append(line)
            if line.startswith(prefixes):
                return line, when
        self.kill()
        raise WorkerError(f"worker did not reach {'/'.join(prefixes)} in {WORKER_TIMEOUT_SECONDS:.0f} s")

    def kill(self) -> None:
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def close(self) -> None:
        self.kill()
        self.stdout.close()
        self.log.close()


def _storage(run_dir: Path, checkpoint_file: str | None) -> tuple[int, int]:
    """Bytes of the checkpoint store (with its journal and WAL files) and the records it holds."""
    if checkpoint_file is None:
        return 0, 0
    path = run_dir / checkpoint_file
    size = sum(p.stat().st_size for p in run_dir.glob(f"{checkpoint_file}*"))
    with sqlite3.connect(path) as connection:
        tables = [row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        records = sum(int(connection.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0]) for t in tables)
    connection.close()
    return size, records


def run_worker(
    strategy: WorkerStrategy,
    run_dir: Path,
    documents: int,
    kill_at: int | None,
    expected: dict[str, tuple[str, tuple[str, ...]]] | None,
    *,
    latency_ms: int = 0,
) -> tuple[Run, dict[str, tuple[str, tuple[str, ...]]]]:
    """One job, killed at ``kill_at`` (a document index, or ``documents`` for after the ticket) and recovered.

    Returns the run and its results for comparison; ``expected`` is the crash-free run's (None: this is it).
    """
    run_dir.mkdir(parents=True, exist_ok=False)
    worker = _Worker(
        strategy.command(run_dir, documents, kill_at, resume=False, latency_ms=latency_ms), run_dir
    )
    try:
        _, started = worker.until("start")
        recovery_first = recovery = None
        how = ""
        if kill_at is None:
            _, ended = worker.until("end")
        else:
            worker.until("stopped")
            killed = time.monotonic()
            worker.kill()
            worker.close()
            worker = _Worker(
                strategy.command(run_dir, documents, None, resume=True, latency_ms=latency_ms), run_dir
            )
            how, _ = worker.until("start", "resume", "restart")
            _, first = worker.until("call", "end")
            _, ended = worker.until("end") if not worker.lines[-1].startswith("end") else ("", first)
            recovery_first, recovery = round(first - killed, 6), round(ended - killed, 6)
        worker.process.wait()
    finally:
        worker.close()
    report = json.loads((run_dir / REPORT_FILE).read_text())["results"]
    results = comparable(report)
    calls, repeated, repeated_documents = repeats_of((run_dir / CALLS_LOG).read_text().split())
    tickets = len((run_dir / TICKETS_LOG).read_text().splitlines())
    storage_bytes, records = _storage(run_dir, strategy.checkpoint_file)
    run = Run(
        strategy=strategy.name,
        documents=documents,
        kill_at=kill_at,
        job_seconds=round(ended - started, 6),
        recovery_first_progress_seconds=recovery_first,
        recovery_seconds=recovery,
        recovery=strategy.recovery
        + (": nothing to resume, restarted" if kill_at is not None and how == "restart" else ""),
        model_calls=calls,
        repeated_model_calls=repeated,
        repeated_documents=repeated_documents,
        tickets=tickets,
        results=len(results),
        correct=results == (expected if expected is not None else results),
        storage_bytes=storage_bytes,
        checkpoint_records=records,
    )
    return run, results
