"""Long PDFs in page windows (docs/design.md, "Page windows"): a 300-page PDF is read window by window,
each window a durable step whose model call is journalled with its window, the windows' fields merged by the
class's schema; a crash between windows never repeats a finished window's call; the page ceiling refuses only
what is beyond it; each block kind is held to its own Converse limit once its format is known."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from fpdf import FPDF
from pypdf import PdfReader

from docagent.drills.document_files import render_scanned_appendix_pdf
from docagent.kit.loader import read_bundle
from docagent.localcloud.bedrock.converse_api import LocalBedrock
from docagent.localcloud.bedrock.labels import Label, label_digests
from functions import s3_json
from functions.batch_inference.input_records import write_record
from functions.batch_inference.payloads import PlanEvent, WriteRecordEvent
from functions.batch_inference.plan import plan
from functions.definition.job_spec import DefinitionBundle
from functions.errors import DocumentInProgress, DocumentTooLarge, DocumentUnreadable
from functions.inference.converse import converse_body
from functions.logic import window_extraction
from functions.logic.process_document import process_document
from functions.logic.window_extraction import WINDOW_MARGIN_SECONDS, windows_of
from functions.payloads.common import MAX_CONVERSE_DOCUMENT_BYTES
from functions.payloads.document import DocumentOutcome
from functions.payloads.job import FaultSpec, JobOptions, PreparedJob
from functions.payloads.model_calls import ModelReply
from functions.reading.block_limits import (
    MAX_CLAUDE_PDF_CALL_BYTES,
    check_document_bytes,
    claude_generation,
    pdf_call_bytes,
)
from functions.reading.documents import DocumentInput, document_input
from functions.reading.page_windows import (
    PageWindow,
    merge_windows,
    plan_windows,
    window_document,
    window_source,
)
from functions.settings import get_settings
from tests import documents as files
from tests.fakes import FakeLambdaContext, SimulatedCrash
from tests.local_model import LocalModel
from tests.support import EXAMPLES, PREFIX, document_event, items, prepare, process_all, put_object

CLASS = "repair-estimate"
PAGES = 300
# Over one call's 100 pages, in six windows: the shorter estimate, for what holds at any number of windows
# (a crash, a short invocation, a classification, a failed window); the 300-page one where its size shows.
SHORTER = 120
LINES = [
    {"description": "Remove damaged laminate", "quantity": 6, "amount": "390.00"},
    {"description": "New laminate flooring", "quantity": 18, "amount": "1080.00"},
    {"description": "Dehumidifier rental", "quantity": 7, "amount": "245.00"},
]
ITEM_PAGES = {PAGES: (4, 150, 290), SHORTER: (4, 60, 116)}  # pages the line items are printed on
FIELDS: dict[str, Any] = {
    "estimate_number": "E-2026-0300",
    "policy_number": "POL-100234",
    "repairer": {"name": "Hansen Byg ApS", "vat_number": "DK12345678"},
    "estimate_date": "2026-03-20",
    "line_items": LINES,
    "total": "1715.00",
    "currency": "EUR",
}


def page_text(page: int, pages: int = PAGES) -> str:
    items = dict(zip(ITEM_PAGES[pages], LINES, strict=True))
    if page == 1:
        return "\n".join(
            [
                "Repair estimate E-2026-0300",
                "Policy POL-100234",
                "Repairer Hansen Byg ApS, VAT DK12345678",
                "Estimate date 2026-03-20",
                "All amounts in EUR",
            ]
        )
    if page in items:
        item = items[page]
        return f"Line: {item['description']}\nQuantity {item['quantity']}\nAmount {item['amount']}"
    if page == pages:
        return "Total 1715.00 EUR"
    return f"Terms and conditions, page {page}: the estimate is valid for 30 days."


def long_pdf(pages: int = PAGES) -> bytes:
    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    for page in range(1, pages + 1):
        pdf.add_page()
        pdf.multi_cell(0, 6, page_text(page, pages if pages in ITEM_PAGES else PAGES))
    return bytes(pdf.output())


def window_ids(pages: int) -> list[str]:
    """The windows of 20 pages a PDF of ``pages`` pages is read in, by id."""
    return [f"p{first:04d}-{min(first + 19, pages):04d}" for first in range(1, pages + 1, 20)]


@pytest.fixture(scope="module")
def long_estimate() -> bytes:
    return long_pdf()


@pytest.fixture(scope="module")
def shorter_estimate() -> bytes:
    """The estimate in 120 pages (six windows), its values on its pages as the 300-page one's on its."""
    return long_pdf(SHORTER)


