"""`docagent inspect` and `docagent redrive` on a job whose worker died at one document.

The crash drill: 12 documents, document 8's worker is killed (os._exit, Runtime.ExitError) before it stores
its result, on every attempt until the execution is redriven; the Map Run then fails with
States.ExceedToleratedFailureThreshold.
"""

from __future__ import annotations

import json

from docagent.kit.loader import read_bundle
from functions.storage import drift_key
from tests.support import EXAMPLES

# 12 documents (was 30): documents before and after the crashed one; the size is not the point.
DOCUMENTS = 12
CRASH_INDEX = 8
CRASHED = f"doc-{CRASH_INDEX:05d}.txt"
FAULT = {"point": "before_store_result", "document_index": CRASH_INDEX, "mode": "exit", "until_redrive": 1}


def set_model_id(aws, function: str, model_id: str) -> str:
    """Change the deployed function's MODEL_ID (as deploying another model would); returns the old. (The
    prompts are the job's pinned definition, published data: a deploy does not change them.)"""
    lambda_client = aws("lambda")
    variables = lambda_client.get_function_configuration(FunctionName=function)["Environment"]["Variables"]
    previous = variables["MODEL_ID"]
    lambda_client.update_function_configuration(
        FunctionName=function, Environment={"Variables": {**variables, "MODEL_ID": model_id}}
    )
    return str(previous)


def assert_crash_report(report: dict, job_id: str) -> None:
    """The recovery report of the crashed job names the document, the failed step and the fault."""
    assert report["stopped"]["state"] == "ReviewDocuments"
    assert report["stopped"]["error"] == "States.ExceedToleratedFailureThreshold"
    documents = {doc["document_id"]: doc for doc in report["document_details"]}
    crashed = documents.pop(CRASHED)
    assert crashed["index"] == CRASH_INDEX and crashed["status"] == "failed"
    assert crashed["error"]["error"] == "Runtime.ExitError"
    assert "RequestId" in crashed["error"]["cause"], "the runtime's report of the dead worker"
    assert crashed["active_step"] == "store_result", "it died after its lookup check, before storing"
    assert crashed["last_committed"] == "lookup-known-customer"
    # the default definition's cascade lists the strong model's step; its grounding asked for none
    steps = {"extract": "COMPLETED", "escalate": None, "lookup-known-customer": "COMPLETED"}
    assert crashed["steps"] == steps
    assert crashed["retries"]["policy"]["max_attempts"] == 3
    assert [call["prompt_version"] for call in crashed["model_calls"]] == [
        f"invoices@{read_bundle(EXAMPLES / 'invoices').sha256[:12]}"
    ]
    assert len(documents) == DOCUMENTS - 1
    assert all(doc["status"] == "committed" for doc in documents.values())
    assert all(doc["last_committed"] == "result_stored" for doc in documents.values())
    assert report["documents"]["committed"] == DOCUMENTS - 1 and report["documents"]["failed"] == 1
    assert report["left"]["documents"] == [CRASHED]
    assert report["left"]["states"][0] == "ReviewDocuments"
    assert report["last_committed_boundary"] == "prepared"
    assert report["next_boundary"] == {
        "name": "documents",
        "detail": f"{DOCUMENTS - 1} of {DOCUMENTS} documents committed",
    }
    assert report["external_effects"]["model_calls"]["count"] == DOCUMENTS
    assert report["external_effects"]["actions"] == []
    assert f"docagent redrive {job_id}" in report["next_step"]


def assert_recovered_report(after: dict) -> None:
    """After the redrive: who resumed it, what was replayed, nothing left, the drift on record."""
    assert after["last_committed_boundary"] == "verified"
    resumed = next(doc for doc in after["document_details"] if doc["document_id"] == CRASHED)
    assert resumed["status"] == "committed" and resumed["resumed_by"].startswith("Map Run redrive 1")
    assert any("reused" in line for line in resumed["replayed"])
    assert after["external_effects"]["model_calls"] == {
        **after["external_effects"]["model_calls"],
        "count": DOCUMENTS,
        "repeated": 0,
    }
    assert [redrive["kind"] for redrive in after["resumed"]["redrives"]] == ["execution", "map_run"]
    assert after["left"]["documents"] == [] and after["drift"]["events"][0]["outcome"] == "redriven"
    assert any(item["subject"] == "PrepareJob" for item in after["replayed"])
    [ticket] = after["external_effects"]["actions"]
    assert (ticket["name"], ticket["outcome"]) == ("ticket", "performed")


