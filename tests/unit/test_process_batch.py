"""process_batch (documents_per_child > 1): durability per document inside a batch."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from functions import s3_json
from functions.errors import ModelThrottled
from functions.handlers.process_document import handler
from functions.logic.build_report import build_report
from functions.logic.process_batch import process_batch, within_budget
from functions.payloads.document import BatchItem, DocumentOutcome, ProcessBatchEvent
from functions.payloads.job import ManifestEntry, PreparedJob
from functions.payloads.report import BuildReportEvent, MapRunInfo, Report
from functions.reading.documents import DocumentInput
from tests.documents import UNKNOWN_CUSTOMER_INVOICE
from tests.fakes import CountingProvider, FakeLambdaContext, SimulatedCrash
from tests.moto_state import build_once
from tests.support import (
    PREFIX,
    SEEDED_REPLIES,
    get_json,
    items,
    prepare,
    put_object,
    seed_documents,
)


class ThrottledOnce(CountingProvider):
    """Throttled on call ``on_call`` (1-based; nothing was made), else the seeded invoices' labels."""

    def __init__(self, on_call: int) -> None:
        super().__init__(SEEDED_REPLIES)
        self._on_call = on_call

    def converse(self, document: DocumentInput, system: str, user: str) -> Any:
        if len(self.calls) + 1 == self._on_call:
            self.calls.append("throttled")
            raise ModelThrottled("Bedrock ThrottlingException: slow down")
        return super().converse(document, system, user)


def batch_event(job: PreparedJob, entries: list[ManifestEntry], retry_count: int = 0) -> ProcessBatchEvent:
    return ProcessBatchEvent(
        job_id=job.job_id,
        options=job.options,
        items=[BatchItem(document=entry) for entry in entries],
        retry_count=retry_count,
    )


def journalled(job: PreparedJob, entries: list[ManifestEntry]) -> list[int]:
    return [len(s3_json.list_model_calls(job.job_id, entry.document_id)) for entry in entries]


@pytest.fixture
def job(cloud: None) -> tuple[PreparedJob, list[ManifestEntry]]:
    def build() -> tuple[PreparedJob, list[ManifestEntry]]:
        seed_documents(5)
        prepared = prepare("job-batch")
        return prepared, items(prepared)

    return build_once("process_batch.job", build)


def test_handler_answers_a_batch_with_one_outcome_per_document_in_order(job, load_event):
    prepared, entries = job
    event = {
        "job_id": prepared.job_id,
        "options": prepared.options.model_dump(mode="json"),
        "items": [{"document": entry.model_dump(mode="json")} for entry in entries[:3]],
        "retry_count": 0,
        "redrive_count": 0,
    }
    output = handler(event, FakeLambdaContext())
    outcomes = [DocumentOutcome.model_validate(item) for item in output["outcomes"]]
    assert [outcome.document_id for outcome in outcomes] == [entry.document_id for entry in entries[:3]]
    for outcome in outcomes:
        stored = s3_json.get_result(prepared.job_id, outcome.document_id)
        assert stored is not None and outcome.row is not None
        assert outcome.row == stored.report_row(list(outcome.row.fields))
    assert journalled(prepared, entries[:3]) == [1, 1, 1]
    assert s3_json.get_result(prepared.job_id, entries[3].document_id) is None  # not in the batch


def test_a_throttled_document_fails_the_batch_and_the_retry_skips_finished_documents(job):
    prepared, entries = job
    provider = ThrottledOnce(on_call=3)
    with pytest.raises(ModelThrottled):
        process_batch(batch_event(prepared, entries), FakeLambdaContext(), provider=provider)
    assert journalled(prepared, entries) == [1, 1, 0, 0, 0]  # two finished, durable; the rest untouched

    batch = process_batch(
        batch_event(prepared, entries, retry_count=1), FakeLambdaContext(), provider=provider
    )

    assert [outcome.status for outcome in batch.outcomes] == ["extracted"] * 5
    assert journalled(prepared, entries) == [1, 1, 1, 1, 1]  # no finished model call repeated
    assert len(provider.calls) == 6  # 5 documents + the throttled attempt, which made nothing


def test_a_crash_mid_batch_resumes_at_the_document_it_killed(job):
    prepared, entries = job
    provider = CountingProvider(SEEDED_REPLIES, crash_on_calls=(2,))
    with pytest.raises(SimulatedCrash):  # dies inside document 1's model step, ~1 s before its deadline
        process_batch(batch_event(prepared, entries), FakeLambdaContext(timeout_ms=1000), provider=provider)
    time.sleep(1.1)  # the dead invocation's in-progress record expires at its deadline

    batch = process_batch(
        batch_event(prepared, entries, retry_count=1), FakeLambdaContext(), provider=provider
    )

    assert {outcome.status for outcome in batch.outcomes} == {"extracted"}
    assert journalled(prepared, entries) == [1, 1, 1, 1, 1]
    assert len(provider.calls) == 6  # only the call cut off mid-flight was made again


