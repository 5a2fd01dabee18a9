"""Workers forked from the runtime's fork server behave as the fresh interpreters they replace
(docagent/localcloud/lambdas/forking.py): the function's environment only, nothing carried between workers,
exit codes and signals reported as before, killed by pid from outside, nothing left running after a stop."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from docagent.localcloud.lambdas.forking import FORK_SWITCH, ForkedProcess, Launcher
from docagent.localcloud.lambdas.runtime import FunctionSpec, Worker

HANDLER = """
import os, sys, time
import botocore

IMPORTED_BY = os.getpid()  # the process that imported this module: a worker, or its function's template
AT_IMPORT = os.environ.get("ONLY_A")
REMEMBERED = []

def handler(event, context):
    if event.get("mark"):
        botocore.docagent_mark = event["mark"]  # state left on a preloaded module
    if event.get("remember"):
        REMEMBERED.append(event["remember"])  # state left on the handler's own module
    if event.get("exit") is not None:
        os._exit(event["exit"])
    if event.get("sleep"):
        time.sleep(event["sleep"])
    print("log line of", os.environ["AWS_LAMBDA_FUNCTION_NAME"])
    return {
        "pid": os.getpid(),
        "sid": os.getsid(0),
        "cwd": os.getcwd(),
        "argv": sys.argv,
        "only_a": os.environ.get("ONLY_A"),
        "mark": getattr(botocore, "docagent_mark", None),
        "app": __file__,
        "imported_by": IMPORTED_BY,
        "at_import": AT_IMPORT,
        "remembered": REMEMBERED,
    }
"""
BASE_ENV = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/root"), "LANG": "C.UTF-8"}


def spec(name: str, environment: dict[str, str] | None = None) -> FunctionSpec:
    return FunctionSpec(
        name, f"arn:{name}", "app.handler", 10, 128, environment or {}, "sha", f"/aws/lambda/{name}"
    )


def code_root(tmp_path: Path, name: str, extra: dict[str, str] | None = None) -> Path:
    root = tmp_path / name
    for relative, text in {"app.py": HANDLER, **(extra or {})}.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    return root


def alive(pid: int) -> bool:
    """Whether ``pid`` is a process that has not ended (a zombie has ended)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][0] != "Z"
    except FileNotFoundError:
        return False


