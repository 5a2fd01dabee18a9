from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from pydantic import ValidationError

from functions.models import DocumentResult, ExtractedFacts, JobRequest, JobVersions
from tests.conftest import read_event

FACTS = {
    "customer_id": "cust-00042",
    "invoice_number": " INV-2026-00042 ",
    "invoice_date": "2026-03-14",
    "amount": "1,234.5",
    "currency": "eur",
    "category": "Hardware",
    "summary": "Hardware invoice",
}


def test_job_request_event_is_valid():
    request = JobRequest.model_validate(read_event("job_request"))
    assert request.prefix == "incoming/batch-1/"
    assert request.options.fault is None


@pytest.mark.parametrize(
    ("request_data", "message"),
    [
        ({"job_id": "j1"}, "exactly one of 'prefix' or 'documents'"),
        ({"job_id": "j1", "prefix": "a/", "documents": ["a/x"]}, "exactly one of 'prefix' or 'documents'"),
        ({"job_id": "j1", "prefix": "incoming"}, "must end with '/'"),
        ({"job_id": "j1", "documents": ["a", "a"]}, "same key more than once"),
        ({"job_id": "bad id!", "prefix": "a/"}, "String should match pattern"),
        ({"job_id": "x" * 81, "prefix": "a/"}, "String should match pattern"),
        ({"job_id": "j1", "prefix": "a/", "colour": "red"}, "Extra inputs are not permitted"),
        ({"job_id": "j1", "prefix": "a/", "options": {"fault": {"point": "nowhere"}}}, "fault.point"),
    ],
)
def test_job_request_validation(request_data, message):
    with pytest.raises(ValidationError, match=message):
        JobRequest.model_validate(request_data)


def test_extracted_facts_are_normalised():
    facts = ExtractedFacts.model_validate(FACTS)
    assert facts.customer_id == "CUST-00042"
    assert facts.invoice_number == "INV-2026-00042"
    assert facts.invoice_date == dt.date(2026, 3, 14)
    assert facts.amount == Decimal("1234.50")
    assert facts.currency == "EUR"
    assert facts.category == "hardware"
    assert facts.model_dump(mode="json")["amount"] == "1234.50"
    assert ExtractedFacts.model_validate(facts.model_dump(mode="json")) == facts


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("1.234,56", "1234.56"), ("EUR", None), (12.5, "12.50"), ("12,50", "12.50"), ("1,234", "1234.00")],
)
def test_amount_formats(raw, expected):
    data = {**FACTS, "amount": raw}
    if expected is None:
        with pytest.raises(ValidationError, match="amount"):
            ExtractedFacts.model_validate(data)
    else:
        assert ExtractedFacts.model_validate(data).model_dump(mode="json")["amount"] == expected


@pytest.mark.parametrize(
    ("field", "value"), [("category", "groceries"), ("currency", "EURO"), ("invoice_date", "14/03/2026")]
)
def test_extracted_facts_reject_invalid_fields(field, value):
    with pytest.raises(ValidationError, match=field):
        ExtractedFacts.model_validate({**FACTS, field: value})


def test_document_result_status_must_be_consistent():
    base = {
        "job_id": "j1", "document_id": "d1", "key": "k", "index": 0, "processed_at": "2026-11-29T10:00:00Z",
        "versions": JobVersions(model_id="m", prompt_version="p", prompt_sha256="0" * 64, code_version="c",
                                created_at="2026-11-29T10:00:00Z"),
    }  # fmt: skip
    with pytest.raises(ValidationError, match="extracted result needs facts"):
        DocumentResult.model_validate({**base, "status": "extracted"})
    with pytest.raises(ValidationError, match="rejected result needs an error"):
        DocumentResult.model_validate({**base, "status": "rejected"})
    rejected = DocumentResult.model_validate({**base, "status": "rejected", "error": "DocumentEmpty"})
    assert rejected.error == "DocumentEmpty"
