"""A document never fails the job by its length or a model that never answers (issue #49, items 5 and 6), on
moto: a PDF over the default page ceiling is refused before any call; a long packet's page windows continue
across invocations (DocumentInProgress), each window's pages sliced only when its call is made; a document
ProcessDocument's Catch gives up is stored rejected with the error and the reason, its batch's finished
documents kept."""

from __future__ import annotations

import json
from typing import Any

import pytest

from docagent.drills.scaffold import render_pdf_pages
from functions import s3_json
from functions.errors import DocumentInProgress, DocumentTooLarge
from functions.handlers.process_document import handler
from functions.logic.process_document import process_document
from functions.payloads.document import BatchOutcome, DocumentOutcome
from functions.payloads.job import PreparedJob
from functions.reading import sections
from functions.reading.block_limits import DEFAULT_MAX_PAGES, check_page_ceiling
from tests.fakes import FakeLambdaContext
from tests.moto_state import build_once
from tests.support import PREFIX, document_event, items, prepare, put_object, seed_documents
from tests.unit.test_packets import CLAIM, LETTER, LETTER_ON, RECIPE, PageReader, splitting


def test_without_max_pages_a_pdf_over_the_default_ceiling_is_refused_with_the_figure() -> None:
    check_page_ceiling("PDF", DEFAULT_MAX_PAGES, None)  # at the ceiling: read
    with pytest.raises(DocumentTooLarge) as refused:
        check_page_ceiling("PDF", 5000, None)
    assert str(refused.value) == (
        f"the PDF has 5000 pages, over the job's ceiling of {DEFAULT_MAX_PAGES} (the default max_pages: "
        "job.json sets none; set max_pages to read longer documents)"
    )
    check_page_ceiling("PDF", 5000, 10_000)  # a job's own max_pages wins
    with pytest.raises(
        DocumentTooLarge, match=r"^the TIFF image has 301 pages, over the job's ceiling of 300"
    ):
        check_page_ceiling("TIFF image", 301, 300)


@pytest.fixture
def long_packet(cloud_settings: None) -> PreparedJob:
    def build() -> PreparedJob:
        put_object(f"{PREFIX}long-letter.pdf", render_pdf_pages([LETTER] + [LETTER_ON] * 44, title="l"))
        return prepare("job-long-packet", definition=splitting())

    return build_once("long_documents.packet", build)


def test_a_long_packets_windows_continue_in_a_fresh_invocation_without_slicing_the_done_ones(
    long_packet: PreparedJob, monkeypatch: pytest.MonkeyPatch
) -> None:
    sliced: list[int] = []
    slice_pages = sections.pages_of

    def counted(document: Any, first: int, last: int, read: Any) -> Any:
        sliced.append(first)
        return slice_pages(document, first, last, read)

    monkeypatch.setattr(sections, "pages_of", counted)
    [entry] = items(long_packet)
    model = PageReader()
    short = FakeLambdaContext(timeout_ms=4000)  # under a window's need after the first window's call
    with pytest.raises(DocumentInProgress, match=r"s left in this invocation.*pages 21-40 and the rest"):
        process_document(document_event(long_packet, entry), short, provider=model)
    assert (model.asked, sliced) == (["classify-pages"], [1])
    assert s3_json.get_result(long_packet.job_id, entry.document_id) is None

    again = document_event(long_packet, entry, retry_count=1)
    outcome = process_document(again, FakeLambdaContext(), provider=model)
    assert outcome.status == "extracted"
    assert model.asked == ["classify-pages"] * 3 + ["extract"], "no window classified twice"
    assert sliced == [1, 21, 41], "a window classified before is not sliced again"


@pytest.fixture
def packet(cloud: None) -> PreparedJob:
    def build() -> PreparedJob:
        put_object(f"{PREFIX}packet.pdf", render_pdf_pages([CLAIM, LETTER, LETTER_ON, RECIPE], title="p"))
        return prepare("job-short-packet", definition=splitting())

    return build_once("long_documents.short_packet", build)


def test_a_packets_sections_continue_in_a_fresh_invocation_when_time_runs_short(packet: PreparedJob) -> None:
    [entry] = items(packet)
    model = PageReader()
    with pytest.raises(
        DocumentInProgress, match=r"section s0001-0001 and the rest run in a fresh invocation"
    ):
        process_document(document_event(packet, entry), FakeLambdaContext(timeout_ms=4000), provider=model)
    assert model.asked == ["classify-pages"]

    again = document_event(packet, entry, retry_count=1)
    outcome = process_document(again, FakeLambdaContext(), provider=model)
    assert outcome.status == "rejected" and outcome.row is not None and len(outcome.row.sections or []) == 3
    assert model.asked == ["classify-pages", "extract", "extract"], (
        "each call once: the classification reused"
    )


@pytest.fixture
def invoices(cloud: None) -> PreparedJob:
    def build() -> PreparedJob:
        seed_documents(2)
        return prepare("job-give-up")

    return build_once("long_documents.invoices", build)


def cause(message: str, error: str = "ModelUnavailable") -> str:
    return json.dumps({"errorMessage": message, "errorType": error, "stackTrace": ["..."]})


def test_a_document_given_up_is_rejected_with_the_error_and_its_reason(invoices: PreparedJob) -> None:
    first, second = items(invoices)
    done = process_document(document_event(invoices, first), FakeLambdaContext())  # finished before
    event = {
        "action": "give_up",
        "job_id": invoices.job_id,
        "options": invoices.options.model_dump(mode="json"),
        "items": [{"document": entry.model_dump(mode="json")} for entry in (first, second)],
        "failure": {"Error": "ModelUnavailable", "Cause": cause("Bedrock did not answer in time; retried")},
        "retry_count": 0,
        "redrive_count": 0,
    }
    answer = BatchOutcome.model_validate(handler(event, FakeLambdaContext()))
    assert answer.outcomes[0] == done, "a finished document keeps its result"
    given_up = answer.outcomes[1]
    assert (given_up.status, given_up.error) == ("rejected", "ModelUnavailable")
    result = s3_json.get_result(invoices.job_id, second.document_id)
    assert result is not None and result.reason == (
        "the model did not answer on any attempt ProcessDocument's Retry allows: Bedrock did not answer in "
        "time; retried"
    )
    assert given_up.row is not None and given_up.row.status == "rejected"

    one = {**event, "document": event["items"][1]["document"]}  # type: ignore[index]
    del one["items"]
    one["failure"] = {"Error": "DocumentInProgress", "Cause": "not JSON"}
    again = DocumentOutcome.model_validate(handler(one, FakeLambdaContext()))
    assert again == given_up, "stored once: the result stands"
