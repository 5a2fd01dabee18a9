"""process_document: durable model calls, crash recovery, and per-document rejections."""

from __future__ import annotations

import time

import boto3
import pytest
from aws_lambda_powertools.utilities.idempotency.exceptions import IdempotencyAlreadyInProgressError

from functions import s3_json, storage
from functions.handlers.process_document import handler
from functions.inference.evidence import split
from functions.logic.process_document import process_document
from functions.payloads.document import DocumentResult
from functions.payloads.job import FaultSpec, JobOptions
from functions.payloads.model_calls import ModelCallRecord
from functions.settings import get_settings
from tests.documents import UNKNOWN_CUSTOMER_INVOICE
from tests.fakes import CountingProvider, FakeLambdaContext, SimulatedCrash
from tests.moto_state import build_once
from tests.support import (
    PREFIX,
    SEEDED_REPLIES,
    document_event,
    items,
    prepare,
    process_all,
    put_object,
    seed_documents,
    seeded_provider,
)


def journal(job_id: str, document_id: str) -> list[ModelCallRecord]:
    return s3_json.list_model_calls(job_id, document_id)


@pytest.fixture
def job(cloud):
    def build():
        documents = seed_documents(3)
        prepared = prepare("job-doc")
        return prepared, items(prepared), documents

    return build_once("process_document.job", build)


def test_handler_extracts_a_document(job, load_event):
    prepared, entries, documents = job
    event = load_event("process_document")
    event["job_id"] = prepared.job_id
    event["document"] = entries[0].model_dump(mode="json")

    outcome = handler(event, FakeLambdaContext())

    row = outcome.pop("row")
    assert outcome == {
        "document_id": "doc-00000.txt",
        "status": "extracted",
        "result_key": "jobs/job-doc/results/doc-00000.txt.json",
        "error": None,
    }
    result = s3_json.get_result("job-doc", "doc-00000.txt")
    assert result is not None
    assert row == result.report_row(list(row["fields"])).model_dump(mode="json")  # the row travels along
    assert (row["status"], row["model_call_id"]) == ("extracted", result.model_call_id)
    truth = documents[0].truth
    assert row["fields"] == {
        "customer_id": truth.customer_id,
        "invoice_number": truth.invoice_number,
        "amount": f"{truth.amount:.2f}",
        "currency": truth.currency,
        "category": truth.category,
    }
    assert result.fields == truth.model_dump(mode="json")
    assert (result.class_name, result.classify_call_id) == ("invoice", None)  # one class: no classify call
    assert result.attached["customer"]["customer_id"] == truth.customer_id
    assert [(check.name, check.passed) for check in result.checks] == [("known-customer", True)]
    assert result.versions == prepared.versions
    [call] = journal("job-doc", "doc-00000.txt")
    assert call.call_id == result.model_call_id
    assert (call.model_id, call.purpose, call.class_name, call.retry_count, call.outcome) == (
        "fake-model", "extract", "invoice", 0, "ok",
    )  # fmt: skip
    fields, quotes = split(call.fields)  # the journal keeps the model's quotes beside the fields
    assert fields == result.fields and set(quotes) == set(result.evidence) == set(result.fields)
    assert all(evidence.grounding == "grounded" for evidence in result.evidence.values()), result.evidence
    assert call.input_tokens > 0 and call.output_tokens > 0


def test_same_document_twice_makes_exactly_one_model_call(job):
    prepared, entries, _ = job
    provider = seeded_provider()
    first = process_document(document_event(prepared, entries[1]), FakeLambdaContext(), provider=provider)
    second = process_document(document_event(prepared, entries[1]), FakeLambdaContext(), provider=provider)
    assert first == second
    assert first.status == "extracted"
    assert len(provider.calls) == 1
    assert len(journal("job-doc", entries[1].document_id)) == 1


def test_same_document_twice_without_the_result_file_still_makes_one_model_call(job):
    """Even if the result object were lost, the durable extract step holds the model output."""
    prepared, entries, _ = job
    provider = seeded_provider()
    process_document(document_event(prepared, entries[1]), FakeLambdaContext(), provider=provider)
    boto3.client("s3").delete_object(
        Bucket=prepared.bucket, Key=storage.result_key("job-doc", "doc-00001.txt")
    )
    outcome = process_document(document_event(prepared, entries[1]), FakeLambdaContext(), provider=provider)
    assert outcome.status == "extracted"
    assert len(provider.calls) == 1


