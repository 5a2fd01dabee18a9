"""Scanned and mixed PDFs: pages without a text layer are detected; a job reads PDFs as text, visually
(citations enabled, as Claude on Bedrock reads a PDF's pages as images) or auto; visual pages are billed at
their documented rate; the local Bedrock sees nothing of a scan read as text, as Bedrock's model does not."""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Iterator

import pytest
from pydantic import ValidationError
from pypdf import PdfReader, PdfWriter

from docagent.drills.document_files import render_pdf
from docagent.localcloud.bedrock.converse_api import LocalBedrock
from docagent.localcloud.bedrock.labels import Label
from functions import s3_json
from functions.definition.job_spec import DefinitionBundle, JobDefinition
from functions.errors import DocumentTooLarge
from functions.inference.converse import converse_body, reply_text
from functions.reading.documents import document_input
from functions.reading.pdf_layers import TEXT_TOKENS_PER_PAGE, VISUAL_TOKENS_PER_PAGE, text_layer
from functions.settings import get_settings
from stacks.config import DEFAULT_MODEL_ID
from tests import documents as files
from tests.images import fax as fax_pages
from tests.local_model import LocalModel
from tests.support import PREFIX, example_bundle, prepare, process_all, put_object

FIELDS = {
    "customer_id": "CUST-00007", "invoice_date": "2026-03-14", "amount": "1234.56", "currency": "EUR",
    "category": "hardware", "summary": "ACME supplies.", "invoice_number": "INV-2026-00421",
}  # fmt: skip


def joined(*pdfs: bytes) -> bytes:
    writer = PdfWriter()
    for pdf in pdfs:
        for page in PdfReader(io.BytesIO(pdf)).pages:
            writer.add_page(page)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def test_pages_without_a_text_layer_are_detected():
    text, scan = render_pdf(files.INVOICE), files.scanned_pdf()
    assert text_layer(text).every_page_has_text
    assert (text_layer(scan).pages, text_layer(scan).every_page_has_text) == (1, False)
    mixed = text_layer(joined(text, scan, text))
    assert (mixed.pages, mixed.text_streams, mixed.every_page_has_text) == (3, 2, False)
    long = text_layer(render_pdf(files.INVOICE * 40))
    assert long.pages == 3 and long.every_page_has_text


@pytest.mark.parametrize(
    ("pdf", "read", "visual"),
    [
        ("text", "auto", False),
        ("scan", "auto", True),
        ("mixed", "auto", True),
        ("scan", "text", False),
        ("text", "visual", True),
    ],
)
def test_the_read_mode_chooses_how_a_pdf_is_sent(pdf, read, visual):
    data = {
        "text": render_pdf(files.INVOICE),
        "scan": files.scanned_pdf(),
        "mixed": joined(render_pdf(files.INVOICE), files.scanned_pdf()),
    }[pdf]
    document = document_input(data, "document-00001", read)
    [block] = document.converse_blocks()
    assert document.visual is visual and document.read_mode == ("visual" if visual else "text")
    assert ("citations" in block["document"]) is visual  # type: ignore[typeddict-item]
    if visual:
        assert block["document"]["citations"] == {"enabled": True}  # type: ignore[typeddict-item]
        assert document.input_chars >= 4 * VISUAL_TOKENS_PER_PAGE * document.pages, "budgeted as visual"


def test_job_json_read_is_optional_and_checked():
    bundle = example_bundle()
    assert bundle.definition.read == "auto"
    assert "read" not in bundle.definition.model_dump(mode="json"), "the default keeps the bundle's version"
    visual = JobDefinition.model_validate({**bundle.definition.model_dump(mode="json"), "read": "visual"})
    assert visual.model_dump(mode="json")["read"] == "visual"
    with pytest.raises(ValidationError, match="'auto', 'text' or 'visual'"):
        JobDefinition.model_validate({**bundle.definition.model_dump(mode="json"), "read": "ocr"})


def test_a_reply_with_citations_is_read_whole():
    content = [
        {"citationsContent": {"content": [{"text": '{"a": '}], "citations": [{"title": "document-00001"}]}},
        {"text": "1}"},
    ]
    assert json.loads(reply_text(content)) == {"a": 1}


def test_the_local_bedrock_sees_a_scan_only_visually_and_bills_its_pages():
    scan = files.scanned_pdf()
    model = LocalBedrock()
    model.labels.add([Label(sha256=hashlib.sha256(scan).hexdigest(), fields=FIELDS)])
    answers = {}
    for read in ("text", "visual"):
        body = converse_body(document_input(scan, "document-00001", read), "s", "Extract.", 800, 0.0)
        status, _, answer = model.converse("m", body["system"], body["messages"], 800)
        assert status == 200, answer
        answers[read] = json.loads(answer)
    assert json.loads(answers["text"]["output"]["message"]["content"][0]["text"]) == {}, "a blank page"
    seen = json.loads(answers["visual"]["output"]["message"]["content"][0]["text"])
    assert seen.pop("_evidence") and seen == FIELDS  # the label's fields, each quoted (#42)
    extra = answers["visual"]["usage"]["inputTokens"] - answers["text"]["usage"]["inputTokens"]
    assert extra == VISUAL_TOKENS_PER_PAGE - TEXT_TOKENS_PER_PAGE, "one page read visually"