class WindowModel(LocalModel):
    """The local Bedrock (a window answered from its source's label: a PDF slice by its document
    information, a TIFF window by its first page's note), counting each call's window and images."""

    def __init__(self, labels: dict[bytes, dict[str, Any]], crash_before: int | None = None) -> None:
        super().__init__({})
        self.bedrock.labels.add(
            Label(sha256=digest, class_name=CLASS, fields=fields)
            for data, fields in labels.items()
            for digest in label_digests(data)  # the file's, and an image's first converted page's
        )
        self.windows: list[str] = []
        self.images: list[int] = []
        self.crash_before = crash_before

    def converse(self, document: DocumentInput, system: str, user: str) -> ModelReply:
        source = window_source(document.images[0].data if document.images else document.data)
        if source is not None and source.window.first == self.crash_before:
            self.crash_before = None
            raise SimulatedCrash(f"the process dies before {source.window.label}")
        self.windows.append(source.window.window_id if source else "whole")
        self.images.append(len(document.images))
        return super().converse(document, system, user)


# ------------------------------------------------------------------------------------------ the plan


def test_a_pdf_one_call_takes_is_not_windowed_and_a_longer_one_is_in_windows_of_20() -> None:
    assert plan_windows(100, 4_000_000, MAX_CONVERSE_DOCUMENT_BYTES, None) == []
    windows = plan_windows(300, 40_000, MAX_CONVERSE_DOCUMENT_BYTES, None)
    assert [(w.first, w.last) for w in windows] == [(first, first + 19) for first in range(1, 300, 20)]
    assert [(w.first, w.last) for w in plan_windows(101, 1, MAX_CONVERSE_DOCUMENT_BYTES, 50)] == [
        (1, 50), (51, 100), (101, 101),
    ]  # fmt: skip
    by_bytes = plan_windows(30, MAX_CONVERSE_DOCUMENT_BYTES + 1, MAX_CONVERSE_DOCUMENT_BYTES, None)
    assert [(w.first, w.last) for w in by_bytes] == [(1, 20), (21, 30)], "over a call's bytes: windowed"
    assert (windows[1].window_id, windows[1].step, windows[1].label) == (
        "p0021-0040",
        "extract-w0021",
        "pages 21-40",
    )


def test_a_window_is_a_deterministic_slice_that_names_its_source(long_estimate: bytes) -> None:
    document = document_input(long_estimate, "document-00001", "text")
    window = PageWindow(141, 160, PAGES)
    sliced = window_document(document, window, "ab" * 32, MAX_CONVERSE_DOCUMENT_BYTES)
    assert sliced.data == window_document(document, window, "ab" * 32, MAX_CONVERSE_DOCUMENT_BYTES).data
    assert (sliced.name, sliced.pages, sliced.visual) == ("document-00001", 20, False)
    reader = PdfReader(io.BytesIO(sliced.data))
    assert len(reader.pages) == 20 and "New laminate flooring" in (reader.pages[9].extract_text() or "")
    assert window_source(sliced.data) == window_source(sliced.data) is not None
    source = window_source(sliced.data)
    assert source is not None and (source.sha256, source.window) == ("ab" * 32, window)
    assert window_source(long_estimate) is None and window_source(b"plain text") is None
    with pytest.raises(
        DocumentTooLarge, match=r"pages 141-160 of the PDF are \d+ bytes, over a call's limit of 100"
    ):
        window_document(document, window, "ab" * 32, 100)