class Runtime:
    """A launcher and the workers it started, with their log lines."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.launcher = Launcher(enabled=True)
        self.workers: list[Worker] = []
        self.logs: list[str] = []

    def worker(
        self, name: str, environment: dict[str, str] | None = None, root: Path | None = None
    ) -> Worker:
        root = root or code_root(self.tmp_path, name)
        worker = Worker(
            spec(name, environment), root, BASE_ENV, lambda *line: self.logs.append(line[2]), self.launcher
        )
        self.workers.append(worker)
        return worker

    def stop(self) -> None:
        for worker in self.workers:
            worker.close()
        self.launcher.stop()


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[Runtime]:
    started = Runtime(tmp_path)
    try:
        yield started
    finally:
        started.stop()


def invoke(worker: Worker, event: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    outcome = worker.invoke(event, f"request-{time.monotonic_ns()}", 1.0)
    return outcome.function_error, json.loads(outcome.payload)


def test_a_forked_worker_has_its_own_session_folder_environment_and_log(runtime: Runtime, tmp_path: Path):
    worker = runtime.worker("a", {"ONLY_A": "yes"})
    error, payload = invoke(worker, {})
    assert error is None, payload
    assert isinstance(worker.process, ForkedProcess), runtime.launcher.why_not
    assert payload["pid"] == worker.pid == payload["sid"], "a session of its own, as start_new_session gives"
    assert payload["cwd"] == str(tmp_path / "a") and payload["app"] == str(tmp_path / "a" / "app.py")
    assert payload["argv"] == [str(Path(__file__).parents[2] / "docagent/localcloud/lambdas/environment.py")]
    assert payload["only_a"] == "yes"
    deadline = time.monotonic() + 10
    while "log line of a" not in runtime.logs and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "log line of a" in runtime.logs, "the handler's stdout is the function's log"


def test_one_functions_variables_and_module_state_do_not_reach_another(runtime: Runtime):
    first = runtime.worker("a", {"ONLY_A": "yes"})
    _, from_a = invoke(first, {"mark": "set by a"})
    assert from_a["only_a"] == "yes" and from_a["mark"] == "set by a"
    _, again = invoke(first, {})
    assert again["mark"] == "set by a", "a warm worker keeps its own module state"
    error, from_b = invoke(runtime.worker("b"), {})
    assert error is None, from_b
    assert from_b["only_a"] is None, "a variable of function a is not in function b's environment"
    assert from_b["mark"] is None, "a preloaded module carries no state from one worker to another"
    assert runtime.launcher.forked == 2 and runtime.launcher.started == 0


def test_exit_statuses_and_signals_are_reported_as_before(runtime: Runtime):
    error, payload = invoke(runtime.worker("exits"), {"exit": 3})
    assert error == "Unhandled" and payload["errorType"] == "Runtime.ExitError"
    assert payload["errorMessage"].endswith("Runtime exited with error: exit status 3")
    worker = runtime.worker("terminated")
    invoke(worker, {})  # ready and idle
    os.kill(worker.pid, signal.SIGTERM)
    assert worker.process.wait(timeout=10) == -signal.SIGTERM
    assert runtime.launcher.forked == 2


def test_a_worker_killed_by_pid_mid_invocation_is_runtime_exit_error(runtime: Runtime):
    worker = runtime.worker("killed")
    invoke(worker, {})
    killer = subprocess.Popen(["sh", "-c", f"sleep 1; kill -9 {worker.pid}"])
    error, payload = invoke(worker, {"sleep": 8})
    killer.wait()
    assert error == "Unhandled" and payload["errorType"] == "Runtime.ExitError"
    assert payload["errorMessage"].endswith("Runtime exited with error: signal: killed")
    assert not worker.alive() and not alive(worker.pid)


def test_an_idle_worker_killed_from_outside_is_seen_dead_at_once(runtime: Runtime):
    worker = runtime.worker("idle")
    invoke(worker, {})
    os.kill(worker.pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while worker.alive() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert worker.process.returncode == -signal.SIGKILL


def test_a_stop_leaves_no_process_behind(tmp_path: Path):
    runtime = Runtime(tmp_path)
    workers = [runtime.worker(name) for name in ("one", "two")]
    for worker in workers:
        invoke(worker, {})
    assert runtime.launcher.server is not None
    server = runtime.launcher.server.process.pid
    templates = [template.process.pid for template in runtime.launcher.templates.values()]
    assert len(templates) == 2
    pids = [server, *templates, *(worker.pid for worker in workers)]
    assert all(alive(pid) for pid in pids)
    runtime.stop()
    assert [pid for pid in pids if alive(pid)] == []


def test_a_functions_workers_fork_from_its_template_with_the_handler_imported_once(runtime: Runtime):
    first, second = runtime.worker("a", {"ONLY_A": "yes"}), runtime.worker("a", {"ONLY_A": "yes"})
    _, one = invoke(first, {"remember": "only in the first worker"})
    _, two = invoke(second, {})
    assert one["imported_by"] == two["imported_by"] not in {one["pid"], two["pid"]}, "imported once, before"
    assert one["at_import"] == two["at_import"] == "yes", "imported with the function's environment"
    assert one["remembered"] == ["only in the first worker"] and two["remembered"] == []
    assert one["app"] == two["app"] == str(runtime.tmp_path / "a" / "app.py")
    assert (runtime.launcher.forked, runtime.launcher.from_template, runtime.launcher.started) == (2, 2, 0)


def test_a_function_whose_environment_changed_gets_a_new_template(runtime: Runtime):
    _, before = invoke(runtime.worker("a", {"ONLY_A": "before"}), {})
    _, after = invoke(runtime.worker("a", {"ONLY_A": "after"}), {})
    assert (before["at_import"], after["at_import"]) == ("before", "after")
    assert before["imported_by"] != after["imported_by"]
    assert runtime.launcher.from_template == 2


def test_a_handler_whose_import_reads_the_log_stream_imports_it_in_each_worker(
    runtime: Runtime, tmp_path: Path
):
    # The log stream is each worker's own: a template's import would have read the first worker's.
    reads_stream = 'import os\nSTREAM = os.environ["AWS_LAMBDA_LOG_STREAM_NAME"]\n'
    reads_stream += "def handler(event, context):\n    return {'stream': STREAM}\n"
    root = code_root(tmp_path, "streams", {"app.py": reads_stream})
    workers = [runtime.worker("streams", root=root) for _ in range(2)]
    streams = [invoke(worker, {})[1]["stream"] for worker in workers]
    assert streams == [worker.log_stream for worker in workers]
    assert (runtime.launcher.forked, runtime.launcher.from_template) == (2, 1)


def test_a_handler_that_fails_to_import_fails_each_invocation_as_before(runtime: Runtime, tmp_path: Path):
    root = code_root(tmp_path, "broken", {"app.py": "raise RuntimeError('broken at import')\n"})
    error, payload = invoke(runtime.worker("broken", root=root), {})
    assert error == "Unhandled" and payload["errorType"] == "Runtime.ImportModuleError"
    assert payload["errorMessage"] == "broken at import"
    assert (runtime.launcher.forked, runtime.launcher.from_template) == (1, 0), "forked by the server"


def test_when_the_server_dies_its_workers_die_and_new_ones_start_the_old_way(runtime: Runtime):
    forked = runtime.worker("before")
    invoke(forked, {})
    assert runtime.launcher.server is not None
    os.kill(runtime.launcher.server.process.pid, signal.SIGKILL)
    assert forked.process.wait(timeout=10) == -signal.SIGKILL, "no worker outlives its server"
    error, payload = invoke(runtime.worker("after"), {})
    assert error is None, payload
    assert (runtime.launcher.forked, runtime.launcher.started) == (1, 1)


DIFFERENCES = [
    ({"POWERTOOLS_DEBUG": "1"}, {}, "POWERTOOLS_DEBUG read at import"),  # Powertools reads it at import
    ({"PYTHONPATH": "/nowhere"}, {}, "PYTHONPATH read by the interpreter"),
    ({}, {"boto3/__init__.py": ""}, "boto3 in the code root shadows a preloaded module"),
]


def test_a_worker_that_a_fork_would_change_starts_the_old_way(runtime: Runtime, tmp_path: Path):
    """Each difference on one server (a server of its own each, three, until 2026-12-07)."""
    invoke(runtime.worker("plain"), {})  # the server starts with the first worker's environment
    for number, (environment, extra, reason) in enumerate(DIFFERENCES):
        name = f"different-{number}"
        worker = runtime.worker(name, environment, code_root(tmp_path, name, extra))
        error, payload = invoke(worker, {})
        assert error is None, (reason, payload)
        assert isinstance(worker.process, subprocess.Popen), reason
        assert reason in runtime.launcher.why_not, (reason, runtime.launcher.why_not)


def test_the_server_preloads_no_code_of_the_project(runtime: Runtime):
    invoke(runtime.worker("plain"), {})
    assert runtime.launcher.server is not None
    modules = runtime.launcher.server.modules
    assert {"boto3", "botocore", "pydantic", "aws_lambda_powertools"} <= modules
    assert not {"functions", "docagent", "stacks", "app"} & modules


XRAY_HANDLER = """
import sys
PRELOADED = "aws_xray_sdk.core" in sys.modules
import aws_xray_sdk.core

