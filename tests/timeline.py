"""An opt-in pytest plugin that writes when each test ran, on which worker, and the CPU it took (the process's
and its waited-for children's, so a subprocess's demo counts): the measurement behind docs/performance.md,
"The test suite". Use: `DOCAGENT_TEST_TIMELINE=DIR pytest -p tests.timeline -n 2 ...`; one JSON-lines file a
worker in DIR (a run writes its workers' files anew), then `python -m tests.timeline DIR` prints each worker's
span and the costliest files."""

from __future__ import annotations

import collections
import json
import os
import resource
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

_OUT: list[IO[str]] = []


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _machine_cpu() -> float:
    """The whole machine's busy CPU seconds (/proc/stat): in a run of one worker (-n 0) a test's delta is
    all it cost, its servers and their workers included, whoever their parent is; on other systems, 0."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return 0.0
    user, nice, system, _idle, _iowait, irq, softirq = (int(field) for field in fields[:7])
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def _write(record: dict[str, Any]) -> None:
    if _OUT:
        _OUT[0].write(json.dumps(record) + "\n")
        _OUT[0].flush()


def pytest_sessionstart(session: pytest.Session) -> None:
    folder = os.environ.get("DOCAGENT_TEST_TIMELINE")
    if folder:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        Path(folder).mkdir(parents=True, exist_ok=True)
        _OUT.append((Path(folder) / f"{worker}.jsonl").open("w"))
    _write({"event": "start", "at": time.time(), "cpu": _cpu()})


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    started, cpu, machine = time.time(), _cpu(), _machine_cpu()
    yield
    _write(
        {
            "event": "test",
            "id": item.nodeid,
            "start": started,
            "end": time.time(),
            "cpu": _cpu() - cpu,
            "machine_cpu": _machine_cpu() - machine,
        }
    )


def pytest_sessionfinish(session: pytest.Session) -> None:
    _write({"event": "end", "at": time.time(), "cpu": _cpu()})


def report(folder: Path, top: int = 25) -> None:
    by_file: collections.Counter[str] = collections.Counter()
    machine_by_file: collections.Counter[str] = collections.Counter()
    for path in sorted(folder.glob("*.jsonl")):
        records = [json.loads(line) for line in path.read_text().splitlines()]
        tests = [r for r in records if r["event"] == "test"]
        if not tests:
            continue
        start = next(r for r in records if r["event"] == "start")
        end = next(r for r in records if r["event"] == "end")
        span = end["at"] - start["at"]
        print(f"{path.stem}: {len(tests)} tests, ended at {span:.1f} s, CPU {end['cpu']:.1f} s")
        for test in tests:
            file = test["id"].split("::")[0]
            by_file[file] += test["cpu"]
            machine_by_file[file] += test.get("machine_cpu", 0.0)  # files written before it was recorded
    for name, cpu in by_file.most_common(top):
        print(f"{cpu:8.1f} s CPU  {machine_by_file[name]:8.1f} s machine  {name}")


if __name__ == "__main__":
    report(Path(sys.argv[1]))
