"""Issue #52's OCR core (docs/design.md, "Page text by OCR"): Textract's answer read into page texts and word
boxes; grounding on OCR text tolerant of its noise but never of a changed digit; every found field's box
(OCR words, or a PDF's text layer by pypdfium2's character boxes); the durable step ``ocr`` reads a page once,
stores the record once and prices it; the local engine answers Textract's shape from a real page image."""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import pytest
from pydantic import BaseModel

from docagent.drills.document_files import render_pdf
from functions import budget, s3_json, spend, storage
from functions.evidence.grounding import ground, is_grounded
from functions.payloads.document import ProcessDocumentEvent
from functions.payloads.evidence import Quote
from functions.payloads.job import JobOptions, ManifestEntry
from functions.payloads.ocr import OcrPage, OcrRecord, OcrSummary
from functions.reading import page_texts
from functions.reading.documents import document_input
from functions.reading.ocr import step as ocr_step
from functions.reading.ocr.textract import page_from_blocks
from functions.reading.page_texts import document_page_texts
from tests import documents as files
from tests.images import fax as fax_pages
from tests.support import RequestLog

ResultT = TypeVar("ResultT", bound=BaseModel)
DATE = {"type": "string", "format": "date", "x-normalise": "date"}


def word(text: str, left: float, top: float, width: float = 0.1) -> dict:
    box = {"Left": left, "Top": top, "Width": width, "Height": 0.02}
    return {"BlockType": "WORD", "Text": text, "Confidence": 99.0, "Geometry": {"BoundingBox": box}}


# Textract's answer for a claim form's lines, the spaces inside "Dateofincident:" lost as an OCR engine loses
# them (the words as the answer's WORD blocks give them).
BLOCKS = [
    {"BlockType": "PAGE", "Geometry": {"BoundingBox": {"Left": 0, "Top": 0, "Width": 1, "Height": 1}}},
    {"BlockType": "LINE", "Text": "Policynumber: POL-100871"},
    word("Policynumber:", 0.08, 0.11),
    word("POL-100871", 0.2, 0.11),
    {"BlockType": "LINE", "Text": "Dateofincident: 3 November 2025"},
    word("Dateofincident:", 0.08, 0.25),
    word("3", 0.25, 0.25, 0.01),
    word("November", 0.27, 0.25),
    word("2025", 0.38, 0.25, 0.05),
]


def ocr_texts() -> list[str]:
    page = page_from_blocks(1, BLOCKS)
    record = OcrRecord(job_id="job", document_id="doc", engine="textract", pages=[page])
    texts = document_page_texts(b"\x89PNG", "png", record)
    assert texts is not None
    return texts


def test_textract_blocks_become_a_page_of_lines_and_boxed_words() -> None:
    page = page_from_blocks(2, BLOCKS)
    assert page.page == 2
    assert page.text == "Policynumber: POL-100871\nDateofincident: 3 November 2025"
    assert [w.text for w in page.words][:2] == ["Policynumber:", "POL-100871"]
    assert page.words[1].box.model_dump() == {"left": 0.2, "top": 0.11, "width": 0.1, "height": 0.02}
    assert page.confidence == 99.0


def test_a_field_on_an_ocr_page_is_grounded_through_its_noise_with_its_box() -> None:
    found = ground("2025-11-03", Quote(quote="Date of incident: 3 November 2025"), ocr_texts(), DATE)
    assert found.grounding == "grounded" and found.value_agrees is True, found
    assert found.box is not None
    box = found.box.model_dump()
    assert box == pytest.approx({"left": 0.08, "top": 0.25, "width": 0.35, "height": 0.02})
    code = ground("POL-100871", Quote(quote="Policy number: POL-100871"), ocr_texts(), {"type": "string"})
    assert is_grounded(code) and code.box is not None and code.box.top == pytest.approx(0.11)


@pytest.mark.parametrize(
    "quote",
    [
        "2025-11-04",  # the local model's quote of a value the page does not hold: the value itself
        "Date of incident: 4 November 2025",  # a model that misread the page and quoted its misreading
    ],
)
def test_a_date_one_day_off_on_an_ocr_page_is_not_grounded(quote: str) -> None:
    found = ground("2025-11-04", Quote(quote=quote), ocr_texts(), DATE)
    assert not is_grounded(found), found


def test_a_pdf_text_layer_field_has_its_box_from_pypdfium2_character_boxes() -> None:
    pdf = render_pdf(files.INVOICE)
    texts = document_page_texts(pdf, "pdf")
    assert texts is not None and not texts.is_ocr(1)
    lines = [line for line in texts[0].splitlines() if line.strip()]
    first = ground(lines[0], Quote(quote=lines[0]), texts, {})
    last = ground(lines[-1], Quote(quote=lines[-1]), texts, {})
    assert first.box is not None and last.box is not None
    for box in (first.box, last.box):
        assert 0 <= box.left < 1 and 0 <= box.top < 1 and 0 < box.width <= 1 and 0 < box.height < 0.1
    assert first.box.top < last.box.top, "the first line is above the last"


