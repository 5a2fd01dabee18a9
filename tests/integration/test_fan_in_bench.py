"""``docagent bench --fan-in`` at a tiny size: the report's and the verification's stages of the deployed
workflow run through the local cloud on a synthetic finished job, and the bench reports what it measured."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from docagent.drills.fan_in_bench import STAGES, stages_definition
from docagent.project import ROOT

pytestmark = pytest.mark.integration


def test_the_stages_are_the_workflows_own_states_from_the_summary_to_the_verification() -> None:
    workflow = {"States": {name: {"Type": "Task", "Next": "X"} for name in STAGES}}
    workflow["States"]["VerifyJob"] = {"Type": "Task", "End": True}
    definition = stages_definition(workflow)
    assert definition["StartAt"] == "SummarizeResults"
    assert list(definition["States"]) == list(STAGES)
    assert definition["States"]["BuildReport"]["Next"] == "VerifyPartitions"


def test_the_bench_runs_the_fan_in_through_the_local_cloud_and_measures_each_invocation(
    tmp_path: Path,
) -> None:
    """The command in its own process (its local cloud apart from the integration suite's)."""
    env = {**os.environ, "DOCAGENT_STATE_DIR": str(tmp_path)}
    command = [sys.executable, "-m", "docagent.cli", "bench", "--fan-in", "40", "--json"]
    completed = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    figures = json.loads(completed.stdout)
    small, large = figures["runs"]
    assert (small["documents"], large["documents"]) == (4, 40)
    for run in (small, large):
        assert (run["status"], run["verified"]) == ("SUCCEEDED", True), run["error"]
        counts = {
            step: sum(f["invocations"] for f in run["invocations"] if step in f["function"])
            for step in ("BuildReport", "VerifyJob")
        }
        # SummarizeResults, one ReportPartitions child, BuildReport; one VerifyPartitions child, VerifyJob
        assert counts == {"BuildReport": 3, "VerifyJob": 2}
        peaks = [peak for f in run["invocations"] for peak in f["peak_memory_mb"]]
        assert all(
            peak is not None and 0 < peak < f["configured_memory_mb"]
            for f in run["invocations"]
            for peak in f["peak_memory_mb"]
        )
        assert len(peaks) == 5
        assert run["requests"]["lambda"]["Invoke"] == 5
        assert run["bytes_by_operation"]["s3:GetObject"] > 0 and run["bytes_by_operation"]["s3:PutObject"] > 0
    assert figures["largest_share_of_configured_memory"] < 0.5
    assert figures["seconds_per_document_ratio"] > 0
