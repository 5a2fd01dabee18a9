"""`docagent demo` tells the mission's story end to end, as a user runs it (a subprocess, --json)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest


def demo(tmp_path, *arguments: str) -> dict:
    env = {**os.environ, "DOCAGENT_STATE_DIR": str(tmp_path)}
    completed = subprocess.run(
        [sys.executable, "-m", "docagent.cli", "demo", "--json", *arguments],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    return json.loads(completed.stdout)


@pytest.mark.parametrize("mode", ["redrive", "transient"])
def test_a_crashed_document_is_recovered_with_nothing_lost_and_nothing_repeated(tmp_path, mode):
    # Time scale 0.1 (6 s function timeouts) leaves room for a loaded CI machine.
    summary = demo(
        tmp_path, "--documents", "30", "--crash-at", "20", "--crash-mode", mode, "--time-scale", "0.1"
    )
    assert summary["status"] == "SUCCEEDED" and summary["verified"] is True
    assert summary["results"] == summary["documents"] == 30
    assert summary["tickets"] == 1
    assert summary["repeated_model_calls"] == 0, "the crashed document's model output was already durable"
    assert summary["crash"]["document_index"] == 20
    if mode == "redrive":
        assert summary["redrive_count"] == 1
        assert summary["crash"]["attempts_killed"] == 4, "first try and three retries die until the redrive"
        assert summary["stopped_at"]["error"] == "States.ExceedToleratedFailureThreshold"
        assert [doc["index"] for doc in summary["stopped_at"]["documents_failed"]] == [20]
    else:
        assert summary["redrive_count"] == 0
        assert summary["crash"]["attempts_killed"] == 1, "Retry recovers the one killed attempt"
