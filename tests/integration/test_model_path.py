"""The production model path on the local cloud: BedrockConverseProvider over the local Bedrock Runtime, with
its faults switched on while the cloud runs (the admin route `docagent local model-faults` uses)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest

from docagent.drills.local_job import LocalJob
from docagent.localcloud.bedrock.model_faults import ModelFaults, model_faults_of, set_model_faults
from docagent.localcloud.server import LocalCloud
from functions import storage
from stacks import outputs as names
from tests.integration.test_local_job import run_job


@pytest.fixture
def faults(cloud: LocalCloud) -> Iterator[None]:
    """Whatever a test switches on is reset afterwards: the session's cloud serves the other tests too."""
    yield
    set_model_faults(cloud.endpoint, None)


def _attempts(job, job_id: str) -> list[dict]:
    return job.records.read_many(job.records.keys(storage.model_attempts_root(job_id)))


def _model_calls(job, job_id: str) -> list[str]:
    return job.records.keys(storage.model_calls_root(job_id))


def test_throttling_is_ridden_out_by_retry_without_repeating_a_finished_call(cloud, deployed, faults):
    set_model_faults(cloud.endpoint, ModelFaults(throttle=0.5, seed=11))
    job, _ = run_job(cloud, deployed, "model-throttled", documents=12)
    description = job.sfn.describe_execution(executionArn=job.execution_arn)
    assert description["status"] == "SUCCEEDED", description.get("cause")
    assert job.model_path() == "bedrock-converse"
    calls = _model_calls(job, "model-throttled")
    assert len(calls) == 12  # one finished call per document, never repeated
    throttled = [a for a in _attempts(job, "model-throttled") if a["error"] == "ModelThrottled"]
    served = model_faults_of(cloud.endpoint)["stats"]
    assert throttled and len(throttled) == served["throttled"]  # every attempt journalled
    assert all(attempt["retryable"] for attempt in throttled)


def test_a_model_without_access_stops_the_job_fast_and_inspect_says_what_to_do(
    cloud, deployed, faults, docagent
):
    deployed_job = LocalJob.on(cloud.endpoint, deployed, "model-denied")
    configuration = deployed_job.records.function_configuration(
        names.function_name_output(names.PROCESS_DOCUMENT)
    )
    model_id = configuration["Environment"]["Variables"]["MODEL_ID"]
    # every model the functions may call: the default definition's cascade reads with its cheap one first
    models = json.loads(configuration["Environment"]["Variables"]["MODELS_ALLOWED"])
    assert model_id in models
    set_model_faults(cloud.endpoint, ModelFaults(deny=models))
    documents = 20  # twice MaxConcurrency (10): one failing call per document would show
    job, _ = run_job(cloud, deployed, "model-denied", documents=documents)
    assert job.status() == "FAILED"
    refused = _attempts(job, "model-denied")
    state_machine = deployed.outputs["StateMachineArn"]
    definition = job.sfn.describe_state_machine(stateMachineArn=state_machine)["definition"]
    max_concurrency = json.loads(definition)["States"]["ReviewDocuments"]["MaxConcurrency"]
    # Bounded by the children already in flight, not one failing call per document.
    assert 1 <= len(refused) <= max_concurrency < documents
    assert {attempt["error"] for attempt in refused} == {"ModelAccessDenied"}
    assert model_faults_of(cloud.endpoint)["stats"]["access_denied"] == len(refused)

    code, report = docagent("inspect", "model-denied")
    assert code == 1
    # `status` and `inspect` count the failed job alike (test_cli_concurrency.py's own 16-document job of a
    # denied model until 2026-12-07)
    code, status = docagent("status", "model-denied")
    assert code == 1, status
    shown, counts = status["documents"], report["documents"]
    assert shown["failed"] >= 1, shown
    assert (shown["total"], shown["succeeded"], shown["failed"], shown["pending"]) == (
        counts["total"],
        counts["committed"],
        counts["failed"],
        counts["pending"],
    ), (shown, counts)
    assert shown["succeeded"] + shown["failed"] + shown["pending"] == shown["total"]
    assert report["model_breaker"]["error"] == "ModelAccessDenied"
    assert "ModelAccessDenied" in report["next_step"] and "first-time-use form" in report["next_step"]
    assert "docagent redrive model-denied" in report["next_step"]

    set_model_faults(cloud.endpoint, None)  # the operator enabled model access
    code, redriven = docagent("redrive", "model-denied")
    assert code == 0 and redriven["model_breaker_cleared"] is True
    deadline = time.time() + 240
    while job.status() == "RUNNING" and time.time() < deadline:
        time.sleep(0.2)
    assert job.status() == "SUCCEEDED"
    assert len(_model_calls(job, "model-denied")) == documents