def test_a_rejection_stays_its_document_result_and_the_batch_succeeds(cloud):
    seed_documents(2)
    put_object(f"{PREFIX}zz-unknown.txt", UNKNOWN_CUSTOMER_INVOICE)
    prepared = prepare("job-batch-reject")
    entries = items(prepared)
    label = {
        "customer_id": "CUST-99999", "invoice_number": "INV-2026-00777", "invoice_date": "2026-03-14",
        "amount": "1234.56", "currency": "EUR", "category": "hardware", "summary": "ACME Supplies",
    }  # fmt: skip
    provider = CountingProvider({**SEEDED_REPLIES, UNKNOWN_CUSTOMER_INVOICE: label})
    batch = process_batch(batch_event(prepared, entries), FakeLambdaContext(), provider=provider)
    by_id = {outcome.document_id: outcome for outcome in batch.outcomes}
    assert by_id["zz-unknown.txt"].error == "UnknownCustomer"
    assert [by_id[entry.document_id].status for entry in entries[:2]] == ["extracted", "extracted"]


def test_rows_are_dropped_largest_first_until_the_output_fits(job):
    prepared, entries = job
    outcomes = process_batch(batch_event(prepared, entries), FakeLambdaContext()).outcomes
    big = outcomes[1].model_copy(
        update={"row": outcomes[1].row.model_copy(update={"reason": "x" * 5000})}  # type: ignore[union-attr]
    )
    sizes = sum(len(outcome.model_dump_json()) for outcome in outcomes)
    kept = within_budget([outcomes[0], big, *outcomes[2:]], budget=sizes + 100)
    assert kept[1].row is None  # the one large row went
    assert [outcome.row for outcome in kept[:1] + kept[2:]] == [
        outcome.row for outcome in outcomes[:1] + outcomes[2:]
    ]
    assert within_budget(outcomes, budget=sizes) == outcomes  # nothing dropped when it fits


def test_build_report_reads_batched_result_entries_and_fails_only_the_unfinished_documents(job):
    """Rows come from a succeeded batch's outcomes; a failed batch fails only its unfinished documents."""
    prepared, entries = job
    done = process_batch(batch_event(prepared, entries[:3]), FakeLambdaContext())
    process_batch(
        batch_event(prepared, entries[3:4]), FakeLambdaContext()
    )  # finished before its batch failed
    folder, arn = "map-runs/run-b/", "arn:aws:states:us-east-1:123456789012:mapRun:DocumentReview/documents:b"

    def child_input(batch: list[ManifestEntry]) -> str:
        batch_input = {"job_id": prepared.job_id, "options": prepared.options.model_dump(mode="json")}
        return json.dumps(
            {"Items": [{"document": e.model_dump(mode="json")} for e in batch], "BatchInput": batch_input}
        )

    succeeded = [{"Input": child_input(entries[:3]), "Output": done.model_dump_json(), "Status": "SUCCEEDED"}]
    failed = [
        {
            "Input": child_input(entries[3:]),
            "Error": "ModelThrottled",
            "Cause": "slow down",
            "Status": "FAILED",
        }
    ]
    put_object(f"{folder}SUCCEEDED_0.json", json.dumps(succeeded), bucket=prepared.bucket)
    put_object(f"{folder}FAILED_0.json", json.dumps(failed), bucket=prepared.bucket)
    files = {
        "SUCCEEDED": [{"Key": f"{folder}SUCCEEDED_0.json"}],
        "FAILED": [{"Key": f"{folder}FAILED_0.json"}],
    }
    put_object(f"{folder}manifest.json", json.dumps({"ResultFiles": files}), bucket=prepared.bucket)
    map_run = MapRunInfo.model_validate(
        {
            "MapRunArn": arn,
            "ResultWriterDetails": {"Bucket": prepared.bucket, "Key": f"{folder}manifest.json"},
        }
    )

    summary = build_report(BuildReportEvent(job_id=prepared.job_id, map_run=map_run))

    report = Report.model_validate(get_json(summary.report_key, prepared.bucket))
    assert [row.status for row in report.rows] == ["extracted"] * 4 + ["failed"]
    [failure] = report.failed_documents
    assert (failure.document_id, failure.error) == (entries[4].document_id, "ModelThrottled")
    assert (report.map_run.succeeded, report.map_run.failed) == (1, 1)  # children, not documents
