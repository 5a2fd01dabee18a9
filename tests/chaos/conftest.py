"""The reduced crash matrix, run once per test session by the real command in its own process
(``docagent chaos --reduced --json``): its local cloud (a free 127.0.0.1 port) and moto's process-wide
backends stay apart from the integration suite's cloud, and everything it started stops with it.

The reduced matrix is every fault point once, every mode, both recoveries; its EXPRESS at-least-once cell
is left out here (``--no-at-least-once``: a second stack deployed and a job for a cell the walkthrough's
``chaos --job --reduced`` runs and tests/integration/test_walkthrough.py checks); the full matrix is
``docagent chaos`` (docs/crash-matrix.md). Time scale 0.075 (9 s function timeouts: cdk.json's
function_timeout_seconds is 120) leaves room for a CI machine running the rest of the suite at the same
time; the retry and hang cells wait a whole function timeout, so the scale sets most of the run's length.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

import pytest

from docagent.project import ROOT

# 9 s function timeouts, as when the timeout was 60 s and the scale 0.15 (the timeout became 120 s, the
# scale stayed: every hang and in-step crash waited 18 s).
TIME_SCALE = 0.075
DOCUMENTS = 2
PARALLEL = 5


@pytest.fixture(scope="session")
def reduced_matrix(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The ``--json`` object, plus ``exit_code`` and ``wall_seconds`` of the command."""
    env = {**os.environ, "DOCAGENT_STATE_DIR": str(tmp_path_factory.mktemp("chaos"))}
    command = [sys.executable, "-m", "docagent.cli", "chaos", "--reduced", "--no-at-least-once", "--json"]
    command += ["--time-scale", str(TIME_SCALE), "--documents", str(DOCUMENTS), "--parallel", str(PARALLEL)]
    started = time.time()
    completed = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert completed.returncode in {0, 1}, completed.stdout[-3000:] + completed.stderr[-3000:]
    summary: dict[str, Any] = json.loads(completed.stdout)
    summary["exit_code"] = completed.returncode
    summary["wall_seconds"] = round(time.time() - started, 1)
    return summary
