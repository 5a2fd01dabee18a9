"""The local cloud's lifecycle (docagent/localcloud/lifecycle.py) without a cloud: what it refuses before
anything starts, and what it says a start restored."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from docagent import cli, project
from docagent.localcloud import lifecycle
from docagent.localcloud.lifecycle import LifecycleError, UpOptions


@pytest.fixture
def state(tmp_path, monkeypatch):
    monkeypatch.setattr(project, "LOCAL_DIR", tmp_path / "local")
    monkeypatch.setattr(project, "LOCAL_CLOUD_FILE", tmp_path / "local" / "cloud.json")
    monkeypatch.setattr(project, "LOCAL_STACK_FILE", tmp_path / "local" / "stack.json")
    monkeypatch.setattr(project, "LOCAL_JOURNAL", tmp_path / "local" / "journal.log")
    return tmp_path / "local"


def test_down_with_nothing_running_is_not_found(state):
    with pytest.raises(LifecycleError, match="no local cloud is running") as refused:
        lifecycle.stop()
    assert refused.value.exit_code == 3


def test_a_taken_port_is_refused_before_anything_starts(state, monkeypatch):
    monkeypatch.setattr(lifecycle, "port_free", lambda port: port != 47250)  # unit tests open no socket
    with pytest.raises(LifecycleError, match="port 47250 is taken") as refused:
        lifecycle.time_scale_to_start(UpOptions(port=47250))
    assert (refused.value.exit_code, refused.value.error_type) == (1, None)
    assert not state.exists(), "nothing was created"


def test_the_time_scale_is_the_options_else_the_last_one_used_else_one(state, monkeypatch):
    monkeypatch.setattr(lifecycle, "port_free", lambda port: True)
    assert lifecycle.time_scale_to_start(UpOptions(port=47251, time_scale=0.5)) == 0.5
    assert lifecycle.time_scale_to_start(UpOptions(port=47251, fresh=True)) == 1.0


def test_the_status_of_a_cloud_that_is_down_names_its_state(state):
    status = lifecycle.status()
    assert status["up"] is False and status["cloud"] is None
    assert status["state_dir"] == str(state)
    assert status["state_bytes"] == status["journal_bytes"] + status["tickets_bytes"] == 0


def test_what_a_start_restored_is_said_in_one_line():
    assert lifecycle.restored_line({}) == "nothing to restore: the local cloud starts empty"
    record = {
        "restored": {
            "executions": 3,
            "running": 1,
            "requests": 42,
            "seconds": 1.25,
            "state_dir": "/s",
            "torn_tail_bytes": 17,
            "torn_tail_offset": 900,
        }
    }
    assert lifecycle.restored_line(record) == (
        "restored 3 jobs, 1 running, resuming (42 changes replayed from /s in 1.2 s); a torn last record "
        "(17 bytes at byte 900, never answered) was cut off (`docagent local up --fresh` starts empty)"
    )
    # What it restored, from when, and a time scale kept from that run are said (#40).
    record["restored"] |= {"last_change": "2026-12-03 17:02:11 UTC", "torn_tail_bytes": 0}
    record |= {"time_scale": 0.25, "time_scale_kept": True}
    assert lifecycle.restored_line(record) == (
        "restored 3 jobs, 1 running, resuming (42 changes replayed from /s in 1.2 s, last changed "
        "2026-12-03 17:02:11 UTC); time scale 0.25, kept from that run (`docagent local up --fresh` starts "
        "empty)"
    )


@pytest.mark.parametrize(("arguments", "enforced"), [([], True), (["--no-iam"], False)])
def test_local_up_enforces_iam_unless_no_iam(state, monkeypatch, arguments, enforced):
    served: list[UpOptions] = []
    monkeypatch.setattr(lifecycle, "time_scale_to_start", lambda options: 1.0)
    monkeypatch.setattr(lifecycle, "serve", lambda options, *_, **__: served.append(options))
    cli.main(["local", "up", "--port", "47253", *arguments])
    assert [options.iam for options in served] == [enforced]
    # the detached start passes it on to the process it starts
    started: list[list[str]] = []

    class Started:
        def __init__(self, command: list[str], **_: object) -> None:
            started.append(command)
            raise RuntimeError("not started in a unit test")

    monkeypatch.setattr(lifecycle.subprocess, "Popen", Started)
    with pytest.raises(RuntimeError):
        lifecycle.start_detached(served[0], 1.0)
    assert ("--no-iam" in started[0]) is not enforced


_CLOUD = """import pathlib, signal, sys, time
record = pathlib.Path(sys.argv[1])
def stop(*_):
    record.unlink()  # as a stopping local cloud removes its record
    sys.exit(0)
signal.signal(signal.SIGTERM, stop)
print("ready", flush=True)
time.sleep(60)
"""


def test_down_stops_a_cloud_whose_record_vanishes_as_it_stops(state):
    """`local down` looks at the record until it is gone; the cloud removes it as it stops (#53: once a
    FileNotFoundError traceback, the file gone between the look and the read)."""
    state.mkdir()
    cloud = subprocess.Popen(
        [sys.executable, "-c", _CLOUD, str(project.LOCAL_CLOUD_FILE)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert cloud.stdout is not None and cloud.stdout.readline() == "ready\n"
        project.save_cloud_record({"pid": cloud.pid, "endpoint": "http://127.0.0.1:1"})
        assert lifecycle.stop()["pid"] == cloud.pid
        assert cloud.wait(timeout=10) == 0 and not project.LOCAL_CLOUD_FILE.exists()
        assert list(state.iterdir()) == [], "no partial record left behind"
    finally:
        cloud.kill()
        cloud.wait()


def test_a_record_that_vanishes_or_is_no_record_is_a_cloud_that_is_down(state, monkeypatch):
    class Vanishing(type(Path())):  # type: ignore[misc]
        def read_text(self, *args: Any, **kwargs: Any) -> str:
            self.unlink(missing_ok=True)  # removed between a look at it and its reading
            return super().read_text(*args, **kwargs)

    state.mkdir()
    record = Vanishing(state / "cloud.json")
    record.write_text(json.dumps({"pid": os.getpid()}))
    monkeypatch.setattr(project, "LOCAL_CLOUD_FILE", record)
    assert project.running_cloud() is None
    monkeypatch.setattr(project, "LOCAL_CLOUD_FILE", state / "cloud.json")
    for stale in ('{"pid": ', "[]", json.dumps({"pid": _dead_pid()})):
        (state / "cloud.json").write_text(stale)
        assert project.running_cloud() is None and not (state / "cloud.json").exists(), stale
    with pytest.raises(LifecycleError, match="no local cloud is running"):
        lifecycle.stop()


def test_down_of_a_cloud_that_stopped_before_its_signal_is_no_error(state, monkeypatch):
    looks = iter([{"pid": _dead_pid(), "endpoint": "http://127.0.0.1:1"}, None])
    monkeypatch.setattr(project, "running_cloud", lambda: next(looks))
    assert lifecycle.stop()["endpoint"] == "http://127.0.0.1:1"


def _dead_pid() -> int:
    """The pid of a process that has ended (and been reaped)."""
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    return ended.pid
