"""A batch job is created once even when the worker dies after creating it, or while the workflow waits for
it, on every attempt until the job is redriven (docs/batch.md, "Crashes"): `docagent demo --inference batch
--crash-point after_batch_submit` (or `after_batch_wait_token`)."""

from __future__ import annotations

import pytest

from docagent.operations.workflow_definition import retry_rule
from functions.batch_inference.facts import BATCH_MIN_RECORDS
from functions.fault_points import fault_point_named
from stacks.config import DocAgentConfig
from stacks.workflow import render_definition
from tests.integration.test_demo import demo


@pytest.mark.parametrize("point", ["after_batch_submit", "after_batch_wait_token"])
def test_a_worker_killed_on_the_batch_path_leaves_one_batch_job_after_the_redrive(tmp_path, point):
    summary = demo(
        tmp_path,
        "--documents",
        str(BATCH_MIN_RECORDS),  # Bedrock's minimum per batch job: the smallest job that submits one
        "--inference",
        "batch",
        "--crash-point",
        point,
        "--formats",
        "txt,md",
        "--time-scale",
        "0.1",
    )
    # Killed on every attempt Retry makes, the job failed in the state (not caught into on-demand) ...
    state = fault_point_named(point).step
    rule = retry_rule(render_definition(DocAgentConfig()), state, "Runtime.ExitError")
    assert rule is not None
    assert summary["crash"]["attempts_killed"] == rule["MaxAttempts"] + 1
    assert summary["stopped_at"]["failed_state"] == state
    # ... and the redrive finished it with the batch job the killed attempts had created or waited for.
    assert summary["status"] == "SUCCEEDED" and summary["verified"]
    [batch_job] = summary["batch_jobs"]  # the local batch API's list: one job, whatever the attempts
    assert batch_job["status"] == "Completed" and batch_job["success_records"] == BATCH_MIN_RECORDS
    assert summary["results"] == BATCH_MIN_RECORDS and summary["repeated_model_calls"] == 0
    assert summary["model_calls_by_mode"] == {"batch": BATCH_MIN_RECORDS}  # every call answered by the batch
