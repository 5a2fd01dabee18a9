"""``docagent bench --profile DIR``: where each CPU second of a local job goes (docs/performance.md).

Two kinds of process spend a local job's CPU: the one that runs the local cloud (its endpoint's serving
threads, the Step Functions interpreter's execution threads, the journal, the demo's own main thread) and the
Lambda workers. Each is profiled with the standard library's cProfile on a CPU clock (``time.thread_time``),
so a thread waiting for a worker, a lock or the disk counts nothing:

- the cloud's process: one profiler per thread, started by a ``threading.setprofile`` hook as each thread
  starts; the threads are grouped by what they run (the target in the thread's name:
  ``process_request_thread`` serves requests, an execution's thread runs its states);
- each worker (``DOCAGENT_PROFILE_DIR`` set: docagent/localcloud/lambdas/environment.py) profiles its
  invocations and writes ``worker-<function>-<pid>.prof`` after each.

The endpoint's CPU by request type (S3 GetObject, DynamoDB PutItem, Lambda Invoke, Bedrock ...) is counted
without a profiler too, by the request counter (``usage.endpoint_cpu_seconds``: each request's serving
thread's CPU while it served it). A deterministic profiler charges each call it sees: code that makes many
small calls looks dearer than it is (a character loop in functions/evidence/grounding.py was a quarter of the
ProcessDocument workers' profile, about 2 % of their CPU when removed). Calls into C (``builtins``) are
therefore not profiled, their time is their caller's; still, the shares point where to look, and only
``docagent demo --json``'s ``cpu_seconds`` before and after, alternated, says what a change saved.
"""

from __future__ import annotations

import cProfile
import os
import pstats
import re
import sys
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

PROFILE_DIR_ENV = "DOCAGENT_PROFILE_DIR"

_THREAD_TARGET = re.compile(r"\((.+)\)$")
_POOL_NUMBER = re.compile(r"[-_]\d+(_\d+)?$")


def thread_kind(name: str) -> str:
    """What a thread runs, from its name (``Thread-12 (process_request_thread)``: the target in brackets)."""
    match = _THREAD_TARGET.search(name)
    # a pool's threads are one kind: upload_3, ThreadPoolExecutor-2_0
    return match.group(1) if match else _POOL_NUMBER.sub("", name)


class _Snapshot:
    """A running profiler's figures so far, in the form ``pstats.Stats`` loads (without disabling it: its
    thread may still run)."""

    def __init__(self, profile: cProfile.Profile) -> None:
        profile.snapshot_stats()
        self.stats = profile.stats

    def create_stats(self) -> None:
        """Already made (``pstats.Stats`` calls it)."""


@dataclass
class ThreadProfiles:
    """A CPU profile of every thread of this process that starts between ``start`` and ``stop``, and of the
    thread that calls ``start``."""

    _profiles: list[tuple[str, cProfile.Profile]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _profile_this_thread(self) -> None:
        profile = cProfile.Profile(time.thread_time, builtins=False)  # see the module's note
        with self._lock:
            self._profiles.append((thread_kind(threading.current_thread().name), profile))
        profile.enable()

    def _first_event(self, frame: FrameType, event: str, arg: Any) -> None:
        sys.setprofile(None)
        self._profile_this_thread()

    def start(self) -> None:
        threading.setprofile(self._first_event)
        self._profile_this_thread()

    def stop(self) -> dict[str, pstats.Stats]:
        """Stops profiling new threads and this one; the profiles so far, merged by thread kind."""
        threading.setprofile(None)
        with self._lock:
            profiles = list(self._profiles)
        by_kind: dict[str, pstats.Stats] = {}
        for kind, profile in profiles:
            stats = pstats.Stats(_Snapshot(profile))  # type: ignore[arg-type]
            if kind in by_kind:
                by_kind[kind].add(stats)
            else:
                by_kind[kind] = stats
        sys.setprofile(None)
        return by_kind


def total_seconds(stats: pstats.Stats) -> float:
    """The CPU seconds a profile holds: every function's own time, summed."""
    return float(sum(entry[2] for entry in stats.stats.values()))  # type: ignore[attr-defined]


def _where(key: tuple[str, int, str]) -> str:
    path, line, name = key
    for marker in ("site-packages/", "/docagent/", "/functions/", "/lib/python3"):
        if marker in path:
            path = path.split(marker, 1)[1]
            path = {"/docagent/": "docagent/", "/functions/": "functions/"}.get(marker, "") + path
            break
    return f"{path}:{line}({name})" if line else name


def top_cumulative(stats: pstats.Stats, limit: int, only: str | None = None) -> list[tuple[str, float]]:
    """The functions with the most CPU spent in them and what they called, largest first; ``only``: those
    whose file path holds it (``/functions/``: the pipeline's own code)."""
    entries = stats.stats.items()  # type: ignore[attr-defined]
    chosen = [(key, entry[3]) for key, entry in entries if only is None or only in key[0]]
    chosen.sort(key=lambda item: item[1], reverse=True)
    return [(_where(key), round(float(seconds), 3)) for key, seconds in chosen[:limit]]


def worker_profiles(directory: Path) -> dict[str, pstats.Stats]:
    """The workers' profiles in ``directory``, merged by Lambda function."""
    by_function: defaultdict[str, list[str]] = defaultdict(list)
    for path in sorted(directory.glob("worker-*.prof")):
        function = path.stem.removeprefix("worker-").rsplit("-", 1)[0]
        by_function[function].append(str(path))
    return {function: pstats.Stats(*paths) for function, paths in by_function.items()}


def profile_figures(
    threads: dict[str, pstats.Stats], directory: Path, usage: dict[str, Any], documents: int, limit: int = 12
) -> dict[str, Any]:
    """The profile as figures (also written to ``directory``: ``cloud-<thread kind>.prof`` and the workers'
    ``worker-*.prof``, for ``python -m pstats``)."""
    for kind, stats in threads.items():
        stats.dump_stats(str(directory / f"cloud-{re.sub(r'[^A-Za-z0-9_.-]', '_', kind)}.prof"))
    workers = worker_profiles(directory)
    by_request = usage.get("endpoint_cpu_seconds", {})
    tenth = sum(total_seconds(stats) for stats in threads.values()) / 10
    return {
        "documents": documents,
        "directory": str(directory),
        "cloud_process_by_thread": {
            kind: round(total_seconds(stats), 3)
            for kind, stats in sorted(threads.items(), key=lambda item: -total_seconds(item[1]))
        },
        "endpoint_by_request": dict(sorted(by_request.items(), key=lambda item: -float(item[1]))),
        "cloud_process_top": {  # the kinds of thread that spent a tenth or more of the process's CPU
            kind: top_cumulative(stats, limit)
            for kind, stats in threads.items()
            if total_seconds(stats) >= tenth
        },
        "workers_by_function": {
            function: round(total_seconds(stats), 3) for function, stats in workers.items()
        },
        "workers_by_step": {
            function: top_cumulative(stats, limit, only="/functions/") for function, stats in workers.items()
        },
    }


def enable_worker_profiles(directory: Path) -> None:
    """Makes the Lambda workers of local clouds started from now on in this process profile their
    invocations into ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    for stale in directory.glob("*.prof"):
        stale.unlink()
    os.environ[PROFILE_DIR_ENV] = str(directory.resolve())
