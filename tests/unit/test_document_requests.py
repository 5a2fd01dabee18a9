"""The requests one document makes (docs/performance.md "Requests per document, fifth pass"): each one of them
is asked for by the durability contract (docs/design.md), and one that was removed fails here if it comes
back."""

from __future__ import annotations

import pytest

from functions import storage
from functions.logic.process_document import process_document
from tests.fakes import FakeLambdaContext
from tests.moto_state import build_once
from tests.support import (
    IDEMPOTENCY_TABLE,
    PREFIX,
    REFERENCE_TABLE,
    RequestLog,
    document_event,
    items,
    prepare,
    seed_documents,
    seeded_provider,
)


@pytest.fixture
def job(cloud):
    def build():
        seed_documents(2)
        prepared = prepare("job-requests")
        return prepared, items(prepared)

    return build_once("document_requests.job", build)


def test_an_invoice_makes_ten_requests_and_each_of_them_is_needed(job) -> None:
    prepared, entries = job
    # the first document of a warm container also reads the job's manifest and definition, once
    process_document(document_event(prepared, entries[0]), FakeLambdaContext(), provider=seeded_provider())
    document_id = entries[1].document_id
    with RequestLog() as log:
        outcome = process_document(
            document_event(prepared, entries[1]), FakeLambdaContext(), provider=seeded_provider()
        )
    assert outcome.status == "extracted"
    result = storage.result_key(prepared.job_id, document_id)
    [call] = [
        key for operation, key in log.requests if key.startswith(f"jobs/{prepared.job_id}/model-calls/")
    ]
    assert log.requests == [
        ("GetObject", result),  # a result stored before: returned, the document not processed again
        ("GetObject", f"{PREFIX}{document_id}"),  # the document, as the manifest pinned it
        ("PutItem", IDEMPOTENCY_TABLE),  # extract: INPROGRESS (the lock around the model call)
        ("ListObjectsV2", "list"),  # the journal: a finished call of a dead attempt is reused, never repeated
        ("GetObject", storage.model_breaker_key(prepared.job_id)),  # the breaker, before the call
        ("PutObject", call),  # the call journalled before its step completes
        ("UpdateItem", IDEMPOTENCY_TABLE),  # extract: COMPLETED
        ("GetItem", REFERENCE_TABLE),  # the lookup check's row (a read step: no INPROGRESS record)
        ("PutItem", IDEMPOTENCY_TABLE),  # lookup-known-customer: COMPLETED, once
        ("PutObject", result),
    ]
