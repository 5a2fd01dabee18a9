"""`docagent local up` names a state directory it cannot write, and a damaged journal, with the fix."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys

from docagent import cli, project
from docagent.localcloud.server import free_port
from docagent.localcloud.state.journal import dumps


def _up(capsys, *arguments: str) -> tuple[int, dict[str, object]]:
    code = cli.main(["local", "up", "--port", str(free_port()), "--json", *arguments])
    return code, json.loads(capsys.readouterr().out)


def _state_in(monkeypatch, folder) -> None:
    monkeypatch.setattr(project, "LOCAL_DIR", folder)
    monkeypatch.setattr(project, "LOCAL_CLOUD_FILE", folder / "cloud.json")
    monkeypatch.setattr(project, "LOCAL_STACK_FILE", folder / "stack.json")


def test_a_state_directory_that_cannot_be_created_is_named_with_the_fix(tmp_path, monkeypatch, capsys):
    (tmp_path / "a-file").write_text("")
    _state_in(monkeypatch, tmp_path / "a-file" / "local")
    code, answer = _up(capsys)
    assert code == 1 and answer["error_type"] == "StateDirectoryNotWritable"
    assert str(tmp_path / "a-file" / "local") in str(answer["error"])
    assert "DOCAGENT_STATE_DIR" in str(answer["error"])


def test_a_full_disk_is_named_before_anything_starts(tmp_path, monkeypatch):
    def fsync(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", fsync)
    problem = project.state_dir_problem(tmp_path / "local")
    assert problem is not None and "is on a full disk" in problem and str(tmp_path / "local") in problem
    assert list((tmp_path / "local").iterdir()) == [], "the probe file is removed"


def test_a_read_only_state_directory_is_named(tmp_path, monkeypatch):
    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(type(tmp_path), "open", refuse)
    problem = project.state_dir_problem(tmp_path)
    assert problem is not None and "read-only file system" in problem


def test_a_damaged_journal_is_refused_at_up_naming_the_record(tmp_path):
    """Run as a user would (its own process: a test process may already hold a local cloud)."""
    journal = tmp_path / "local" / "cloud-state" / "journal.log"
    journal.parent.mkdir(parents=True)
    lines = [dumps({"t": "log", "group": "g", "stream": "s", "line": line, "at": 1}) for line in "abc"]
    first, second, third = lines
    journal.write_bytes(first + second.replace(b'"b"', b'"B"') + third)
    done = subprocess.run(
        [sys.executable, "-m", "docagent.cli", "local", "up", "--port", str(free_port()), "--json"],
        env={**os.environ, "DOCAGENT_STATE_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    answer = json.loads(done.stdout)
    assert done.returncode == 1 and answer["error_type"] == "JournalCorrupt", done.stdout + done.stderr
    assert f"record 2 at byte {len(first)}" in answer["error"]
    assert "1 whole record(s) after it" in answer["error"] and "--skip-corrupt" in answer["error"]
    assert journal.read_bytes().count(b"\n") == 3, "refusing keeps the journal as it was"


def test_an_origin_that_is_not_one_is_refused_before_anything_starts(tmp_path, monkeypatch, capsys):
    """`--allow-origin` names a browser origin (scheme://host[:port]); `*` or a URL with a path is refused."""
    _state_in(monkeypatch, tmp_path / "local")
    for given in ("*", "http://tools.internal/app"):
        code, answer = _up(capsys, "--allow-origin", given)
        assert code == 2 and "not an origin" in str(answer["error"]), answer
    assert not (tmp_path / "local").exists()