def test_a_corrupt_pdf_over_one_call_is_unreadable_not_a_crash() -> None:
    data = long_pdf(150)
    truncated = data[: len(data) // 2]
    document = document_input(truncated, "document-00001", "text")
    assert document.pages > 100, "counted by structure: pypdf cannot read it"
    with pytest.raises(DocumentUnreadable, match=r"the PDF is corrupt: it cannot be cut into page windows"):
        windows_of(document, "ab" * 32, "anthropic.claude-haiku-4-5", None)


def test_the_windows_merge_by_the_schema() -> None:
    schema = json.loads((EXAMPLES / "claims" / "classes" / f"{CLASS}.schema.json").read_text())
    pages = [page_text(page) for page in range(1, 61)]
    first, second = PageWindow(1, 20, 60), PageWindow(21, 40, 60)
    item = {"description": "Remove damaged laminate", "quantity": 6, "amount": "390.00"}
    other = {"description": "Disposal of waste", "quantity": 1, "amount": "85.00"}
    merged = merge_windows(
        [
            (first, {"total": "99.00", "line_items": [item], "currency": "EUR", "_evidence": {
                "total": {"quote": "Total 99.00", "page": 1},
                "line_items[0].amount": {"quote": "Amount 390.00", "page": 4},
                "currency": {"quote": "All amounts in EUR", "page": 1},
            }}),
            (second, {"total": "1715.00", "line_items": [item, other], "currency": "GBP", "_evidence": {
                "total": {"quote": "Terms and conditions, page 25", "page": 5},
                "line_items[1].amount": {"quote": "85.00", "page": 3},
            }}),
        ],
        schema,
        pages,
    )  # fmt: skip
    assert merged["line_items"] == [item, other], "concatenated without the duplicate"
    assert merged["currency"] == "EUR", "grounded on page 1; the second window's GBP is not"
    assert merged["total"] == "99.00", "neither grounds its total: the first window's"
    quotes = merged["_evidence"]
    assert isinstance(quotes, dict)
    assert quotes["line_items[1].amount"] == {"quote": "85.00", "page": 23}, "re-indexed, the document's page"
    assert quotes["line_items[0].amount"] == {"quote": "Amount 390.00", "page": 4}


# ------------------------------------------------------------------------------------------ the job


def outcome_of(
    job: PreparedJob, model: LocalModel, context: FakeLambdaContext | None = None, **kwargs: Any
) -> DocumentOutcome:
    [entry] = [entry for entry in items(job) if entry.document_id == "long.pdf"]
    event = document_event(job, entry, **kwargs)
    default = FakeLambdaContext(timeout_ms=120_000)  # the stack's default function timeout
    return process_document(event, context or default, provider=model)


def test_a_300_page_pdf_is_read_in_windows_and_its_fields_merge(
    cloud_settings: None, estimates_bundle: DefinitionBundle, long_estimate: bytes
) -> None:
    put_object(f"{PREFIX}long.pdf", long_estimate)
    job = prepare("job-windows", definition=estimates_bundle, documents=[f"{PREFIX}long.pdf"])
    model = WindowModel({long_estimate: FIELDS})

    outcome = outcome_of(job, model)

    assert (outcome.status, outcome.error) == ("extracted", None), outcome
    assert model.windows == window_ids(PAGES), "15 windows"
    result = s3_json.get_result(job.job_id, "long.pdf")
    assert result is not None and result.fields is not None
    assert result.fields["line_items"] == FIELDS["line_items"], "each window's items, once, in page order"
    assert result.fields == FIELDS
    assert [window.pages for window in result.windows] == [(f, f + 19) for f in range(1, 300, 20)]
    evidence = result.evidence
    assert (evidence["line_items[1].description"].page, evidence["line_items[1].description"].grounding) == (
        150, "grounded",
    ), "the item on page 150 is quoted from its window and grounded on the document's page"  # fmt: skip
    assert (evidence["line_items[2].amount"].page, evidence["total"].page) == (290, 300)
    calls = s3_json.list_model_calls(job.job_id, "long.pdf")
    assert sorted(call.window or "" for call in calls) == [w for w in model.windows]
    assert result.model_cost_usd is None or result.model_cost_usd >= 0


def test_a_windowed_pdf_of_several_classes_is_classified_by_its_first_window(
    cloud_settings: None, tmp_path: Path, shorter_estimate: bytes
) -> None:
    classes = EXAMPLES / "claims" / "classes"
    (tmp_path / "classes").mkdir()
    job: dict[str, Any] = {"name": "long-claims", "classes": {}}
    for name in (CLASS, "claim-form"):
        shutil.copy(classes / f"{name}.schema.json", tmp_path / "classes")
        job["classes"][name] = {"description": f"A {name}.", "schema": f"classes/{name}.schema.json"}
    (tmp_path / "job.json").write_text(json.dumps(job))
    put_object(f"{PREFIX}long.pdf", shorter_estimate)
    prepared = prepare(
        "job-windows-classes", definition=read_bundle(tmp_path), documents=[f"{PREFIX}long.pdf"]
    )
    model = WindowModel({shorter_estimate: FIELDS})

    outcome = outcome_of(prepared, model)

    assert outcome.status == "extracted"
    assert model.windows[:2] == ["p0001-0020", "p0001-0020"], "classified on the first window, then extracted"
    assert model.windows[1:] == window_ids(SHORTER)
    calls = s3_json.list_model_calls(prepared.job_id, "long.pdf")
    assert sorted((call.purpose, call.window or "") for call in calls)[0] == ("classify", "")
    result = s3_json.get_result(prepared.job_id, "long.pdf")
    assert result is not None and (result.class_name, result.fields) == (CLASS, FIELDS)


def test_a_crash_between_windows_resumes_without_repeating_a_finished_window(
    cloud_settings: None,
    estimates_bundle: DefinitionBundle,
    shorter_estimate: bytes,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    put_object(f"{PREFIX}long.pdf", shorter_estimate)
    job = prepare("job-windows-crash", definition=estimates_bundle, documents=[f"{PREFIX}long.pdf"])
    model = WindowModel({shorter_estimate: FIELDS}, crash_before=61)
    monkeypatch.setattr(window_extraction, "WINDOW_CALL_SECONDS", 0)  # windows in a 0.8 s invocation

    with pytest.raises(SimulatedCrash):  # the process dies: window 61's step record stays in progress
        outcome_of(job, model, FakeLambdaContext(timeout_ms=800))
    assert model.windows == ["p0001-0020", "p0021-0040", "p0041-0060"]
    time.sleep(0.9)  # the dead invocation's deadline: its step record no longer blocks the retry
    outcome = outcome_of(job, model, retry_count=1)

    assert outcome.status == "extracted"
    assert sorted(model.windows) == window_ids(SHORTER), "no window's model call was made twice"
    assert len(s3_json.list_model_calls(job.job_id, "long.pdf")) == 6


def test_a_window_journalled_before_its_step_completed_is_reused_not_called_again(
    cloud_settings: None,
    estimates_bundle: DefinitionBundle,
    shorter_estimate: bytes,
    env: pytest.MonkeyPatch,
    fake_exit: list[int],
) -> None:
    """The process dies after the first window's call was journalled: the retry reuses that window's journal
    record (by its window, so the next window is not answered from it) and calls the other five."""
    env.setenv("FAULT_INJECTION_ENABLED", "true")
    get_settings.cache_clear()
    put_object(f"{PREFIX}long.pdf", shorter_estimate)
    job = prepare("job-windows-journal", definition=estimates_bundle, documents=[f"{PREFIX}long.pdf"])
    [entry] = items(job)
    options = JobOptions(
        fault=FaultSpec(point="after_model_call", document_index=entry.index, mode="exit", times=1)
    )
    model = WindowModel({shorter_estimate: FIELDS})
    env.setattr(window_extraction, "WINDOW_CALL_SECONDS", 0)  # windows in a 0.8 s invocation
    with pytest.raises(SimulatedCrash):
        process_document(
            document_event(job, entry, options=options), FakeLambdaContext(timeout_ms=800), provider=model
        )
    assert (fake_exit, model.windows) == ([137], ["p0001-0020"])
    time.sleep(0.9)  # the dead invocation's deadline: its step record no longer blocks the retry
    outcome = process_document(
        document_event(job, entry, options=options, retry_count=1),
        FakeLambdaContext(timeout_ms=120_000),
        provider=model,
    )
    assert outcome.status == "extracted"
    assert model.windows == window_ids(SHORTER)
    result = s3_json.get_result(job.job_id, "long.pdf")
    assert result is not None and result.fields == FIELDS


def test_windows_beyond_the_invocations_time_continue_in_a_fresh_one(
    cloud_settings: None, estimates_bundle: DefinitionBundle, shorter_estimate: bytes
) -> None:
    """With less time left than a window's call may take, the next windows are not started in this invocation:
    DocumentInProgress (the workflow runs it again, a fresh invocation), which resumes at the next window."""
    put_object(f"{PREFIX}long.pdf", shorter_estimate)
    job = prepare("job-windows-time", definition=estimates_bundle, documents=[f"{PREFIX}long.pdf"])
    model = WindowModel({shorter_estimate: FIELDS})

    short = FakeLambdaContext(timeout_ms=int(WINDOW_MARGIN_SECONDS * 1000 * 0.8))  # under any window's need
    with pytest.raises(DocumentInProgress, match=r"s left in this invocation.*pages 21-40 and the rest"):
        outcome_of(job, model, short)
    assert model.windows == ["p0001-0020"], "one window a short invocation, never a call cut short"
    outcome = outcome_of(job, model, retry_count=1)

    assert outcome.status == "extracted"
    assert model.windows == window_ids(SHORTER)


def test_a_windowed_pdf_has_no_batch_record_it_is_read_on_demand(
    cloud_settings: None, estimates_bundle: DefinitionBundle, shorter_estimate: bytes
) -> None:
    short = long_pdf(30)
    put_object(f"{PREFIX}long.pdf", shorter_estimate)
    put_object(f"{PREFIX}short.pdf", short)
    job = prepare("job-windows-batch", definition=estimates_bundle)
    plan(PlanEvent(job_id=job.job_id))  # the job's batch parts (#44), before any record is written
    written = {
        entry.document_id: write_record(
            WriteRecordEvent(job_id=job.job_id, options=job.options, document=entry)
        )
        for entry in items(job)
    }
    assert written["long.pdf"].record_id is None, "no batch record: read window by window on demand"
    assert written["short.pdf"].record_id is not None


def test_a_pdf_over_the_ceiling_fails_with_the_figure_and_the_rest_of_the_job_finishes(
    cloud_settings: None, estimates_bundle: DefinitionBundle, long_estimate: bytes
) -> None:
    definition = estimates_bundle.definition.model_copy(update={"max_pages": 250})
    bundle = estimates_bundle.model_copy(update={"definition": definition})
    short = long_pdf(30)
    put_object(f"{PREFIX}long.pdf", long_estimate)
    put_object(f"{PREFIX}short.pdf", short)
    job = prepare("job-windows-ceiling", definition=bundle)
    model = WindowModel({short: FIELDS})

    outcomes = process_all(job, model)

    assert (outcomes["long.pdf"].status, outcomes["long.pdf"].error) == ("rejected", "DocumentTooLarge")
    result = s3_json.get_result(job.job_id, "long.pdf")
    assert result is not None and "the PDF has 300 pages, over the job's ceiling of 250" in str(result.reason)
    # read (30 pages: one call, no windows); to review, as it does not hold the label's later pages' values
    assert (outcomes["short.pdf"].status, outcomes["short.pdf"].error) == ("review", None)
    assert model.windows == ["whole"]


def test_a_failed_window_rejects_the_document_naming_its_pages(
    cloud_settings: None, estimates_bundle: DefinitionBundle, shorter_estimate: bytes
) -> None:
    put_object(f"{PREFIX}long.pdf", shorter_estimate)
    job = prepare("job-windows-unlabelled", definition=estimates_bundle, documents=[f"{PREFIX}long.pdf"])
    model = WindowModel({})  # no label: the local Bedrock refuses the first window

    outcome = outcome_of(job, model)

    assert (outcome.status, outcome.error) == ("rejected", "DocumentNotLabelled")
    result = s3_json.get_result(job.job_id, "long.pdf")
    assert result is not None and str(result.reason).startswith("pages 1-20: ")
    assert model.windows == ["p0001-0020"], "the first failed window stops the document"


# ------------------------------------------------------------------------------------- size by kind


def test_each_block_kind_is_held_to_its_own_limit_once_its_format_is_known() -> None:
    assert claude_generation("us.anthropic.claude-haiku-4-5-20251001-v1:0") == 4
    assert claude_generation("anthropic.claude-3-5-sonnet-20240620-v1:0") == 3
    assert claude_generation("amazon.nova-pro-v1:0") is None
    assert pdf_call_bytes("global.anthropic.claude-sonnet-4-5-20250929-v1:0") == MAX_CLAUDE_PDF_CALL_BYTES
    assert pdf_call_bytes("anthropic.claude-3-haiku-20240307-v1:0") == MAX_CONVERSE_DOCUMENT_BYTES
    check_document_bytes("pdf", MAX_CONVERSE_DOCUMENT_BYTES + 1)  # a PDF's bytes are checked per call
    with pytest.raises(
        DocumentTooLarge, match="the txt document is 4500001 bytes, over Converse's limit of 4500000"
    ):
        check_document_bytes("txt", MAX_CONVERSE_DOCUMENT_BYTES + 1)
    big_text = (files.INVOICE + "x" * MAX_CONVERSE_DOCUMENT_BYTES).encode()
    with pytest.raises(DocumentTooLarge, match="over Converse's limit of 4500000 bytes per document"):
        document_input(big_text, "document-00001")


def test_an_encrypted_pdf_is_refused_before_any_call() -> None:
    with pytest.raises(DocumentUnreadable, match="encrypted or password-protected"):
        document_input(files.encrypted_pdf(), "document-00001")


def test_the_local_bedrock_holds_a_pdf_to_the_calls_models_limit() -> None:
    """A PDF over 4.5 MB is refused for a model before Claude 4 and read for Claude 4 and later, as Bedrock
    documents it; any other document is held to 4.5 MB whatever the model."""
    big = render_scanned_appendix_pdf(files.INVOICE, MAX_CONVERSE_DOCUMENT_BYTES + 200_000, seed=3)
    bedrock = LocalBedrock()
    bedrock.labels.add([Label(sha256=hashlib.sha256(big).hexdigest(), fields={"a": "1"})])
    body = converse_body(document_input(big, "document-00001", "text"), "s", "Extract.", 800, 0.0)
    answers = {
        model_id: bedrock.converse(model_id, body["system"], body["messages"], 800)
        for model_id in (
            "anthropic.claude-3-5-sonnet-20240620-v1:0",
            "global.anthropic.claude-haiku-4-5-v1:0",
        )
    }
    status, _, refused = answers["anthropic.claude-3-5-sonnet-20240620-v1:0"]
    assert status == 400 and f"over the limit of {MAX_CONVERSE_DOCUMENT_BYTES}" in refused
    assert answers["global.anthropic.claude-haiku-4-5-v1:0"][0] == 200
