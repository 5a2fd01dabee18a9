"""`docagent preflight --documents N` (docagent/drills/job_estimate.py): a job's time at the quotas the
config states, bound by the slowest of the model's quotas, the Map's children and Lambda's concurrency; its
Bedrock batch jobs in waves of the in-flight quota; its cost from `docagent cost`'s pricing."""

from __future__ import annotations

import json

import pytest

from docagent.drills.cost import UsageModel, cost_report
from docagent.drills.job_estimate import batch_jobs_needed, job_estimate, load_usage, summary_line
from docagent.operations.context import OperatorError
from docagent.operations.json_shapes import JobEstimate
from stacks.config import load_config
from tests.unit.test_cost import usage


def test_a_million_documents_at_the_default_quotas():
    config = load_config({"max_documents": 1_000_000, "max_concurrency": 0})
    estimate = job_estimate(1_000_000, config, None)
    JobEstimate.model_validate(estimate)  # the documented --json shape
    pace = estimate["on_demand"]["pace"]
    # 2,000,000 TPM / (1,500 in + 800 out x 5 burndown) = 363.6 documents a minute; the Map's MaxConcurrency
    # comes from the same quotas with 20 % headroom (14 children, 3 s a document: 280 a minute): it binds.
    assert pace["bedrock_quotas"] == pytest.approx(363.64) and pace["lambda_concurrency"] == 998 * 20
    assert config.effective_max_concurrency == 14
    assert pace["bound_by"] == "map_concurrency" and pace["documents_per_minute"] == 14 * 60 / 3.0
    assert estimate["on_demand"]["seconds"] == round(1_000_000 / 280 * 60)
    batch = estimate["batch"]
    assert (batch["batch_jobs"], batch["waves"]) == (20, 1)  # 50,000 records a batch job, 20 at once
    # every document at max_document_bytes (50 MB): 74 records fit a 5 GB batch job (base64 + 32 KiB each)
    assert (batch["batch_jobs_at_largest_documents"], batch["waves_at_largest_documents"]) == (13514, 676)
    assert estimate["over_max_documents"] is False and not estimate["cost_measured"]
    # the prices are docagent cost's, both ways
    modes = cost_report(1_000_000, UsageModel((0, 1), {}, {}), config)["inference"]
    assert (estimate["on_demand"]["usd"], batch["usd"]) == (modes["on_demand_usd"], modes["batch_usd"])
    assert batch["usd"] < estimate["on_demand"]["usd"]
    assert "1,000,000 documents: on-demand" in summary_line(estimate)
    # 59.5 h on-demand and at most ~64 h on batch: both within the default 3 days of job_timeout_seconds
    assert estimate["on_demand"]["within_job_timeout"] and batch["within_job_timeout"]
    assert "past job_timeout_seconds" not in estimate["summary"]


def test_a_job_longer_than_its_timeout_says_so():
    config = load_config({"max_concurrency": 5})  # 100 documents a minute: a million is ~167 h
    estimate = job_estimate(1_000_000, config, None)
    assert (
        not estimate["on_demand"]["within_job_timeout"] and estimate["batch"]["within_job_timeout"] is False
    )
    assert "past job_timeout_seconds 259,200 (on-demand and batch): raise it" in estimate["summary"]


def test_the_slowest_of_the_stated_quotas_bounds_the_pace():
    narrow_map = load_config({"max_concurrency": 5, "seconds_per_document": 3.0})
    assert job_estimate(1000, narrow_map, None)["on_demand"]["pace"]["bound_by"] == "map_concurrency"
    few_workers = load_config({"max_concurrency": 0, "lambda_concurrency": 10})
    pace = job_estimate(1000, few_workers, None)["on_demand"]["pace"]
    assert pace["bound_by"] == "lambda_concurrency" and pace["documents_per_minute"] == 8 * 60 / 3.0


def test_batch_jobs_follow_the_records_per_job_and_in_flight_quotas():
    config = load_config({"batch_records_per_job": 10_000, "batch_jobs_in_flight": 3})
    jobs = batch_jobs_needed(100_001, config)
    assert (jobs["batch_jobs"], jobs["waves"]) == (11, 4)
    small = job_estimate(99, config, None)["batch"]
    assert not small["possible"] and small["usd"] is None  # under Bedrock's minimum of 100 records


def test_a_measured_usage_file_prices_the_whole_job(tmp_path):
    model = UsageModel.fit((10, usage(10)), (30, usage(30)))
    path = tmp_path / "usage.json"
    path.write_text(json.dumps(model.to_json()))
    config = load_config({})
    measured = job_estimate(100_000, config, load_usage(str(path)))
    alone = job_estimate(100_000, config, None)
    assert measured["cost_measured"] and measured["on_demand"]["usd"] > alone["on_demand"]["usd"]
    path.write_text("{}")
    with pytest.raises(OperatorError, match="not a usage file"):
        load_usage(str(path))
    with pytest.raises(OperatorError, match="at least 1"):
        job_estimate(0, config, None)
