"""docs/your-own-job.md, run as a new user runs it (#40): every `docagent` command the page shows, in its
order, on a folder `docagent init` makes; `my-job` is the test's folder and the page's OpenAI-compatible
endpoint is a fake one started here on 127.0.0.1. The commands that need AWS (`--aws`, `--model bedrock`)
are the only ones not run, and the test says so: every other documented command must succeed as shown."""

from __future__ import annotations

import http.server
import json
import os
import shlex
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from functions.inference.instructions import asked
from tests.documented import documented_commands
from tests.integration.test_demo_job import assert_recovered

PAGE = "docs/your-own-job.md"
DOCUMENTED_ENDPOINT = "http://127.0.0.1:11434/v1"
NEEDS_AWS = ("--aws", "--model bedrock")


class _ReadingModel(http.server.BaseHTTPRequestHandler):
    """An OpenAI-compatible chat-completions endpoint that "reads" a document: it answers the classification
    with the job's class and the extraction with the label of the sample whose values the document's text
    holds most of (a document whose text it cannot read gets an empty answer, as a text-only model would)."""

    labels: list[dict[str, Any]] = []
    class_name = ""
    requests = 0

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _ReadingModel.requests += 1
        user = body["messages"][-1]["content"]
        question = asked(user.rsplit("</document>\n\n", 1)[-1])
        if question is not None and question.kind == "classify":
            reply: dict[str, Any] = {"class": _ReadingModel.class_name}
        else:
            seen = [sum(str(v) in user for v in label.values()) for label in _ReadingModel.labels]
            reply = _ReadingModel.labels[seen.index(max(seen))] if max(seen) > 1 else {}
        answer = {
            "choices": [
                {"message": {"role": "assistant", "content": json.dumps(reply)}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": 900, "completion_tokens": 60},
        }
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


@pytest.fixture
def reading_model() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _ReadingModel)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def test_the_first_job_walkthrough_runs_as_documented(tmp_path: Path, reading_model: str) -> None:
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
        arguments = [word.replace(DOCUMENTED_ENDPOINT, reading_model) for word in arguments]
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
            f"`{command}`:\n{completed.stdout[-3000:]}{completed.stderr[-3000:]}"
        )
        ran.append(command)
        if arguments[0] == "init":  # the fake model reads with the labels the walkthrough's folder has
            _ReadingModel.class_name = next(iter(json.loads((job / "job.json").read_text())["classes"]))
            _ReadingModel.labels = [
                json.loads(path.read_text()) for path in sorted((job / "samples").glob("*.label.json"))
            ]
        answer = json.loads(completed.stdout) if "--json" in arguments else None
        if arguments[0] == "demo":  # the scaffold's six samples, one a scan read visually, a crash redriven
            assert answer is not None
            assert_recovered(answer, 6)
            assert answer["definition"]["results_by_status"] == {"extracted": 5, "review": 1}
            assert answer["definition"]["model_calls_by_purpose"] == {"extract": 6}  # one class
        if arguments[0] == "chaos":
            assert answer is not None and answer["passed"], answer["counts"]
        if arguments[0] == "eval":  # the real model's run, then its recordings replayed offline
            assert answer is not None
            modes.append(answer["run"]["mode"])
            assert answer["run"]["samples"] == len(_ReadingModel.labels)
    # the page's own sequence: scaffold, validate, a crash demo, the matrix, a real model recorded, replayed
    verbs = [shlex.split(command)[1] for command in ran]
    assert verbs[:4] == ["init", "definition", "demo", "chaos"] and modes == ["model", "recorded"], ran
    assert _ReadingModel.requests > 0 and list(job.glob("samples/*.recording.json")), "--record kept nothing"
    assert all(any(flag in command for flag in NEEDS_AWS) for command in not_run)
    assert len(not_run) <= 5, not_run  # only the AWS steps are left out
