"""`docagent demo --inference batch` (docs/batch.md): the job's model calls are one Bedrock batch job on the
local cloud, created once; records the local model fails (``--model-faults batch_record_error``) finish
on-demand and the job succeeds with one result per document and no repeated model call."""

from __future__ import annotations

from functions.batch_inference.facts import BATCH_MIN_RECORDS
from tests.integration.test_demo import demo


def test_failed_batch_records_finish_on_demand_and_the_job_succeeds(tmp_path):
    summary = demo(
        tmp_path,
        "--documents",
        str(BATCH_MIN_RECORDS),
        "--inference",
        "batch",
        "--model-faults",
        "batch_record_error=0.2,seed=3",
        "--formats",
        "txt,md",
        "--time-scale",
        "0.1",
    )
    assert summary["status"] == "SUCCEEDED" and summary["verified"]
    assert summary["results"] == BATCH_MIN_RECORDS and summary["repeated_model_calls"] == 0
    [batch_job] = summary["batch_jobs"]  # one batch job for the job
    assert batch_job["status"] == "Completed" and batch_job["error_records"] > 0
    by_mode = summary["model_calls_by_mode"]
    assert by_mode["batch"] == batch_job["success_records"]
    assert by_mode["on_demand"] == batch_job["error_records"]  # each failed record, once, on-demand
    # each call priced at its mode's price (tests/unit/test_batch_cost.py: batch is half), one a document
    assert summary["spend"]["model_calls"] == BATCH_MIN_RECORDS and summary["model_cost_usd"] > 0


def test_a_failed_batch_job_leaves_every_document_to_on_demand(tmp_path):
    summary = demo(
        tmp_path,
        "--documents",
        str(BATCH_MIN_RECORDS),
        "--inference",
        "batch",
        "--model-faults",
        "batch_job=failed",
        "--formats",
        "txt,md",
        "--time-scale",
        "0.1",
    )
    assert summary["status"] == "SUCCEEDED" and summary["verified"]
    assert summary["results"] == BATCH_MIN_RECORDS and summary["repeated_model_calls"] == 0
    [batch_job] = summary["batch_jobs"]
    assert batch_job["status"] == "Failed"
    assert summary["model_calls_by_mode"] == {"on_demand": BATCH_MIN_RECORDS}