def test_a_document_longer_than_the_context_window_is_rejected_and_the_job_succeeds(
    cloud, deployed, faults, docagent, documents_dir
):
    """Bedrock's length refusal is about one document: that document is rejected DocumentTooLong, every other
    one is extracted, the job SUCCEEDS and the model breaker stays closed (the local endpoint estimates the
    tokens and answers as Bedrock does)."""
    folder = documents_dir(5, name="too-long")
    ordinary = sorted(path.name for path in folder.iterdir())
    words = " ".join(f"line{index} of the appendix" for index in range(60_000))  # ~1.4 MB: ~350,000 tokens
    (folder / "appendix.txt").write_text(ordinary_invoice(folder) + "\n" + words)
    assert len((folder / "appendix.txt").read_bytes()) < 4_500_000, "under the size limit: only too long"
    code, started = docagent("start", "--job-id", "too-long", "--from-dir", str(folder), "--wait")
    assert code == 0 and started["final"]["status"] == "SUCCEEDED", started
    assert started["final"]["documents"]["rejected"] == 1 and started["final"]["documents"]["failed"] == 0
    code, report = docagent("inspect", "too-long", "--all")
    results = {doc["key"].rsplit("/", 1)[-1]: doc["result"] for doc in report["document_details"]}
    assert results["appendix.txt"]["status"] == "rejected"
    assert results["appendix.txt"]["error"] == "DocumentTooLong"
    assert "Input is too long for requested model." in results["appendix.txt"]["reason"]
    assert {name: results[name]["status"] for name in ordinary} == dict.fromkeys(ordinary, "extracted")
    assert report.get("model_breaker") is None, "the breaker stays closed"
    assert model_faults_of(cloud.endpoint)["stats"]["too_long"] == 1, "one call, not retried nor redriven"


def ordinary_invoice(folder) -> str:
    return sorted(folder.iterdir())[0].read_text()


def test_preflight_against_the_local_cloud_prints_every_check(cloud, deployed, faults, docagent):
    code, report = docagent("preflight", "--invoke")
    checked = [check["name"] for check in report["checks"]]
    assert checked == [
        "credentials",
        "bootstrap",
        "model_lifecycle",
        "model_offered",
        "model_access",
        "batch_inference",  # skipped: the local Bedrock runs batch jobs of any model id
        "powertools_layer",
        "lambda_concurrency",
        "bedrock_quotas",
        "stack_outputs",
        "reference_data",  # the customers table: a warning when empty, never a failure
    ]
    assert (code, report["ok"], report["target"]) == (0, True, "local")
    by_name = {check["name"]: check for check in report["checks"]}
    assert "answered" in by_name["model_access"]["detail"]  # one tiny Converse call, over the local Bedrock
    assert "StateMachineArn" in by_name["stack_outputs"]["detail"]

    set_model_faults(cloud.endpoint, ModelFaults(deny=[report["model_id"]]))
    code, report = docagent("preflight", "--invoke")
    denied = next(check for check in report["checks"] if check["name"] == "model_access")
    assert (code, report["ok"], denied["status"]) == (1, False, "fail")
    assert "first-time-use form" in denied["fix"] and "aws-marketplace:Subscribe" in denied["fix"]
