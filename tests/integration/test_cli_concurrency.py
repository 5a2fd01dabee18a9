"""The operator CLI tried as a new user would, on the local cloud: three concurrent `start`s (or
`redrive`s) of one job start (redrive) it once and only that command says so; `status` and `inspect`
count a failed job's documents alike."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from docagent import project
from docagent.cli import main
from docagent.localcloud.server import LocalCloud

FAULT = {"point": "before_store_result", "document_index": 1, "mode": "exit", "until_redrive": 1}


class ThreadStdout:
    """sys.stdout for threads that each print one JSON answer: every thread's writes apart."""

    def __init__(self) -> None:
        self.written: dict[int, list[str]] = {}
        self.lock = threading.Lock()

    def write(self, text: str) -> int:
        with self.lock:
            self.written.setdefault(threading.get_ident(), []).append(text)
        return len(text)

    def flush(self) -> None:
        pass


@pytest.fixture
def concurrently(
    cloud: LocalCloud, stack_file, monkeypatch
) -> Callable[..., list[tuple[int, dict[str, Any]]]]:
    """run(n, *args): `docagent ARGS --endpoint <cloud> --json` in n threads at once; (exit code, JSON)
    of each."""
    monkeypatch.setattr(project, "LOCAL_STACK_FILE", stack_file)

    def run(count: int, *arguments: str) -> list[tuple[int, dict[str, Any]]]:
        out = ThreadStdout()
        answers: list[tuple[int, int]] = []
        barrier = threading.Barrier(count)

        def one() -> None:
            barrier.wait()
            code = main([*arguments, "--endpoint", cloud.endpoint, "--json"])
            answers.append((threading.get_ident(), code))

        previous, sys.stdout = sys.stdout, out  # type: ignore[assignment]
        try:
            threads = [threading.Thread(target=one) for _ in range(count)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=300)
        finally:
            sys.stdout = previous
        return [(code, json.loads("".join(out.written[ident]))) for ident, code in answers]

    return run


def wait_until_closed(docagent, job_id: str, timeout: float = 240) -> dict[str, Any]:
    deadline = time.time() + timeout
    while True:
        _, status = docagent("status", job_id)
        if status["status"] != "RUNNING" or time.time() > deadline:
            return status
        time.sleep(0.3)


def test_three_concurrent_starts_start_once_and_only_one_says_started(concurrently, docagent, documents_dir):
    folder = documents_dir(3)
    answers = concurrently(
        3, "start", "--job-id", "cli-race", "--from-dir", str(folder), "--fault", json.dumps(FAULT)
    )
    assert [code for code, _ in answers] == [0, 0, 0], answers
    assert sorted(answer["started"] for _, answer in answers) == [False, False, True]
    assert len({answer["execution_arn"] for _, answer in answers}) == 1
    _, listed = docagent("list")
    assert [job["job_id"] for job in listed["jobs"]].count("cli-race") == 1

    # The fault fails the job once; three concurrent redrives redrive it once.
    assert wait_until_closed(docagent, "cli-race")["status"] == "FAILED"
    answers = concurrently(3, "redrive", "cli-race")
    assert [code for code, _ in answers] == [0, 0, 0], answers
    assert sorted(answer["redriven"] for _, answer in answers) == [False, False, True]
    assert sorted(answer["already_redriven"] for _, answer in answers) == [False, True, True]
    final = wait_until_closed(docagent, "cli-race")
    assert final["status"] == "SUCCEEDED" and final["redrive_count"] == 1
