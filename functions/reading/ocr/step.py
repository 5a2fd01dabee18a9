"""The durable step ``ocr`` (docs/design.md, "Page text by OCR"): a document's pages without a text layer read
by OCR once, the record stored in the job bucket before the step completes, and the page texts the grounding
check reads (functions/reading/page_texts.py), the OCR'd pages' included.

The step is keyed by the document's business ids (``{"job_id", "document_id"}``; a packet's section:
``ocr-{section_id}``). Its body reads the stored record first: a run after a crash between the write and the
step's completion, or after its idempotency record expired, reads no page again. Each run is priced per page
(functions/spend.py) against the job's budget, reserved before the first page and settled once (the budget's
reservation name ``{document_id}#ocr``: a retry keeps its reservation, a settled one is never charged again).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

from pydantic import BaseModel

from functions import budget, s3_json, spend, storage
from functions.payloads.document import ProcessDocumentEvent
from functions.payloads.model_calls import ExtractionRecord
from functions.payloads.ocr import OcrPage, OcrRecord, OcrSummary
from functions.reading.documents import DocumentInput
from functions.reading.ocr import get_ocr_provider
from functions.reading.ocr.page_images import page_image, pages_without_text
from functions.reading.page_texts import PageTexts, document_page_texts
from functions.spans import span

ResultT = TypeVar("ResultT", bound=BaseModel)


class Steps(Protocol):
    """What the step needs of the document's run (functions/logic/process_document.py ``_Run``)."""

    event: ProcessDocumentEvent
    ran: set[str]
    ocr: OcrSummary | None

    def step(self, name: str, fn: Callable[[], ResultT], result_model: type[ResultT]) -> ResultT: ...


def document_cost_usd(calls: list[ExtractionRecord], ocr: OcrSummary | None) -> float | None:
    """A document's model calls priced (null: a model without a dated price), its OCR's pages added."""
    return spend.plus(spend.records_cost_usd(calls), ocr.cost_usd if ocr else None)


def grounding_texts(run: Steps, document: DocumentInput, section_id: str | None = None) -> PageTexts | None:
    """The document's page texts for the grounding check: its text layer, and its pages without one read by
    OCR (the durable step ``ocr``, only when it has such pages)."""
    numbers = pages_without_text(document)
    if not numbers:
        return document_page_texts(document.data, document.format)
    summary, record = read_pages(run, document, numbers, section_id)
    run.ocr = summary
    if record is None:  # the step's stored summary: its record read from the bucket
        record = OcrRecord.model_validate(s3_json.get_json(summary.key))
    return document_page_texts(document.data, document.format, record)


def read_pages(
    run: Steps, document: DocumentInput, numbers: list[int], section_id: str | None
) -> tuple[OcrSummary, OcrRecord | None]:
    """The step's summary, and the record when its body ran in this call (written or read just now: not
    read again); None when the step's stored summary answered."""
    event = run.event
    ran: list[OcrRecord] = []
    name = "ocr" if section_id is None else f"ocr-{section_id}"
    key = storage.ocr_key(event.job_id, event.document.document_id, section_id)
    reservation = budget.reservation_name(event.document.document_id, name)

    def body() -> OcrSummary:
        stored = s3_json.get_json_or_none(key)
        if stored is not None:  # written by a run that died before its step completed
            record = OcrRecord.model_validate(stored)
        else:
            if event.options.max_cost_usd is not None:
                cost = spend.ocr_cost_nano(len(numbers))
                budget.reserve(event.job_id, reservation, cost, event.options.max_cost_usd)
            record = _read(event, document, numbers, section_id)
            s3_json.put_json(key, record)
        if event.options.max_cost_usd is not None:
            budget.settle(event.job_id, reservation, spend.to_nano(record.cost_usd))
        ran.append(record)
        read = [page.page for page in record.pages]
        return OcrSummary(key=key, pages=read, engine=record.engine, cost_usd=record.cost_usd)

    with span(name, job_id=event.job_id, step=name) as ocr_span:
        summary = run.step(name, body, OcrSummary)
        ocr_span.outcome = "ok"
        ocr_span.set_attributes(
            pages=len(summary.pages), engine=summary.engine, durable_record_reused=name not in run.ran
        )
    return summary, ran[-1] if ran else None


def _read(
    event: ProcessDocumentEvent, document: DocumentInput, numbers: list[int], section_id: str | None
) -> OcrRecord:
    provider = get_ocr_provider()
    pages: list[OcrPage] = []
    for number in numbers:
        image = page_image(document, number)
        read = None if image is None else provider.read_page(number, image)
        if read is not None:
            pages.append(read)
    return OcrRecord(
        job_id=event.job_id,
        document_id=event.document.document_id,
        section_id=section_id,
        engine=provider.name,
        pages=pages,
        cost_usd=spend.to_usd(spend.ocr_cost_nano(len(numbers))),
    )
