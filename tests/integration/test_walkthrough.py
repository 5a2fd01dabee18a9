"""docs/your-own-job.md, run as a new user runs it (#40): every `docagent` command the page shows, in its
order, on a folder `docagent init` makes; `my-job` is the test's folder and the page's OpenAI-compatible
endpoint is a fake one started here on 127.0.0.1. The commands that need AWS (`--aws`, `--model bedrock`)
are the only ones not run, and the test says so: every other documented command must succeed as shown.

Its `docagent chaos --job my-job --reduced` is the suite's one run of the reduced crash matrix: the scaffold's
job passes every cell's point (a document's model call and result, the report's and the verification's
partitions, its export action's three points), and each cell is checked as tests/chaos/reduced_matrix.py says,
with the EXPRESS at-least-once cell."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from docagent.drills.chaos import AT_LEAST_ONCE_CHECKS, CHECKS
from tests.chaos.reduced_matrix import assert_every_cell_keeps_every_invariant
from tests.documented import documented_commands
from tests.fake_openai import FakeServer, question_of, serve
from tests.integration.test_demo_job import assert_recovered

PAGE = "docs/your-own-job.md"
DOCUMENTED_ENDPOINT = "http://127.0.0.1:11434/v1"
NEEDS_AWS = ("--aws", "--model bedrock")


class _Folder:
    """What the fake model reads with: the walkthrough folder's class and its samples' labels."""

    labels: list[dict[str, Any]] = []
    class_name = ""


def _reading(body: dict[str, Any]) -> dict[str, Any]:
    """A model that "reads" a document: the classification is the job's class, the extraction the label of the
    sample whose values the document's text holds most of (a document whose text it cannot read gets an
    empty answer, as a text-only model would)."""
    user, question = question_of(body)
    if question is not None and question.kind == "classify":
        return {"class": _Folder.class_name}
    seen = [sum(str(v) in user for v in label.values()) for label in _Folder.labels]
    return _Folder.labels[seen.index(max(seen))] if max(seen) > 1 else {}


@pytest.fixture
def reading_model() -> Iterator[FakeServer]:
    with serve(_reading, usage=(900, 60)) as server:
        yield server


def failed_cells(stdout: str) -> str:
    """A failed `chaos --json`'s failed cells and their reasons (its tail shows only the last cells)."""
    try:
        answer = json.loads(stdout)
    except ValueError:
        return ""
    cells = [*answer.get("cells", []), answer.get("baseline") or {}, answer.get("at_least_once") or {}]
    return "".join(
        f"FAILED {cell.get('point', 'at-least-once')} {cell.get('mode', '')} {cell.get('recovery', '')}: "
        f"{cell.get('reason')}\n"
        for cell in cells
        if cell.get("status") == "fail"
    )


def assert_delivered_twice_once(answer: dict[str, Any]) -> None:
    """The matrix's EXPRESS at-least-once cell: a document delivered twice at once to the Map's children makes
    one model call and one result, and every invariant of the worker cells holds."""
    once = answer["at_least_once"]
    assert once is not None and once["status"] == "pass", once
    assert set(once["checks"]) == set(CHECKS) | set(AT_LEAST_ONCE_CHECKS)
    assert once["deliveries"] == 2, "the document was delivered twice at once"
    assert once["document_model_calls"] == 1, "one model call for the document delivered twice"
    assert once["results"] == answer["documents"]


def test_the_first_job_walkthrough_runs_as_documented(tmp_path: Path, reading_model: FakeServer) -> None:
    commands = documented_commands(PAGE)
    assert commands[0].startswith("docagent init my-job"), commands
    job = tmp_path / "my-job"
    environment = {**os.environ, "DOCAGENT_STATE_DIR": str(tmp_path / "state")}
    ran, not_run, modes = [], [], []
    for command in commands:
        if any(flag in command for flag in NEEDS_AWS):
            not_run.append(command)
            continue
        arguments = [str(job) if word == "my-job" else word for word in shlex.split(command)[1:]]
        arguments = [word.replace(DOCUMENTED_ENDPOINT, reading_model.url) for word in arguments]
        if arguments[0] in {"demo", "chaos", "eval"}:
            arguments += ["--json"] * ("--json" not in arguments)
        completed = subprocess.run(
            [sys.executable, "-m", "docagent.cli", *arguments],
            cwd=tmp_path,
            env=environment,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert completed.returncode == 0, (
            f"`{command}`:\n{failed_cells(completed.stdout)}{completed.stdout[-3000:]}{completed.stderr[-3000:]}"
        )
        ran.append(command)
        if arguments[0] == "init":  # the fake model reads with the labels the walkthrough's folder has
            _Folder.class_name = next(iter(json.loads((job / "job.json").read_text())["classes"]))
            _Folder.labels = [
                json.loads(path.read_text()) for path in sorted((job / "samples").glob("*.label.json"))
            ]
        answer = json.loads(completed.stdout) if "--json" in arguments else None
        if arguments[0] == "demo":  # the scaffold's six samples, one a scan read visually, a crash redriven
            assert answer is not None
            assert_recovered(answer, 6)
            assert answer["definition"]["results_by_status"] == {"extracted": 5, "review": 1}
            assert answer["definition"]["model_calls_by_purpose"] == {"extract": 6}  # one class
        if arguments[0] == "chaos":  # the suite's one run of the reduced matrix, its at-least-once cell too
            assert answer is not None
            assert_every_cell_keeps_every_invariant(answer)
            assert_delivered_twice_once(answer)
        if arguments[0] == "eval":  # the real model's run, then its recordings replayed offline
            assert answer is not None
            modes.append(answer["run"]["mode"])
            assert answer["run"]["samples"] == len(_Folder.labels)
    # the page's own sequence: scaffold, validate, a crash demo, the matrix, a real model recorded, replayed
    verbs = [shlex.split(command)[1] for command in ran]
    assert verbs[:4] == ["init", "definition", "demo", "chaos"] and modes == ["model", "recorded"], ran
    assert reading_model.requests and list(job.glob("samples/*.recording.json")), "--record kept nothing"
    assert all(any(flag in command for flag in NEEDS_AWS) for command in not_run)
    assert len(not_run) <= 5, not_run  # only the AWS steps are left out
