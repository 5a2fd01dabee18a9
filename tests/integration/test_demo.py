"""`docagent demo` tells the mission's story end to end: as a user runs it (a subprocess, --json) where the
story needs a cloud of its own (a deployment variant, the demo's CPU figures, --keep), else the demo's job on
the session cloud (``session_demo``)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from docagent import project
from docagent.drills.demo import demo_job
from docagent.drills.demo_cloud import DemoCloud
from docagent.drills.demo_crash import Crash
from docagent.drills.document_files import parse_formats
from docagent.localcloud import lifecycle
from docagent.localcloud.deploy import LocalStack
from docagent.localcloud.server import LocalCloud
from tests.integration.test_evidence_demo import operator


def docagent(tmp_path, *arguments: str, expect: int = 0) -> dict:
    env = {**os.environ, "DOCAGENT_STATE_DIR": str(tmp_path)}
    completed = subprocess.run(
        [sys.executable, "-m", "docagent.cli", *arguments, "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert completed.returncode == expect, completed.stdout[-3000:] + completed.stderr[-3000:]
    return json.loads(completed.stdout)


def demo(tmp_path, *arguments: str) -> dict:
    return docagent(tmp_path, "demo", *arguments)


def kept_operator(state: Path, summary: dict, *arguments: str) -> dict:
    """`docagent ARGS --json` against the cloud `demo --keep` left running (state: its DOCAGENT_STATE_DIR),
    in this process: its endpoint and the deployment the demo recorded (a subprocess a command costs about
    2 s of CPU, its interpreter and imports; test_budget_demo.py's first `status` runs as a user runs it)."""
    return operator(summary["kept"]["endpoint"], state / "local" / "stack.json", *arguments)


def stop_kept_cloud(state: Path) -> None:
    """`docagent local down` for the cloud `demo --keep` left running under ``state``, in this process: the
    same lifecycle.stop() on that state's record (`local down` as a command: test_durable_cloud.py)."""
    with pytest.MonkeyPatch.context() as patch, contextlib.suppress(lifecycle.LifecycleError):
        patch.setattr(project, "LOCAL_CLOUD_FILE", state / "local" / "cloud.json")
        lifecycle.stop()


def session_demo(
    cloud: LocalCloud, deployed: LocalStack, documents: int, crash: Crash, **options: Any
) -> dict:
    """The demo's job (docagent/drills/demo.py ``demo_job``: seeded, started, followed, redriven, summarised
    as `docagent demo --json` does) on the session cloud: a story that needs no deployment or cloud of its own
    runs there, not in a demo's own cloud (about 7 s of CPU a demo before its first document: its interpreter,
    cloud, deploy and workers' templates). `demo` itself, as a user runs it: the tests that need its own
    cloud (a variant, its CPU figures, --keep)."""
    where = DemoCloud(endpoint=cloud.endpoint, state_dir=cloud.state_dir, cloud=cloud)
    job_id = f"demo-{crash.mode}-{crash.point.replace('_', '-')}-{uuid.uuid4().hex[:6]}"
    summary, _, _ = demo_job(where, deployed, job_id, documents, crash, **options)
    return summary


# The crash story needs a job with documents before and after the crashed one and every format of the
# corpus present (12 documents hold each of the five default formats, 6 each of pdf, md and xlsx); the size is
# not the point (it was 30, and 12 for the transient crash too: the job's CPU grows with it).
CRASH_DOCUMENTS = {"redrive": 12, "transient": 6}
CRASH_AT = {"redrive": 8, "transient": 4}


@pytest.mark.parametrize("mode", ["redrive", "transient"])
def test_a_crashed_document_is_recovered_with_nothing_lost_and_nothing_repeated(
    cloud, deployed, stack_file, mode
):
    """On the session cloud (session_demo); the demo's own cloud's CPU figures are checked by the batches of
    five below, `demo --keep` and its cloud found by its state folder by test_budget_demo.py."""
    formats = "pdf,docx,html,txt,md" if mode == "redrive" else "pdf,md,xlsx"
    documents, crash_at = CRASH_DOCUMENTS[mode], CRASH_AT[mode]
    summary = session_demo(cloud, deployed, documents, Crash(crash_at, mode), formats=parse_formats(formats))
    assert summary["status"] == "SUCCEEDED" and summary["verified"] is True
    assert summary["results"] == summary["documents"] == documents
    assert summary["tickets"] == 1
    assert summary["model_path"] == "bedrock-converse"  # BedrockConverseProvider over the local endpoint
    assert summary["model_calls_throttled"] == 0  # no --model-faults
    assert summary["repeated_model_calls"] == 0, "the crashed document's model output was already durable"
    assert summary["crash"]["document_index"] == crash_at
    if mode == "redrive":
        assert summary["redrive_count"] == 1
        assert summary["crash"]["attempts_killed"] == 4, "first try and three retries die until the redrive"
        # The job failed once: the local cloud raised the alert the stack's EventBridge rule sends to SNS.
        (alert,) = summary["alerts"]
        assert alert["job_id"] == summary["job_id"] and alert["status"] == "FAILED"
        assert alert["topic_arn"].startswith("arn:aws:sns:") and "JobAlerts" in alert["topic_arn"]
        assert "error: States.ExceedToleratedFailureThreshold" in alert["message"]
        assert f"docagent inspect {summary['job_id']}" in alert["message"]
        assert f"docagent redrive {summary['job_id']} --dry-run" in alert["message"]
        assert summary["stopped_at"]["error"] == "States.ExceedToleratedFailureThreshold"
        assert [doc["index"] for doc in summary["stopped_at"]["documents_failed"]] == [crash_at]
        check_the_trace(cloud, stack_file, summary)
    else:
        assert summary["redrive_count"] == 0
        assert summary["crash"]["attempts_killed"] == 1, "Retry recovers the one killed attempt"
        assert summary["alerts"] == [], "the job never failed: no alert"
    by_format = summary["extraction_accuracy_by_format"]
    assert set(by_format) == set(formats.split(",")), "one entry per format of the corpus"
    assert all(accuracy >= 0.9 for accuracy in by_format.values()), by_format
    assert sum(summary["documents_by_format"].values()) == documents


def check_the_trace(cloud: LocalCloud, stack_file: Path, summary: dict) -> None:
    """`docagent trace` and `inspect` of the redriven job (in this process, against the session cloud): its
    trace shows every document's spans, the crashed document's killed attempts, the redrive and the
    completion."""
    job_id = summary["job_id"]
    trace = operator(cloud.endpoint, stack_file, "trace", job_id)
    assert trace["status"] == "SUCCEEDED" and trace["redrive_count"] == 1
    assert len(trace["documents"]) == summary["documents"]
    for document in trace["documents"]:
        assert document["status"] == "completed", document["document_id"]
        (first, *_) = document["spans"]
        assert {child["step"] for child in first["children"]} >= {"extract", "lookup-known-customer", "store"}
        calls = [
            call
            for attempt in document["spans"]
            for child in attempt["children"]
            for call in child["children"]
            if call["step"] == "model_call"
        ]
        assert len(calls) == 1, "one model call per document, never repeated"
        attributes = calls[0]["attributes"]
        for name in (
            "gen_ai.operation.name",
            "gen_ai.provider.name",
            "gen_ai.request.model",
            "gen_ai.usage.input_tokens",
            "gen_ai.usage.output_tokens",
            "gen_ai.response.finish_reasons",
        ):
            assert name in attributes, (document["document_id"], name)
    (crashed,) = [document for document in trace["documents"] if document["index"] == CRASH_AT["redrive"]]
    assert crashed["killed_attempts"] == 4
    assert [attempt["status"] for attempt in crashed["spans"]] == ["killed"] * 4 + ["completed"]
    assert crashed["completed_after_redrive"] is True
    types = [event["type"] for event in trace["events"]]
    assert (
        types.index("ExecutionFailed") < types.index("ExecutionRedriven") < types.index("ExecutionSucceeded")
    )
    assert {step["step"]: step["status"] for step in trace["steps"]} == dict.fromkeys(
        ("prepare", "report", "actions", "verify"), "completed"
    )
    one = operator(cloud.endpoint, stack_file, "trace", job_id, "--document", crashed["document_id"])
    assert [document["document_id"] for document in one["documents"]] == [crashed["document_id"]]
    inspected = operator(cloud.endpoint, stack_file, "inspect", job_id)
    assert inspected["job_id"] == job_id


def test_batches_of_five_crash_mid_batch_then_redrive_give_each_document_one_result(tmp_path):
    """documents_per_child 5 (ItemBatcher): document 7 dies before its result in every attempt of its batch
    (documents 5-9) until the redrive; the other batch finishes. After the redrive every document has
    exactly one result and no finished model call was repeated (5 and 6 were stored, 7's call durable).
    Two batches tell it (it was four: 20 documents, twice the CPU for two more batches that finish)."""
    summary = demo(
        tmp_path,
        "--documents",
        "10",
        "--documents-per-child",
        "5",
        "--crash-at",
        "7",
        "--crash-mode",
        "redrive",
        "--time-scale",
        "0.1",
        "--formats",
        "txt,md",
    )
    assert summary["status"] == "SUCCEEDED" and summary["verified"] is True
    assert summary["results"] == summary["documents"] == 10
    assert summary["repeated_model_calls"] == 0
    assert summary["redrive_count"] == 1
    assert summary["crash"]["attempts_killed"] == 4  # the batch's first try and its three retries
    assert sorted(doc["index"] for doc in summary["stopped_at"]["documents_failed"]) == [5, 6, 7, 8, 9]
    # 2 batches, 3 retries of the crashed one, its redrive: invocations per batch, not per document.
    assert summary["usage"]["lambda"]["ProcessDocument"]["invocations"] == 2 + 3 + 1
    # Every worker, those replacing the crashed ones too, forked from the fork server (lambdas/forking.py):
    # the deployed functions' environments let it (nothing a preloaded import reads differs).
    # The demo's own cloud measures what the job cost it: the workers' CPU counted once they have exited
    # (the cloud stopped); the parts are rounded to hundredths, the per-document figure computed before.
    cpu = summary["cpu_seconds"]
    assert cpu["workers"] > 0 and cpu["endpoint_process"] > 0
    assert cpu["per_document"] == pytest.approx((cpu["workers"] + cpu["endpoint_process"]) / 10, abs=0.01)
    assert summary["kept"] is None
    if os.environ.get("DOCAGENT_LAMBDA_FORK") != "0":
        workers = summary["usage"]["lambda_workers"]
        assert workers["fresh"] == 0 and workers["forked"] >= 5, workers  # one a function, at least
