"""The local cloud's lifecycle (docagent/localcloud/lifecycle.py) without a cloud: what it refuses before
anything starts, and what it says a start restored."""

from __future__ import annotations

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
