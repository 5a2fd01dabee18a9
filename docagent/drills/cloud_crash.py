"""``docagent demo --crash-cloud``: the local cloud itself dies mid-job (``kill -9`` of its process group and
its Lambda workers), is started again, and the job finishes from where it was, with no redrive.

The cloud runs as its own process (``docagent local up``) with its state in ``.docagent/demo-cloud``. The
worker reviewing the chosen document is held at a fault point (``hang``, first attempt only); the moment
its "injecting fault" log line appears, the whole cloud is killed. The restarted cloud restores its
journal, resumes the execution and its Map Run: documents that ended keep their results, the others
(the held one included) run again, and durable steps keep every finished model call from repeating.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3

from docagent import project
from docagent.drills.demo import follow, summarize
from docagent.drills.demo_corpus import seed_inputs
from docagent.drills.local_job import LocalJob
from docagent.localcloud.deploy import deploy
from docagent.localcloud.server import REGION, free_port
from docagent.localcloud.synth import synth_local
from functions import storage

CLOUD_STATE = project.STATE_DIR / "demo-cloud"


@dataclass
class CloudProcess:
    """A ``docagent local up`` in its own session, with its state under ``state_root``."""

    state_root: Path
    port: int
    time_scale: float
    process: subprocess.Popen[bytes] | None = None
    # How to run the CLI (tests put a fault-injecting wrapper in front of it).
    launcher: tuple[str, ...] = (sys.executable, "-m", "docagent.cli")

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_file(self) -> Path:
        return self.state_root / "cloud-process.log"

    def start(self, *, fresh: bool = False, timeout: float = 180.0) -> str:
        """Start it and wait until it serves; returns what it printed first (what it restored)."""
        self.state_root.mkdir(parents=True, exist_ok=True)
        record_file = self.state_root / "local" / "cloud.json"
        record_file.unlink(missing_ok=True)
        command = [*self.launcher, "local", "up", "--port", str(self.port)]
        command += ["--time-scale", str(self.time_scale)] + (["--fresh"] if fresh else [])
        env = {**os.environ, "DOCAGENT_STATE_DIR": str(self.state_root)}
        offset = self.log_file.stat().st_size if self.log_file.exists() else 0
        with self.log_file.open("ab") as log:
            self.process = subprocess.Popen(
                command, cwd=project.ROOT, env=env, stdout=log, stderr=log, start_new_session=True
            )
        deadline = time.time() + timeout
        while not record_file.exists():
            if self.process.poll() is not None or time.time() > deadline:
                self.kill()
                raise RuntimeError(f"the local cloud did not start; see {self.log_file}")
            time.sleep(0.1)
        with self.log_file.open("rb") as log:
            log.seek(offset)
            printed = log.read().decode("utf-8", "replace")
        return " ".join(printed.split("local cloud serving")[0].split())

    def kill(self) -> None:
        """``kill -9`` the cloud's process group and every Lambda worker it started (their own sessions)."""
        if self.process is None:
            return
        workers = _children(self.process.pid)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        for pid in workers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.process.wait()
        self.process = None

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.kill()
        self.process = None


def _children(pid: int) -> list[int]:
    """Direct children of ``pid`` (Linux /proc)."""
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) > 1 and int(fields[1]) == pid:
            found.append(int(entry.name))
    return found


def wait_for_fault(job: LocalJob, log_group: str, document_index: int | None, timeout: float) -> bool:
    """Whether the held worker logged its fault (it sits at the fault point until its deadline); with a
    ``document_index``, the fault of that document."""
    client = boto3.session.Session(
        aws_access_key_id="local", aws_secret_access_key="local", region_name=REGION
    ).client("logs", endpoint_url=job.s3.meta.endpoint_url)
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            events = client.filter_log_events(logGroupName=log_group, filterPattern='"injecting fault"')[
                "events"
            ]
        except client.exceptions.ResourceNotFoundException:
            events = []
        for event in events:
            try:
                line = json.loads(event["message"])
            except ValueError:
                continue
            if isinstance(line, dict) and document_index in (None, line.get("document_index")):
                return True
        if job.status() != "RUNNING":
            return False
        time.sleep(0.1)
    return False


def run_cloud_crash_demo(
    documents: int, time_scale: float, document_index: int, show_progress: bool
) -> dict[str, Any]:
    started = time.time()
    phases: dict[str, float] = {}
    mark = started

    def lap(name: str) -> None:
        nonlocal mark
        now = time.time()
        phases[name] = round(now - mark, 2)
        mark = now

    out_dir = synth_local()
    lap("synth")
    cloud = CloudProcess(CLOUD_STATE, free_port(), time_scale)
    job_id = f"demo-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"
    try:
        cloud.start(fresh=True)
        stack = deploy(out_dir, "DocAgent", cloud.endpoint)
        lap("deploy")
        job = LocalJob.on(cloud.endpoint, stack, job_id)
        prefix = storage.incoming_prefix(job_id)
        truth = seed_inputs(job, documents, prefix)
        lap("seed")
        fault = {"point": "before_store_result", "document_index": document_index, "mode": "hang"}
        job.start({"job_id": job_id, "prefix": prefix, "options": {"fault": {**fault, "times": 1}}})
        function = stack.outputs["ProcessDocumentFunctionName"]
        log_group = f"/aws/lambda/{function}"
        functions = job.ctx.client("lambda")
        arn = functions.get_function(FunctionName=function)["Configuration"]["FunctionArn"]
        log_group = functions.list_tags(Resource=arn).get("Tags", {}).get("docagent:log-group", log_group)
        fired = wait_for_fault(job, log_group, document_index, timeout=600)
        done_before = (job.map_run_counts() or {}).get("succeeded", 0)
        cloud.kill()
        lap("until_crash")
        restart_started = time.time()
        restored = cloud.start()
        restart_seconds = round(time.time() - restart_started, 2)
        status = follow(job, documents, show_progress, description="after the cloud's restart")
        lap("after_restart")
        summary = summarize(job, truth, documents, status)
        summary["cloud_restarts"] = 1
        summary["cloud_crash"] = {
            "document_index": document_index,
            "fault_point": fault["point"],
            "fault_seen_before_kill": fired,
            "documents_done_before_kill": done_before,
            "restart_seconds": restart_seconds,
            "restored": restored,
        }
        summary["wall_seconds"] = round(time.time() - started, 2)
        summary["phase_seconds"] = phases
        return summary
    finally:
        cloud.stop()