def test_killed_between_model_step_and_storing_the_result_retry_reuses_the_model_output(job, monkeypatch):
    prepared, entries, documents = job
    provider = seeded_provider()
    real_put_result = s3_json.put_result

    def dying_put_result(result: DocumentResult) -> str:
        raise SimulatedCrash("killed before the result was stored")

    monkeypatch.setattr(s3_json, "put_result", dying_put_result)
    with pytest.raises(SimulatedCrash):
        process_document(document_event(prepared, entries[2]), FakeLambdaContext(), provider=provider)
    assert s3_json.get_result("job-doc", entries[2].document_id) is None
    assert len(provider.calls) == 1

    monkeypatch.setattr(s3_json, "put_result", real_put_result)
    outcome = process_document(
        document_event(prepared, entries[2], retry_count=1), FakeLambdaContext(), provider=provider
    )

    assert outcome.status == "extracted"
    assert len(provider.calls) == 1  # no second model call
    stored = s3_json.get_result("job-doc", entries[2].document_id)
    assert stored is not None and stored.fields is not None
    assert stored.fields["invoice_number"] == documents[2].truth.invoice_number
    assert len(journal("job-doc", entries[2].document_id)) == 1


def test_in_progress_record_of_a_dead_invocation_blocks_until_its_deadline(job):
    prepared, entries, _ = job
    provider = CountingProvider(SEEDED_REPLIES, crash_on_calls=(1,))
    event = document_event(prepared, entries[0])

    with pytest.raises(SimulatedCrash):  # dies inside the model step, ~1 s before its deadline
        process_document(event, FakeLambdaContext(timeout_ms=1000), provider=provider)
    with pytest.raises(IdempotencyAlreadyInProgressError):
        process_document(event, FakeLambdaContext(), provider=provider)
    assert len(provider.calls) == 1

    time.sleep(1.1)
    outcome = process_document(
        document_event(prepared, entries[0], retry_count=2), FakeLambdaContext(), provider=provider
    )
    assert outcome.status == "extracted"
    assert len(provider.calls) == 2  # the first call never finished, so it had to be made again
    [call] = journal("job-doc", entries[0].document_id)  # only finished calls are journalled
    assert call.retry_count == 2


def test_killed_after_the_model_call_before_the_step_completed_reuses_the_journal(job, env, fake_exit):
    """A crash in the window between the model's answer and the step's COMPLETED record: after the dead
    invocation's deadline the step runs again, finds the journalled call and does not call the model."""
    env.setenv("FAULT_INJECTION_ENABLED", "true")
    get_settings.cache_clear()
    exits = fake_exit
    prepared, entries, _ = job
    provider = seeded_provider()
    options = JobOptions(fault=FaultSpec(point="after_model_call", document_index=1, mode="exit", times=1))
    with pytest.raises(SimulatedCrash):
        process_document(
            document_event(prepared, entries[1], options=options), FakeLambdaContext(timeout_ms=800),
            provider=provider,
        )  # fmt: skip
    assert exits == [137]
    time.sleep(0.9)
    outcome = process_document(
        document_event(prepared, entries[1], options=options, retry_count=1), FakeLambdaContext(),
        provider=provider,
    )  # fmt: skip
    assert outcome.status == "extracted"
    assert len(provider.calls) == 1
    assert len(journal("job-doc", entries[1].document_id)) == 1


def test_an_existing_result_is_returned_without_touching_the_document(job):
    prepared, entries, _ = job
    provider = seeded_provider()
    process_document(document_event(prepared, entries[0]), FakeLambdaContext(), provider=provider)
    boto3.client("s3").delete_object(Bucket=prepared.bucket, Key=entries[0].key)
    outcome = process_document(document_event(prepared, entries[0]), FakeLambdaContext(), provider=provider)
    assert outcome.status == "extracted"