def test_inspect_names_the_crashed_document_and_redrive_runs_only_it(
    docagent, aws, deployed, documents_dir, cloud
):
    """Also what the workers ran (test_local_job.py's own crashed 10-document job, redriven with the AWS CLI,
    until 2026-12-07; the AWS CLI's redrive is test_approval.py's): only the crashed document again, one
    ticket."""
    job_id = "cli-crash"
    code, started = docagent(
        "start",
        "--job-id",
        job_id,
        "--from-dir",
        str(documents_dir(DOCUMENTS)),
        "--fault",
        json.dumps(FAULT),
        "--wait",
    )
    assert code == 1, started
    assert started["final"]["status"] == "FAILED"
    assert started["final"]["error"] == "States.ExceedToleratedFailureThreshold"

    # The recovery report, from durable records only.
    code, report = docagent("inspect", job_id)
    assert code == 1
    assert_crash_report(report, job_id)

    # What a redrive would run: exactly the unfinished document.
    code, plan = docagent("redrive", job_id, "--dry-run")
    assert code == 0 and plan["eligible"] is True and plan["dry_run"] is True and plan["redriven"] is False
    assert [doc["document_id"] for doc in plan["will_run"]["documents"]] == [CRASHED]
    assert plan["will_run"]["states"][:6] == [
        "ReviewDocuments",
        "ReviewWaitRequired",
        "WaitForReview",
        "SummarizeResults",  # the report by fan-in (#44): partials, then BuildReport merges them
        "ReportPartitions",
        "BuildReport",
    ]
    assert "WaitForReview" in plan["will_run"]["conditional_states"]  # only for a job that waits for review
    assert plan["rerun_all"] is False and plan["versions"]["drift"] is False
    assert plan["armed_fault"] is None, "the drill's fault fires only until the first redrive"

    code, logs = docagent("logs", job_id, "--document", CRASHED)
    assert code == 0
    messages = [line["message"] for line in logs["events"]]
    assert 1 <= messages.count("injecting fault") <= 4, "the first try and up to three retries died there"
    assert any("Runtime exited" in line["message"] for line in logs["events"] if line["level"] == "RUNTIME")

    # A deploy with another model: the redrive refuses, unless the drift is allowed (and recorded).
    function = deployed.outputs["ProcessDocumentFunctionName"]
    previous = set_model_id(aws, function, "another-model-v9")
    try:
        code, refused = docagent("redrive", job_id)
        assert code == 2 and refused["eligible"] is False and refused["redriven"] is False
        assert [reason["code"] for reason in refused["reasons"]] == ["VersionDrift"]
        drift = refused["versions"]["differences"]
        assert {
            "field": "model_id",
            "pinned": previous,
            "deployed": "another-model-v9",
            "blocking": True,
        } in drift
        assert (
            aws("stepfunctions").describe_execution(executionArn=plan["execution_arn"])["status"] == "FAILED"
        )

        invocations_before = len(cloud.runtime.invocations_of(function))
        code, redriven = docagent("redrive", job_id, "--allow-version-drift", "--wait")
        assert code == 0, redriven
        assert redriven["redriven"] is True and redriven["final"]["status"] == "SUCCEEDED"
        assert redriven["drift_recorded"] == drift_key(job_id)
    finally:
        set_model_id(aws, function, previous)
    recorded = json.loads(
        aws("s3").get_object(Bucket=deployed.outputs["BucketName"], Key=drift_key(job_id))["Body"].read()
    )
    (event,) = recorded["events"]
    assert event["outcome"] == "redriven" and event["execution_redrive"] == 1
    assert event["differences"][0]["field"] == "model_id"

    rerun = {
        record.event["document"]["index"]
        for record in cloud.runtime.invocations_of(function)[invocations_before:]
    }
    assert rerun == {CRASH_INDEX}, "a document whose result was stored is not run again"

    code, after = docagent("inspect", job_id)
    assert code == 0
    assert_recovered_report(after)

    code, again = docagent("redrive", job_id)
    assert code == 2 and [reason["code"] for reason in again["reasons"]] == ["Succeeded"]
