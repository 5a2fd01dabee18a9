"""The ``docagent`` console script (``docagent.cli:run``): main's exit code, after freezing the heap so that
the interpreter's exit does not collect it (docagent/cli.py ``run``)."""

from __future__ import annotations

import gc
import subprocess
import sys
import tomllib

import pytest

from docagent import cli, project


def test_the_console_script_is_run() -> None:
    scripts = tomllib.loads((project.ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["docagent"] == "docagent.cli:run"


def test_run_exits_with_mains_code_after_freezing_the_heap(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(cli, "main", lambda: calls.append("main") or 3)
    monkeypatch.setattr(gc, "freeze", lambda: calls.append("freeze"))
    with pytest.raises(SystemExit) as exited:
        cli.run()
    assert exited.value.code == 3
    assert calls == ["main", "freeze"]


def test_a_bad_request_through_the_real_entry_exits_2_and_says_why() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "from docagent.cli import run; run()", "status"],
        capture_output=True,
        text=True,
        check=False,
        cwd=project.ROOT,
    )
    assert done.returncode == 2, done.stderr
    assert "the following arguments are required: JOB" in done.stderr
