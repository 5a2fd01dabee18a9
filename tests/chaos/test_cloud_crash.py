"""The local cloud itself killed (kill -9 of its process group and workers) at a fault point: after its
restart the job finishes without a redrive and keeps every invariant of the worker cells."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from docagent.drills.chaos import CHECKS
from docagent.drills.cloud_chaos import REDUCED_CLOUD_POINTS
from docagent.project import ROOT

# 9 s function timeouts (cdk.json's function_timeout_seconds is 120), as the reduced matrix's were when the
# suite ran it on the invoice example: each cell waits out the killed invocation's in-progress record.
TIME_SCALE = 0.075


def test_killing_the_cloud_at_a_fault_point_loses_nothing_and_repeats_nothing(tmp_path):
    env = {**os.environ, "DOCAGENT_STATE_DIR": str(tmp_path)}
    command = [sys.executable, "-m", "docagent.cli", "chaos", "--cloud", "--reduced", "--json"]
    command += ["--documents", "2", "--time-scale", str(TIME_SCALE)]
    completed = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900, check=False
    )
    assert completed.returncode in {0, 1}, completed.stdout[-3000:] + completed.stderr[-3000:]
    summary = json.loads(completed.stdout)
    cells = summary["cells"]
    assert [cell["point"] for cell in cells] == list(REDUCED_CLOUD_POINTS)
    for cell in cells:
        assert set(cell["checks"]) == set(CHECKS), cell
        assert cell["status"] == "pass", cell["reason"]
        assert cell["final_status"] == "SUCCEEDED" and cell["redrives"] == 0
        assert cell["repeated_model_calls"] == 0
    assert summary["passed"] is True and completed.returncode == 0
    assert summary["cloud_restarts"] == len(REDUCED_CLOUD_POINTS)
