"""`docagent bench --profile`: CPU by thread, by request type and by worker function (docs/performance.md)."""

from __future__ import annotations

import cProfile
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from docagent.drills.profiling import (
    PROFILE_DIR_ENV,
    ThreadProfiles,
    thread_kind,
    top_cumulative,
    total_seconds,
    worker_profiles,
)
from docagent.localcloud.request_counts import RequestCounter

ENVIRONMENT = Path(__file__).parents[2] / "docagent/localcloud/lambdas/environment.py"


def burn_cpu(seconds: float) -> None:
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def test_threads_are_grouped_by_what_they_run():
    assert thread_kind("Thread-12 (process_request_thread)") == "process_request_thread"
    assert thread_kind("upload_3") == thread_kind("upload_0") == "upload"
    assert thread_kind("ThreadPoolExecutor-2_0") == "ThreadPoolExecutor"
    assert thread_kind("MainThread") == "MainThread"


def test_each_thread_s_cpu_is_profiled_and_a_waiting_thread_counts_none():
    profiles = ThreadProfiles()
    profiles.start()
    try:
        busy = threading.Thread(target=burn_cpu, args=(0.3,), name="busy")
        idle = threading.Thread(target=time.sleep, args=(0.3,), name="idle")
        for thread in (busy, idle):
            thread.start()
        for thread in (busy, idle):
            thread.join()
    finally:
        by_kind = profiles.stop()
    assert total_seconds(by_kind["busy"]) >= 0.25
    assert total_seconds(by_kind["idle"]) < 0.05  # a thread_time clock: sleeping is not CPU
    assert any("burn_cpu" in where for where, _ in top_cumulative(by_kind["busy"], 5))
    after = threading.Thread(target=burn_cpu, args=(0.01,), name="after")
    after.start()
    after.join()
    assert "after" not in profiles.stop()  # threads started after the stop are not profiled


def test_the_request_counter_adds_each_request_s_serving_cpu_not_its_wait():
    counter = RequestCounter()

    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        (burn_cpu if environ["REQUEST_METHOD"] == "PUT" else time.sleep)(0.2)
        start_response("200 OK", [("Content-Length", "0")])
        return []

    counted = counter.wrap(app)
    for method in ("PUT", "GET"):
        environ = {
            "REQUEST_METHOD": method,
            "PATH_INFO": "/bucket/key",
            "HTTP_AUTHORIZATION": "AWS4-HMAC-SHA256 Credential=x/20261207/us-east-1/s3/aws4_request",
        }
        counted(environ, lambda *_: None)
    cpu = counter.cpu_seconds()
    assert cpu["s3:PutObject"] >= 0.15
    assert cpu["s3:GetObject"] < 0.05
    counter.reset()
    assert counter.cpu_seconds() == {}


def test_worker_profiles_merge_by_function_whose_name_has_dashes(tmp_path: Path) -> None:
    for pid in (11, 12):
        profile = cProfile.Profile()
        profile.runcall(burn_cpu, 0.01)
        profile.dump_stats(str(tmp_path / f"worker-DocAgent-Functions-ProcessDocument-{pid}.prof"))
    merged = worker_profiles(tmp_path)
    assert list(merged) == ["DocAgent-Functions-ProcessDocument"]
    calls = [
        entry[1]
        for key, entry in merged["DocAgent-Functions-ProcessDocument"].stats.items()  # type: ignore[attr-defined]
        if key[2] == "burn_cpu"
    ]
    assert calls == [2]


def test_a_worker_writes_its_invocations_profile_when_asked(tmp_path: Path) -> None:
    code = tmp_path / "code"
    code.mkdir()
    (code / "app.py").write_text(
        "def spin(n):\n    return sum(range(n))\n\n"
        "def handler(event, context):\n    return spin(event['n'])\n"
    )
    request_read, request_write = os.pipe()
    response_read, response_write = os.pipe()
    environment = {
        "PATH": os.environ.get("PATH", ""),
        "LAMBDA_CODE_ROOT": str(code),
        "_HANDLER": "app.handler",
        "AWS_LAMBDA_FUNCTION_NAME": "Spin-Fn",
        "DOCAGENT_REQUEST_FD": str(request_read),
        "DOCAGENT_RESPONSE_FD": str(response_write),
        PROFILE_DIR_ENV: str(tmp_path),
    }
    worker = subprocess.Popen(
        [sys.executable, str(ENVIRONMENT)], env=environment, pass_fds=(request_read, response_write)
    )
    os.close(request_read)
    os.close(response_write)
    with os.fdopen(request_write, "w") as requests, os.fdopen(response_read) as responses:
        assert json.loads(responses.readline()) == {"ready": True}
        request = {
            "request_id": "r1",
            "function_arn": "arn",
            "deadline": time.time() + 30,
            "event": {"n": 1000},
        }
        requests.write(json.dumps(request) + "\n")
        requests.flush()
        assert json.loads(responses.readline())["result"] == sum(range(1000))
    assert worker.wait(timeout=30) == 0
    profiled = worker_profiles(tmp_path)
    assert list(profiled) == ["Spin-Fn"]
    assert [where for where, _ in top_cumulative(profiled["Spin-Fn"], 10, only=str(code))] == [
        f"{code}/app.py:4(handler)",
        f"{code}/app.py:1(spin)",
    ]