def test_bad_documents_are_rejected_with_their_reason_while_the_others_are_extracted(cloud):
    documents = seed_documents(2)
    put_object(f"{PREFIX}too-large.txt", "Invoice number: X-1\n" + "x" * 20000)
    put_object(f"{PREFIX}latin1.txt", "Invoice for Müller, total 12.00 EUR".encode("latin-1"))
    put_object(f"{PREFIX}empty.txt", b"")
    put_object(f"{PREFIX}blank.txt", "  \n\t\n")
    put_object(f"{PREFIX}unknown-customer.txt", UNKNOWN_CUSTOMER_INVOICE)
    put_object(f"{PREFIX}garbled.txt", "Hello, nothing to see here.")
    put_object(f"{PREFIX}changes.txt", documents[1].text)
    put_object(f"{PREFIX}vanishes.txt", documents[1].text)
    job = prepare("job-mixed")
    put_object(f"{PREFIX}changes.txt", documents[1].text + "edited after listing\n")
    boto3.client("s3").delete_object(Bucket=job.bucket, Key=f"{PREFIX}vanishes.txt")

    replies = {
        **SEEDED_REPLIES,
        UNKNOWN_CUSTOMER_INVOICE: (
            '{"customer_id": "cust-99999", "invoice_number": "INV-2026-00777", "invoice_date": "14.03.2026",'
            ' "amount": "1,234.56", "currency": "eur", "category": "Hardware", "summary": "ACME Supplies"}'
        ),
        "Hello, nothing to see here.": '{"customer_id": null, "summary": "nothing"}',
    }
    outcomes = process_all(job, CountingProvider(replies))

    assert {doc_id: (outcome.status, outcome.error) for doc_id, outcome in outcomes.items()} == {
        "doc-00000.txt": ("extracted", None),
        "doc-00001.txt": ("extracted", None),
        "too-large.txt": ("rejected", "DocumentTooLarge"),
        "latin1.txt": ("rejected", "DocumentNotUtf8"),
        "empty.txt": ("rejected", "DocumentEmpty"),
        "blank.txt": ("rejected", "DocumentEmpty"),
        "unknown-customer.txt": ("rejected", "UnknownCustomer"),
        "garbled.txt": ("rejected", "ExtractionFailed"),
        "changes.txt": ("rejected", "DocumentChanged"),
        "vanishes.txt": ("rejected", "DocumentMissing"),
    }
    stored = {doc_id: s3_json.get_result("job-mixed", doc_id) for doc_id in outcomes}
    results = {doc_id: result for doc_id, result in stored.items() if result is not None}
    assert results.keys() == outcomes.keys()
    assert "over the limit of 16000 bytes" in str(results["too-large.txt"].reason)
    assert "not valid UTF-8" in str(results["latin1.txt"].reason)
    assert "CUST-99999" in str(results["unknown-customer.txt"].reason)
    unknown = results["unknown-customer.txt"]
    assert unknown.fields is not None and unknown.fields["amount"] == "1234.56"  # kept for review, normalised
    assert (unknown.fields["invoice_date"], unknown.fields["category"]) == ("2026-03-14", "hardware")
    assert [(check.name, check.passed, check.error) for check in unknown.checks] == [
        ("known-customer", False, "UnknownCustomer")
    ]
    assert unknown.reason == "customer CUST-99999 is not in the customers table"
    assert "does not match the class's schema" in str(results["garbled.txt"].reason)
    assert "customer_id:" in str(results["garbled.txt"].reason)
    assert "invoice_number: missing" in str(results["garbled.txt"].reason)
    # documents rejected before the model never cost a model call
    for doc_id in ("too-large.txt", "latin1.txt", "empty.txt", "changes.txt", "vanishes.txt"):
        assert journal("job-mixed", doc_id) == []
        assert results[doc_id].model_call_id is None
    [failed_call] = journal("job-mixed", "garbled.txt")
    assert failed_call.outcome == "ExtractionFailed"


def test_malformed_model_output_is_a_durable_rejection(job):
    prepared, entries, _ = job
    provider = CountingProvider(reply='{"customer_id": "CUST-00001", "invoice_number": ')
    outcome = process_document(document_event(prepared, entries[0]), FakeLambdaContext(), provider=provider)
    assert (outcome.status, outcome.error) == ("rejected", "ExtractionFailed")
    result = s3_json.get_result("job-doc", entries[0].document_id)
    assert result is not None and "not valid JSON" in str(result.reason)
    boto3.client("s3").delete_object(Bucket=prepared.bucket, Key=outcome.result_key)
    again = process_document(document_event(prepared, entries[0]), FakeLambdaContext(), provider=provider)
    assert again.error == "ExtractionFailed"
    assert len(provider.calls) == 1  # a finished (bad) model call is not repeated


def test_a_document_of_an_unprepared_job_is_an_error(cloud, load_event):
    event = load_event("process_document")
    event["job_id"] = "never-prepared"
    with pytest.raises(Exception, match="no manifest") as raised:
        handler(event, FakeLambdaContext())
    assert type(raised.value).__name__ == "InvalidJobRequest"
