"""`docagent demo --inference batch` (docs/batch.md) with a worker killed on the batch path: a batch job is
created once even when the worker dies after creating it, or while the workflow waits for it, on every attempt
until the job is redriven ("Crashes"); and what the batch job did not answer finishes on-demand, once: records
the local model fails (``--model-faults batch_record_error``), or every record when the batch job fails
(``batch_job=failed``).

A run is 100 documents a batch job, about 15 s of CPU: Bedrock refuses a batch job under the model's quota
"Minimum number of records per batch inference job" (User Guide, "Code example for batch inference", looked
up 2026-12-07; 100 in the quotas table: functions/batch_inference/facts.py), and so does the local batch API.
So each run tells several stories. One is a job split into two batch jobs (200 documents, 100 records per
batch job: the local batch API refuses a batch job over that many as Bedrock's quota does), its worker killed
at every submission: each part's batch job is created once (docs/batch.md, "A million documents"), and the
records the batch jobs fail finish on-demand, once. The other is killed while waiting for a batch job that
fails every record. Two runs: a job arms one fault point. The second is not a job on the session cloud: its
waits (five attempts' backoff, the batch job) at the session cloud's time scale (0.25, against the demo's
0.1) cost more CPU than a cloud of its own (2026-12-07: 21.7 s alone, 25.0 s on the session cloud).
"""

from __future__ import annotations

from typing import Any

from docagent.operations.workflow_definition import retry_rule
from functions.batch_inference.facts import BATCH_MIN_RECORDS
from functions.durability.fault_points import fault_point_named
from stacks.config import DocAgentConfig
from stacks.workflow import render_definition
from tests.integration.test_demo import demo


def batch_demo(
    tmp_path: Any, point: str, faults: str, documents: int = BATCH_MIN_RECORDS, *extra: str
) -> dict[str, Any]:
    summary = demo(
        tmp_path,
        "--documents",
        str(documents),
        "--inference",
        "batch",
        "--crash-point",
        point,
        "--model-faults",
        faults,
        "--formats",
        "txt,md",
        "--time-scale",
        "0.1",
        *extra,
    )
    # Killed on every attempt Retry makes (in each child of BatchJobs: one a part), the job failed in the
    # state (not caught into on-demand) ...
    state = fault_point_named(point).step
    rule = retry_rule(render_definition(DocAgentConfig()), state, "Runtime.ExitError")
    assert rule is not None
    parts, attempts = len(summary["batch_jobs"]), rule["MaxAttempts"] + 1
    # The first child out of attempts fails the Map Run, which stops the others wherever they are (and the
    # redrive runs them again): one part's attempts at least, every part's at most.
    killed = summary["crash"]["attempts_killed"]
    assert killed == attempts if parts == 1 else attempts <= killed <= parts * attempts
    assert summary["stopped_at"]["failed_state"] == "BatchJobs"  # the Map whose children hold the state
    # ... and the redrive finished it with the batch jobs the killed attempts had created or waited for.
    assert summary["status"] == "SUCCEEDED" and summary["verified"]
    assert summary["results"] == documents and summary["repeated_model_calls"] == 0
    # each call priced at its mode's price (tests/unit/test_batch_cost.py: batch is half), one a document
    assert summary["spend"]["model_calls"] == documents and summary["model_cost_usd"] > 0
    return summary


def test_killed_while_waiting_for_a_batch_job_that_fails_every_document_finishes_on_demand(tmp_path):
    summary = batch_demo(tmp_path, "after_batch_wait_token", "batch_job=failed")
    [batch_job] = summary["batch_jobs"]
    assert batch_job["status"] == "Failed"
    assert summary["model_calls_by_mode"] == {"on_demand": BATCH_MIN_RECORDS}


def test_two_batch_jobs_killed_at_each_submission_are_created_once_and_failed_records_run_on_demand(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("LOCAL_BATCH_MAX_RECORDS", str(BATCH_MIN_RECORDS))  # the local quota: 100 a job
    documents = 2 * BATCH_MIN_RECORDS
    summary = batch_demo(
        tmp_path,
        "after_batch_submit",
        "batch_record_error=0.2,seed=3",
        documents,
        "--batch-records-per-job",
        str(BATCH_MIN_RECORDS),
    )
    parts = summary["batch_jobs"]  # the local batch API's list: one job a part, whatever the attempts
    assert [part["status"] for part in parts] == ["Completed", "Completed"]
    assert all(part["success_records"] + part["error_records"] == BATCH_MIN_RECORDS for part in parts)
    failed = sum(part["error_records"] for part in parts)
    assert failed > 0
    assert summary["model_calls_by_mode"] == {
        "batch": documents - failed,
        "on_demand": failed,  # each failed record, once, on-demand
    }
