"""`docagent local deploy` again, as a new user would: on the same cloud, after `local down` and `local up`
(the stack restored from the journal), and after a handler changed: it updates what changed, as
`cdk deploy` would, and new jobs run the new code."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from docagent.drills.cloud_crash import CloudProcess
from docagent.drills.demo_corpus import seed_inputs
from docagent.drills.local_job import LocalJob
from docagent.localcloud.deploy import LocalStack
from docagent.localcloud.server import free_port
from docagent.localcloud.synth import synth_local
from tests.support import wait_for_execution

STACK = "DocAgent"
CHANGED = "-changed-handler"


@pytest.fixture
def cloud(tmp_path: Path) -> Iterator[CloudProcess]:
    process = CloudProcess(tmp_path / "state", free_port(), time_scale=0.25)
    yield process
    process.stop()


def _deploy(cloud: CloudProcess, out_dir: Path) -> LocalStack:
    env = {**os.environ, "DOCAGENT_STATE_DIR": str(cloud.state_root)}
    done = subprocess.run(
        [sys.executable, "-m", "docagent.cli", "local", "deploy", "--out-dir", str(out_dir), "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return LocalStack(**json.loads(done.stdout))


def _code_version_of_a_new_job(cloud: CloudProcess, stack: LocalStack, job_id: str) -> str:
    job = LocalJob.on(cloud.endpoint, stack, job_id)
    prefix = f"incoming/{job_id}/"
    seed_inputs(job, 2, prefix)
    job.start({"job_id": job_id, "prefix": prefix})
    described = wait_for_execution(job.sfn, job.execution_arn, timeout=240)
    assert described["status"] == "SUCCEEDED", described.get("cause")
    job.records.refresh()
    manifest = job.records.manifest
    assert manifest is not None
    return manifest.versions.code_version


def _change_a_handler(out_dir: Path) -> None:
    """What editing functions/logic/list_documents.py and synthesizing again gives: a new code asset."""
    assets = json.loads((out_dir / f"{STACK}.assets.json").read_text())
    changed = 0
    for asset in assets["files"].values():
        source = out_dir / asset["source"]["path"] / "functions" / "logic" / "list_documents.py"
        if source.exists():
            text = source.read_text()
            assert "code_version=settings.code_version," in text
            source.write_text(
                text.replace("code_version=settings.code_version,", f'code_version="{CHANGED}",')
            )
            changed += 1
    assert changed, "the functions' code asset holds the handler"


def test_deploy_twice_then_after_a_restart_and_a_code_change_runs_the_new_code(
    cloud: CloudProcess, tmp_path: Path
) -> None:
    out_dir = tmp_path / "cdk.out"
    shutil.copytree(synth_local(), out_dir)
    cloud.start(fresh=True)
    first = _deploy(cloud, out_dir)
    again = _deploy(cloud, out_dir)  # on a cloud that holds the stack: EntityAlreadyExists before
    assert again.outputs == first.outputs
    before = _code_version_of_a_new_job(cloud, again, "before-change")
    assert before != CHANGED

    cloud.stop()  # `local down`
    _change_a_handler(out_dir)
    printed = cloud.start()  # `local up`: the stack comes back from the journal
    assert "restored 1 job" in printed, printed
    redeployed = _deploy(cloud, out_dir)

    assert redeployed.outputs == first.outputs
    assert _code_version_of_a_new_job(cloud, redeployed, "after-change") == CHANGED
    job = LocalJob.on(cloud.endpoint, redeployed, "before-change")
    job.records.refresh()
    manifest = job.records.manifest
    assert manifest is not None and manifest.versions.code_version == before, "the first job's record stays"