def test_a_pdf_text_layer_is_extracted_once_for_ocr_s_choice_of_pages_and_the_grounding(monkeypatch) -> None:
    from pypdf import PageObject  # noqa: PLC0415

    extracted: list[int] = []
    extract = PageObject.extract_text
    monkeypatch.setattr(
        PageObject, "extract_text", lambda page, *a, **k: extracted.append(1) or extract(page, *a, **k)
    )
    page_texts.release()  # nothing read by an earlier test
    entry = ManifestEntry(index=0, document_id="invoice.pdf", key="incoming/invoice.pdf", size=1)
    event = ProcessDocumentEvent(job_id="job-layer", document=entry, options=JobOptions())
    pdf = document_input(render_pdf(files.INVOICE), "document-00000")
    texts = ocr_step.grounding_texts(Run(event), pdf)
    assert texts is not None and not texts.is_ocr(1) and "Invoice" in texts[0]
    assert len(extracted) == len(texts), (
        "one extraction a page, not one for OCR's choice and one for grounding"
    )
    page_texts.release()  # a document done: the next one's texts are read afresh
    assert ocr_step.grounding_texts(Run(event), pdf) == texts and len(extracted) == 2 * len(texts)


def test_ocr_is_priced_per_page_from_the_dated_table() -> None:
    assert spend.to_usd(spend.ocr_cost_nano(1000)) == spend.OCR_PRICE_PER_1000_PAGES == 1.5
    assert spend.plus(0.01, spend.to_usd(spend.ocr_cost_nano(2))) == 0.013
    assert spend.plus(None, 0.003) is None, "a model without a dated price stays unpriced"
    assert storage.ocr_key("job", "doc") == "jobs/job/ocr/doc.json"


@dataclass
class Run:
    """The run of a document as functions/reading/ocr/step.py needs it; each step's body runs (no
    idempotency)."""

    event: ProcessDocumentEvent
    ran: set[str] = field(default_factory=set)
    ocr: OcrSummary | None = None

    def step(self, name: str, fn: Callable[[], ResultT], result_model: type[ResultT]) -> ResultT:
        self.ran.add(name)
        return result_model.model_validate(fn().model_dump())


@dataclass
class CountingOcr:
    name: str = "counting"
    pages: list[int] = field(default_factory=list)

    def read_page(self, number: int, image: bytes) -> OcrPage:
        self.pages.append(number)
        return page_from_blocks(number, BLOCKS)


def test_the_ocr_step_reads_each_page_once_and_stores_and_prices_it_once(cloud, monkeypatch) -> None:
    provider = CountingOcr()
    monkeypatch.setattr(ocr_step, "get_ocr_provider", lambda: provider)
    entry = ManifestEntry(index=0, document_id="fax.tif", key="incoming/fax.tif", size=1)
    event = ProcessDocumentEvent(job_id="job-ocr", document=entry, options=JobOptions(max_cost_usd=1.0))
    fax = document_input(fax_pages(2), "document-00000")
    key = storage.ocr_key("job-ocr", "fax.tif")
    with RequestLog() as log:
        texts = ocr_step.grounding_texts(Run(event), fax)
    assert provider.pages == [1, 2] and texts is not None and texts.is_ocr(2)
    # looked for (none), written, and not read back by the grounding: it has the record it wrote
    assert [request for request in log.requests if request[1] == key] == [
        ("GetObject", key),
        ("PutObject", key),
    ]
    stored = OcrRecord.model_validate(s3_json.get_json(key))
    assert [page.page for page in stored.pages] == [1, 2] and stored.cost_usd == 0.003
    # run again (a crash after the record was written, before the step completed): no page read again
    run = Run(event)
    with RequestLog() as log:
        again = ocr_step.grounding_texts(run, fax)
    assert provider.pages == [1, 2] and again == texts
    assert [request for request in log.requests if request[1] == key] == [("GetObject", key)]
    assert run.ocr is not None and run.ocr.pages == [1, 2] and run.ocr.cost_usd == 0.003
    ledger = budget.read_ledger("job-ocr")
    assert ledger is not None and ledger.spent_nusd == spend.ocr_cost_nano(2) and not ledger.reservations


def test_the_local_engine_answers_textract_s_shape_from_a_real_page_image() -> None:
    from PIL import Image, ImageDraw, ImageFont  # noqa: PLC0415

    from docagent.localcloud.textract import engine  # noqa: PLC0415 (loads the OCR engine)

    image = Image.new("L", (420, 90), 255)
    ImageDraw.Draw(image).text((12, 24), "Total 1,100.00", fill=0, font=ImageFont.load_default(size=36))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    answer = engine.detect_document_text(buffer.getvalue())
    kinds = [block["BlockType"] for block in answer["Blocks"]]
    assert kinds[0] == "PAGE" and "LINE" in kinds and "WORD" in kinds
    page = page_from_blocks(1, answer["Blocks"])
    assert "total1,100.00" in page.text.replace(" ", "").lower(), page.text  # spaces: grounding ignores them
    for found in page.words:
        assert 0 <= found.box.left <= 1 and 0 < found.box.width <= 1