@pytest.fixture
def cloud_settings(cloud, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("MAX_DOCUMENT_BYTES", "4500000")  # the deployed default: a 300-page PDF is ~40 KB
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def bundle_reading(read: str) -> DefinitionBundle:
    bundle = example_bundle()
    definition = JobDefinition.model_validate({**bundle.definition.model_dump(mode="json"), "read": read})
    return bundle.model_copy(update={"definition": definition})


# auto: the scan is read visually and its page, without a text layer, by OCR (moto's Textract answers text
# that holds none of the fields): its fields are not grounded, so it goes to review (#52), no longer accepted
# "unverified" on the model's word alone.
@pytest.mark.parametrize(("read", "scan_outcome"), [("auto", "review"), ("text", "rejected")])
def test_a_job_reads_its_scans_by_its_read_mode(cloud_settings, read, scan_outcome):
    scan, text = files.scanned_pdf(), render_pdf(files.INVOICE)
    put_object(f"{PREFIX}scan.pdf", scan)
    put_object(f"{PREFIX}text.pdf", text)
    job = prepare(f"job-read-{read}", definition=bundle_reading(read))
    model = LocalModel({scan: FIELDS, text: FIELDS})

    outcomes = process_all(job, model)

    assert outcomes["text.pdf"].status == "extracted"
    assert outcomes["scan.pdf"].status == scan_outcome
    if scan_outcome == "rejected":
        assert outcomes["scan.pdf"].error == "ExtractionFailed", "as on AWS: the model saw an empty page"


def test_cost_prices_a_page_by_how_it_is_read():
    from docagent.drills.cost import page_costs  # noqa: PLC0415 (the drill's module, as the CLI imports it)
    from functions.spend import model_price  # noqa: PLC0415

    per_page = page_costs(DEFAULT_MODEL_ID)
    assert [per_page[mode]["input_tokens"] for mode in ("text", "image", "visual")] == [334, 1534, 2334]
    price = model_price(DEFAULT_MODEL_ID).input_per_1000
    assert per_page["visual"]["usd_per_1000_pages"] == round(2334 * price, 4)


def test_a_documents_text_page_by_page():
    """The one reader of a document's page texts (functions/reading/page_texts.py, the grounding's): a mixed
    PDF's pages, one page for text, none for an image or a PDF it cannot read."""
    from functions.reading.page_texts import page_texts  # noqa: PLC0415

    pages = page_texts(joined(render_pdf(files.INVOICE), files.scanned_pdf()), "pdf")
    assert pages is not None and len(pages) == 2 and "INV-2026-00421" in pages[0] and not pages[1].strip()
    assert page_texts(files.INVOICE.encode(), "txt") == [files.INVOICE]
    assert page_texts(files.PNG, "png") is None
    assert page_texts(files.encrypted_pdf(), "pdf") is None


def pages_pdf(count: int) -> bytes:
    writer = PdfWriter()
    for _ in range(count):
        writer.add_blank_page(width=595, height=842)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def test_the_jobs_page_ceiling_refuses_only_what_is_beyond_it_with_the_figure():
    long = pages_pdf(300)
    assert document_input(long, "document-00001", "text", max_pages=300).pages == 300
    with pytest.raises(DocumentTooLarge, match=r"the PDF has 300 pages, over the job's ceiling of 299"):
        document_input(long, "document-00001", "text", max_pages=299)
    with pytest.raises(DocumentTooLarge, match=r"the TIFF image has 2 pages, over the job's ceiling of 1"):
        document_input(fax_pages(2), "document-00001", max_pages=1)


def test_a_job_rejects_a_pdf_over_its_ceiling_and_reads_the_rest(cloud_settings):
    put_object(f"{PREFIX}long.pdf", pages_pdf(300))
    put_object(f"{PREFIX}text.pdf", render_pdf(files.INVOICE))
    bundle = bundle_reading("auto")
    definition = JobDefinition.model_validate({**bundle.definition.model_dump(mode="json"), "max_pages": 250})
    job = prepare("job-ceiling", definition=bundle.model_copy(update={"definition": definition}))
    model = LocalModel({render_pdf(files.INVOICE): FIELDS})

    outcomes = process_all(job, model)

    assert (outcomes["long.pdf"].status, outcomes["long.pdf"].error) == ("rejected", "DocumentTooLarge")
    assert "300 pages, over the job's ceiling of 250" in str(
        s3_json.get_result(job.job_id, "long.pdf").reason
    )  # type: ignore[union-attr]
    assert outcomes["text.pdf"].status == "extracted" and model.calls == 1


def test_the_demo_corpus_mixes_scans_and_photos_when_asked():
    from docagent.drills.document_files import assign_formats, parse_formats, render  # noqa: PLC0415

    chosen = parse_formats("pdf,scan,photo")
    assert chosen == ["pdf", "scan", "photo"]
    assigned = assign_formats(14, chosen, seed=7)
    assert {fmt: assigned.count(fmt) for fmt in chosen} == {"pdf": 10, "scan": 2, "photo": 2}
    scan, snapshot = render(files.INVOICE, "scan"), render(files.INVOICE, "photo")
    assert document_input(scan, "document-00001").visual, "a scanned PDF: no text layer"
    assert document_input(snapshot, "document-00002").format == "jpeg"
    assert render(files.INVOICE, "photo") == snapshot, "byte-stable: its label finds it by hash"
