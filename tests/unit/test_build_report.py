from __future__ import annotations

import json
from decimal import Decimal

import boto3

from functions.handlers.build_report import handler
from functions.payloads.job import PreparedJob
from functions.payloads.report import Report
from tests.conftest import read_event
from tests.fakes import FakeLambdaContext
from tests.support import (
    BUCKET,
    PREFIX,
    get_json,
    items,
    prepare,
    process_all,
    put_object,
    seed_documents,
    write_result_files,
)


def mixed_job() -> PreparedJob:
    seed_documents(3)
    put_object(f"{PREFIX}doc-00003.txt", b"")
    put_object(f"{PREFIX}doc-00004.txt", b"\xff\xfe not text")
    job = prepare("job-unit-1")
    return job


def test_report_covers_extracted_and_rejected_documents(cloud, load_event):
    documents = seed_documents(3)
    job = mixed_job()
    process_all(job)
    event = {"job_id": job.job_id, "map_run": {}}

    output = handler(event, FakeLambdaContext())

    assert output == {
        "report_key": "jobs/job-unit-1/report.json",
        "documents": 5,
        "extracted": 3,
        "review": 0,
        "rejected": 2,
    }
    report = Report.model_validate(get_json(output["report_key"]))
    assert [row.document_id for row in report.rows] == [entry.document_id for entry in items(job)]
    assert report.failed == 0
    assert report.rejection_reasons == {"DocumentEmpty": 1, "DocumentNotUtf8": 1}
    assert [(row.document_id, row.error) for row in report.rejected_documents] == [
        ("doc-00003.txt", "DocumentEmpty"), ("doc-00004.txt", "DocumentNotUtf8"),
    ]  # fmt: skip
    assert all(row.reason for row in report.rejected_documents)
    assert report.versions == job.versions
    expected: dict[str, Decimal] = {}
    for document in documents:
        currency = document.truth.currency
        expected[currency] = expected.get(currency, Decimal(0)) + document.truth.amount
    assert report.totals == {
        "amount-by-currency": {name: f"{total:.2f}" for name, total in sorted(expected.items())}
    }
    first = report.rows[0]
    assert (first.class_name, first.fields["customer_id"]) == ("invoice", documents[0].truth.customer_id)
    assert report.map_run.result_files_read is False


def test_report_is_idempotent(cloud):
    job = mixed_job()
    process_all(job)
    event = {"job_id": job.job_id, "map_run": read_event("build_report")["map_run"]}
    s3 = boto3.client("s3")
    first = handler(event, FakeLambdaContext())
    first_body = s3.get_object(Bucket=BUCKET, Key=first["report_key"])["Body"].read()
    second = handler(event, FakeLambdaContext())
    second_body = s3.get_object(Bucket=BUCKET, Key=first["report_key"])["Body"].read()
    assert second == first
    assert second_body == first_body


def test_failed_children_from_the_map_run_result_files_are_attached(cloud, load_event):
    job = mixed_job()
    outcomes = process_all(job)
    s3 = boto3.client("s3")
    s3.delete_object(Bucket=BUCKET, Key=outcomes["doc-00002.txt"].result_key)  # as if its child had failed
    event = load_event("build_report")
    manifest = load_event("map_run_manifest")
    put_object(event["map_run"]["ResultWriterDetails"]["Key"], json.dumps(manifest))
    put_object(manifest["ResultFiles"]["FAILED"][0]["Key"], json.dumps([load_event("map_run_failed_entry")]))
    # SUCCEEDED_0.json is listed but absent, as some interpreters leave it: tolerated.

    output = handler(event, FakeLambdaContext())

    assert (output["documents"], output["extracted"], output["rejected"]) == (5, 2, 2)
    report = Report.model_validate(get_json(output["report_key"]))
    assert report.failed == 1
    [failure] = report.failed_documents
    assert (failure.document_id, failure.status, failure.error) == (
        "doc-00002.txt",
        "FAILED",
        "InjectedFault",
    )
    assert "fault injected" in str(failure.cause)
    row = next(row for row in report.rows if row.document_id == "doc-00002.txt")
    assert (row.status, row.error) == ("failed", "InjectedFault")
    assert report.map_run.map_run_arn == event["map_run"]["MapRunArn"]
    assert (report.map_run.result_files_read, report.map_run.failed) == (True, 1)


def test_a_document_without_result_or_recorded_failure_is_reported_as_failed(cloud):
    job = mixed_job()
    outcomes = process_all(job)
    boto3.client("s3").delete_object(Bucket=BUCKET, Key=outcomes["doc-00000.txt"].result_key)
    output = handler(
        {"job_id": job.job_id, "map_run": read_event("build_report")["map_run"]}, FakeLambdaContext()
    )
    report = Report.model_validate(get_json(output["report_key"]))
    assert [(f.document_id, f.error) for f in report.failed_documents] == [("doc-00000.txt", "NoResult")]


def test_a_map_output_without_result_writer_details_is_tolerated(cloud):
    job = mixed_job()
    process_all(job)
    children = [{"document_id": "doc-00000.txt", "status": "extracted"}]  # the Map's plain output list
    output = handler({"job_id": job.job_id, "map_run": children}, FakeLambdaContext())
    assert (output["documents"], output["extracted"], output["rejected"]) == (5, 3, 2)


def test_rows_come_from_the_result_files_not_from_one_read_per_document(cloud):
    job = mixed_job()
    outcomes = process_all(job)
    map_run = write_result_files(job, outcomes)
    doomed = outcomes["doc-00001.txt"]
    boto3.client("s3").delete_object(
        Bucket=BUCKET, Key=doomed.result_key
    )  # not read: its row is in the files
    output = handler({"job_id": job.job_id, "map_run": map_run.model_dump()}, FakeLambdaContext())
    report = Report.model_validate(get_json(output["report_key"]))
    assert (report.documents, report.extracted, report.rejected, report.failed) == (5, 3, 2, 0)
    assert next(row for row in report.rows if row.document_id == "doc-00001.txt") == doomed.row
    assert (report.map_run.result_files_read, report.map_run.succeeded) == (True, 5)
    assert report.map_run.result_writer_key == map_run.ResultWriterDetails.Key  # type: ignore[union-attr]
