"""The product's real synthesized workflow runs on the local cloud, and recovers from a killed worker."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
import uuid
from typing import Any

import moto.s3.models
import pytest

from docagent.drills.demo_corpus import extraction_accuracy, seed_inputs
from docagent.drills.local_job import LocalJob
from docagent.localcloud.bedrock.model_faults import ModelFaults, set_model_faults
from docagent.localcloud.server import CloudWatchLogsSink, LocalCloud
from functions.payloads.fan_in import map_run_label
from tests.integration.conftest import aws_cli
from tests.support import wait_for_execution


def run_job(
    cloud: LocalCloud,
    deployed,
    job_id: str,
    documents: int,
    *,
    options: dict[str, Any] | None = None,
    during=None,
) -> tuple[LocalJob, dict[str, Any]]:
    job = LocalJob.on(cloud.endpoint, deployed, job_id)
    prefix = f"incoming/{job_id}/"
    truth = seed_inputs(job, documents, prefix)
    request: dict[str, Any] = {"job_id": job_id, "prefix": prefix}
    if options:
        request["options"] = options
    job.start(request)
    if during:
        during(job)
    wait_for_execution(job.sfn, job.execution_arn, timeout=240)
    return job, truth


@pytest.fixture(scope="module")
def clean_job(cloud: LocalCloud, deployed) -> tuple[LocalJob, dict[str, Any], dict[str, dict[str, int]]]:
    """One clean 24-document job, its truth and the endpoint's count of its requests: what the product's
    workflow does (the first test) and what the standard AWS CLI reads of it (the second) are one run."""
    cloud.requests.reset()
    # Its own id each setup: xdist may split the module's tests and set the fixture up again on one cloud.
    job, truth = run_job(cloud, deployed, f"integration-clean-{uuid.uuid4().hex[:6]}", documents=24)
    return job, truth, cloud.requests.snapshot()  # the job's own requests: the operator's are marked


def test_a_job_runs_through_the_synthesized_workflow(clean_job, docagent):
    job, truth, requests = clean_job
    description = job.sfn.describe_execution(executionArn=job.execution_arn)
    assert description["status"] == "SUCCEEDED", description.get("cause")
    output = json.loads(description["output"])
    assert output["verification"]["verified"] is True
    job.records.refresh()
    results = list(job.records.results.values())
    assert len(results) == 24 and all(result.status == "extracted" for result in results)
    assert extraction_accuracy(results, truth) >= 0.95
    assert len(job.tickets()) == 1
    assert len(job.records.keys(f"jobs/{job.job_id}/model-calls/")) == 24
    report = job.records.read_json(output["report"]["report_key"])
    assert report["documents"] == 24
    # The endpoint counted the job's requests by service and operation: one invocation per document and per
    # job step (PrepareJob, one ListDocuments, SealJob, the report's SummarizeResults, one ReportPartitions
    # child and BuildReport, ticket, one VerifyPartitions child and VerifyJob), two version listings (the
    # bucket check, one page that pins the documents), a result and a journal record written per document.
    assert requests["lambda"]["Invoke"] == 24 + 9
    assert requests["s3"]["ListObjectVersions"] == 2
    assert requests["s3"]["PutObject"] >= 2 * 24
    assert requests["dynamodb"]["GetItem"] >= 24  # the customer lookups
    # A job without require_approval never waits (test_approval.py's own job until 2026-12-07): no
    # RequestApproval, no approval record, none in the report, and `approve` finds nothing to decide.
    history = job.sfn.get_execution_history(executionArn=job.execution_arn, maxResults=1000)["events"]
    entered = [
        event["stateEnteredEventDetails"]["name"] for event in history if "stateEnteredEventDetails" in event
    ]
    assert "RequestApproval" not in entered and "RunActions" in entered
    assert job.records.keys(f"jobs/{job.job_id}/approval.json") == []
    assert report["approval"] is None
    code, out = docagent("approve", job.job_id)
    assert code == 3 and "no approval request" in out["error"]
    code, out = docagent("reject", "no-such-job", "--reason", "x")
    assert code == 3


def test_standard_aws_cli_reads_the_execution(cloud: LocalCloud, deployed, clean_job):
    job = clean_job[0]  # the clean job's execution (it ran its own 5-document job before 2026-12-07)
    described = aws_cli(cloud, "stepfunctions", "describe-execution", "--execution-arn", job.execution_arn)
    assert described["status"] == "SUCCEEDED"
    history = aws_cli(cloud, "stepfunctions", "get-execution-history", "--execution-arn", job.execution_arn)
    types = [event["type"] for event in history["events"]]
    assert "MapRunStarted" in types and types[-1] == "ExecutionSucceeded"
    map_runs = aws_cli(cloud, "stepfunctions", "list-map-runs", "--execution-arn", job.execution_arn)[
        "mapRuns"
    ]
    # The review's Map Run, then the report's and the verification's fan-in (one partition each).
    labels = sorted(map_run_label(run["mapRunArn"]) for run in map_runs)
    assert labels == ["documents", "report-partitions", "verify-partitions"]
    started = aws_cli(
        cloud,
        "stepfunctions",
        "start-execution",
        "--state-machine-arn",
        deployed.outputs["StateMachineArn"],
        "--name",
        "integration-cli-refused",
        "--input",
        json.dumps({"job_id": "integration-cli-refused", "prefix": "nothing-here/"}),
    )
    assert started["executionArn"].endswith(":integration-cli-refused")


def _kill_the_worker_of(cloud: LocalCloud, function: str, index: int, killed: list[int]) -> None:
    """SIGKILL the worker running document ``index`` of ``function``, if one does; its pid into ``killed``."""
    for worker in cloud.runtime.workers():
        event = (worker["invocation"] or {}).get("event", {})
        if worker["function"] == function and event.get("document", {}).get("index") == index:
            os.kill(worker["pid"], signal.SIGKILL)
            killed.append(worker["pid"])
            return


def test_workers_killed_mid_document_are_retried_and_a_call_cut_off_is_counted_by_inspect(
    cloud: LocalCloud, deployed, docagent, monkeypatch: pytest.MonkeyPatch
):
    """kill -9 from outside, twice in one job (two jobs until 2026-12-07): document 5's worker while it hangs
    before its model call, document 3's during its model call. Lambda reports Runtime.ExitError and the
    ProcessDocument Retry runs each again; no finished model call is repeated. Issue #49: the call cut off
    leaves no journal record, but the model was called; `inspect` counts it (its span start has no end) and,
    once the retry made it again, as repeated."""
    function = deployed.outputs["ProcessDocumentFunctionName"]
    hanging: list[int] = []
    in_the_call: list[int] = []
    deliver = CloudWatchLogsSink.__call__

    def kill_in_the_call(sink: CloudWatchLogsSink, group: str, stream: str, line: str, *rest: Any) -> None:
        deliver(sink, group, stream, line, *rest)
        if in_the_call or "span start" not in line or '"model_call"' not in line or "doc-00003" not in line:
            return
        _kill_the_worker_of(cloud, function, 3, in_the_call)

    def kill_the_hanging_worker(job: LocalJob) -> None:
        def kill() -> None:
            deadline = time.time() + 60
            while time.time() < deadline and not hanging:
                _kill_the_worker_of(cloud, function, 5, hanging)
                time.sleep(0.05)

        threading.Thread(target=kill, daemon=True).start()

    monkeypatch.setattr(CloudWatchLogsSink, "__call__", kill_in_the_call)
    set_model_faults(cloud.endpoint, ModelFaults(latency=2.0))  # every call is in flight for 2 s
    fault = {"fault": {"point": "before_model_call", "document_index": 5, "mode": "hang", "times": 1}}
    try:
        job, _ = run_job(
            cloud, deployed, "integration-kill", documents=8, options=fault, during=kill_the_hanging_worker
        )
    finally:
        set_model_faults(cloud.endpoint, None)
    assert hanging, "the hanging worker was found and killed"
    assert in_the_call, "the worker was killed during its model call"
    description = job.sfn.describe_execution(executionArn=job.execution_arn)
    assert description["status"] == "SUCCEEDED", description.get("cause")
    job.records.refresh()
    assert len(job.records.results) == 8
    assert len(job.records.keys("jobs/integration-kill/model-calls/")) == 8, "the journal: finished calls"
    assert len(job.tickets()) == 1
    _, report = docagent("inspect", "integration-kill")
    calls = report["external_effects"]["model_calls"]
    assert (calls["count"], calls["unfinished"], calls["repeated"], calls["documents"]) == (9, 1, 1, 8)


def test_a_job_listed_in_several_parts_joins_them_and_reviews_every_document_once(
    cloud: LocalCloud, deployed, monkeypatch
):
    """Small pages and parts (the listing's config lowered on the deployed function, moto's 5 MiB part
    minimum lowered in this process, where the local cloud runs): the listing loops over several
    ListDocuments steps, SealJob joins the parts with UploadPartCopy, and the Map reads the JSONL."""
    function = deployed.outputs["PrepareJobFunctionName"]
    lambda_client = LocalJob.on(cloud.endpoint, deployed, "unused").ctx.client("lambda")
    environment = lambda_client.get_function_configuration(FunctionName=function)["Environment"]["Variables"]
    small = {**environment, "LISTING_PAGE_SIZE": "4", "ITEMS_PART_MIN_BYTES": "1000"}
    monkeypatch.setattr(moto.s3.models, "S3_UPLOAD_PART_MIN_SIZE", 1)
    lambda_client.update_function_configuration(FunctionName=function, Environment={"Variables": small})
    try:
        cloud.requests.reset()
        job, _ = run_job(cloud, deployed, "integration-parts", documents=22)
        requests = cloud.requests.snapshot()
    finally:
        lambda_client.update_function_configuration(
            FunctionName=function, Environment={"Variables": environment}
        )
    description = job.sfn.describe_execution(executionArn=job.execution_arn)
    assert description["status"] == "SUCCEEDED", description.get("cause")
    output = json.loads(description["output"])
    assert output["verification"]["verified"] is True
    manifest = job.records.manifest
    assert manifest is not None and len(manifest.parts) >= 3 and manifest.document_count == 22
    assert manifest.items_key == "jobs/integration-parts/items/items.jsonl"  # the parts joined
    # One UploadPartCopy per part: S3 copies the parts, no item passes through the function.
    assert requests["s3"]["UploadPartCopy"] == len(manifest.parts)
    assert "UploadPart" not in requests["s3"]
    assert requests["lambda"]["Invoke"] > 22 + 6  # several ListDocuments steps
    job.records.refresh()
    results = job.records.results
    assert sorted(results) == sorted(entry.document_id for entry in job.records.entries())
    assert len(results) == 22 and len(job.records.keys("jobs/integration-parts/model-calls/")) == 22