def handler(event, context):
    return {"preloaded": PRELOADED, "recorder": type(aws_xray_sdk.core.xray_recorder).__name__}
"""


def test_the_server_leaves_the_xray_sdk_to_the_code_that_imports_it(runtime: Runtime, tmp_path: Path):
    """The local workers trace nothing (the project's Tracer imports no X-Ray SDK then): its recorder is not
    preloaded; a handler that imports it has it, imported by its own template."""
    worker = runtime.worker("xray", root=code_root(tmp_path, "xray", {"app.py": XRAY_HANDLER}))
    error, payload = invoke(worker, {})
    assert error is None, payload
    assert payload == {"preloaded": False, "recorder": "AsyncAWSXRayRecorder"}
    assert runtime.launcher.server is not None and "aws_xray_sdk" not in runtime.launcher.server.modules
    assert runtime.launcher.from_template == 1


def test_the_switch_turns_the_server_off(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(FORK_SWITCH, "0")
    assert not Launcher().enabled
    monkeypatch.setenv(FORK_SWITCH, "1")
    assert Launcher().enabled


LAUNCHING_PROCESS = """
import json, os, sys, time
from pathlib import Path
from docagent.localcloud.lambdas.forking import Launcher
from docagent.localcloud.lambdas.runtime import FunctionSpec, Worker

launcher = Launcher(enabled=True)
spec = FunctionSpec("f", "arn:f", "app.handler", 10, 128, {}, "sha", "/aws/lambda/f")
worker = Worker(spec, Path(sys.argv[1]), {"PATH": os.environ["PATH"]}, lambda *line: None, launcher)
assert worker.invoke({}, "r", 1.0).function_error is None
print(json.dumps([launcher.server.process.pid, worker.pid]), flush=True)
time.sleep(600)
"""


def test_workers_and_server_end_when_the_process_that_started_them_is_killed(tmp_path: Path):
    # The crash drills kill -9 the local cloud: its fork server and workers must not outlive it.
    root = code_root(tmp_path, "f")
    parent = subprocess.Popen(
        [sys.executable, "-c", LAUNCHING_PROCESS, str(root)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert parent.stdout is not None
        pids = json.loads(parent.stdout.readline())
        assert all(alive(pid) for pid in pids)
    finally:
        parent.kill()
        parent.wait()
    deadline = time.monotonic() + 10
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [pid for pid in pids if alive(pid)] == []
