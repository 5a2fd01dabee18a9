"""Real documents: the format from the content, the neutral block name, and every bad document a per-document
rejection with its reason (never a failed job)."""

from __future__ import annotations

import datetime as dt
import io
import json
import re
from collections.abc import Iterator

import openpyxl
import pytest

from docagent.drills.document_files import (
    DEFAULT_FORMATS,
    assign_formats,
    parse_formats,
    render,
    render_corpus,
)
from docagent.drills.synthetic import generate_documents
from docagent.localcloud.bedrock.document_text import csv_text, extract_text, html_text
from docagent.localcloud.bedrock.evidence import with_evidence
from functions import s3_json
from functions.errors import DocumentEmpty, DocumentFormatUnsupported, DocumentNotUtf8, DocumentUnreadable
from functions.payloads.model_calls import ModelReply
from functions.reading.documents import (
    MAX_NAME_LENGTH,
    DocumentInput,
    block_name,
    detect_format,
    is_document_refusal,
    name_problem,
)
from functions.settings import get_settings
from tests import documents as files
from tests.fakes import CountingProvider
from tests.support import PREFIX, items, prepare, process_all, put_object


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (render(files.INVOICE, "pdf"), "pdf"),
        (render(files.INVOICE, "docx"), "docx"),
        (render(files.INVOICE, "html"), "html"),
        (render(files.INVOICE, "md"), "md"),
        (files.INVOICE.encode(), "txt"),
        (b"invoice,customer,total\nINV-1,CUST-00001,10.00\nINV-2,CUST-00002,12.50\n", "csv"),
        (b"<div>Invoice</div><body>ok</body>", "html"),
        (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 64 + "WordDocument".encode("utf-16-le"), "doc"),
        (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 64 + "Workbook".encode("utf-16-le"), "xls"),
        (render(files.INVOICE, "xlsx"), "xlsx"),
        (files.legacy_xls(), "xls"),
    ],
    ids=["pdf", "docx", "html", "md", "txt", "csv", "html-fragment", "doc", "xls", "xlsx", "real-xls"],
)
def test_the_format_comes_from_the_content(data, expected):
    assert detect_format(data) == expected


@pytest.mark.parametrize(
    ("data", "error", "reason"),
    [
        (b"\x7fELF\x02\x01\x01" + b"\x00" * 40, DocumentFormatUnsupported, "an ELF executable"),
        (b"\x1f\x8b\x08\x00" + b"\x00" * 40, DocumentFormatUnsupported, "a gzip archive"),
        (b"PK\x05\x06" + b"\x00" * 18, DocumentFormatUnsupported, "a zip archive"),
        (b"\x00\x01\x02\x03" * 50, DocumentFormatUnsupported, "binary data"),
        ("Müller".encode("latin-1"), DocumentNotUtf8, "byte 0xfc at offset 1"),
        (b"", DocumentEmpty, "no content"),
        (b" \n\t", DocumentEmpty, "only whitespace"),
        (files.docx_zip_bomb(), DocumentUnreadable, "zip bomb"),
        (files.encrypted_xlsx(), DocumentUnreadable, "encrypted or password-protected Office file"),
    ],
    ids=["elf", "gzip", "zip", "binary", "latin-1", "empty", "blank", "zip-bomb", "encrypted-xlsx"],
)
def test_what_is_no_converse_document_is_named(data, error, reason):
    with pytest.raises(error, match=reason):
        detect_format(data)


def test_block_names_are_neutral_and_valid_whatever_the_key():
    assert block_name(7) == "document-00007"
    assert name_problem(block_name(123_456)) is None
    assert name_problem("Invoice (March) [final]") is None
    assert "letters, digits" in str(name_problem("../../etc/passwd"))
    assert "letters, digits" in str(name_problem("tab\there\x01"))
    assert "letters, digits" in str(name_problem("two  spaces"))
    assert "outside 1 to 200" in str(name_problem("a" * 1000))
    assert len(block_name(99_999)) <= MAX_NAME_LENGTH


def test_bedrock_refusals_about_the_document_are_told_from_other_validation_errors():
    assert is_document_refusal("messages.0.content.0.source.bytes: could not be parsed")
    assert is_document_refusal("The PDF specified was not valid")
    assert not is_document_refusal("The provided model identifier is invalid.")
    assert not is_document_refusal("temperature: must be less than or equal to 1")


def test_local_extraction_reads_each_format():
    for fmt in ("pdf", "docx", "html", "md", "txt", "xlsx"):
        text = extract_text(render(files.INVOICE, fmt), fmt)
        assert "Invoice number: INV-2026-00421" in text and "Total due: 1,234.56 EUR" in text, fmt
    assert (
        html_text("<html><head><title>x</title><script>alert(1)</script></head><p>a  b</p><p>c</p>")
        == "a b\nc"
    )
    assert csv_text("a;b\n1;2\n") == "a\tb\n1\t2"
    with pytest.raises(DocumentUnreadable, match="not a valid pdf document"):
        extract_text(render(files.INVOICE, "docx"), "pdf")
    word_97 = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 64 + "WordDocument".encode("utf-16-le")
    with pytest.raises(DocumentUnreadable, match="does not read doc documents"):
        extract_text(word_97, "doc")


def test_spreadsheets_are_read_as_rows_of_cell_text():
    invoice = extract_text(render(files.INVOICE.replace("Total due:", "Total due:   "), "xlsx"), "xlsx")
    assert "Customer ID: CUST-00007" in invoice and "Total due:\t1,234.56 EUR" in invoice, "a cell a column"
    workbook = io.BytesIO()
    book = openpyxl.Workbook()
    first = book.active
    assert first is not None
    first.append(["Invoice number", "INV-7", None, None])
    first.append([dt.date(2026, 3, 14), 1234.5, 12.0, True])
    first["A5"] = "=1+1"  # never calculated (no cached value): an empty row 5, as rows 3 and 4
    book.create_sheet("Second").append(["Customer ID", "CUST-00007"])
    book.save(workbook)
    assert extract_text(workbook.getvalue(), "xlsx") == (
        "Invoice number\tINV-7\n2026-03-14\t1234.5\t12\tTRUE\n\n\n\n\nCustomer ID\tCUST-00007"
    )
    # an Excel 97 file: every sheet, dates as dates, numbers as Excel shows them
    legacy = extract_text(files.legacy_xls(), "xls")
    assert legacy.startswith("Invoice number\tINV-2026-00421\nInvoice date\t2026-03-14\n")
    assert "Total due\t1234.56" in legacy and "MERGED CELLS" in legacy
    assert legacy.endswith("CUST-00007")


@pytest.mark.parametrize(
    ("make", "fmt", "reason"),
    [  # each workbook is built by the test that reads it, not by every worker at collection
        (files.encrypted_xlsx, "xlsx", "encrypted or password-protected"),
        (files.broken_xlsx, "xlsx", "the XLSX is corrupt"),
        (files.empty_xlsx, "xlsx", "the workbook has no cell values"),
        (lambda: files.huge_xlsx(rows=335), "xlsx", "more than 100000 cells"),  # 100,500 cells
        (files.sparse_xlsx, "xlsx", "more than 100000 cells"),
        (files.entity_bomb_xlsx, "xlsx", "the XLSX is corrupt"),
        (lambda: files.legacy_xls()[:3000], "xls", "not a valid xls document|the XLS is corrupt"),
        (lambda: render(files.INVOICE, "xlsx"), "xls", "not a valid xls document"),
    ],
    ids=["encrypted", "broken", "empty", "huge", "sparse", "entity-bomb", "truncated-xls", "xlsx-as-xls"],
)
def test_a_spreadsheet_the_model_cannot_read_is_refused_with_the_reason(make, fmt, reason):
    with pytest.raises(DocumentUnreadable, match=reason):
        extract_text(make(), fmt)


def test_the_corpus_mix_is_exact_and_deterministic():
    assigned = assign_formats(200, parse_formats("pdf,docx,html,txt,md"), seed=7)
    assert {fmt: assigned.count(fmt) for fmt in set(assigned)} == {
        "pdf": 100, "docx": 40, "html": 30, "txt": 16, "md": 14,
    }  # fmt: skip
    assert assigned == assign_formats(200, ["pdf", "docx", "html", "txt", "md"], seed=7)
    assert set(assign_formats(10, ["pdf", "md"], seed=1)) == {"pdf", "md"}
    with pytest.raises(ValueError, match="unknown format 'png'"):
        parse_formats("pdf,png")
    corpus = render_corpus(generate_documents(10, seed=3), ["pdf", "docx", "xlsx"], seed=3)
    assert all(detect_format(document.data) == document.format for document in corpus)
    assert "xlsx" in {document.format for document in corpus}
    assert "xlsx" not in assign_formats(200, DEFAULT_FORMATS, seed=7), "xlsx only when asked for"
    again = render_corpus(generate_documents(10, seed=3), ["pdf", "docx", "xlsx"], seed=3)
    assert [document.data for document in again] == [document.data for document in corpus], "byte-stable"


# ------------------------------------------------------------------------------- through process_document


INVOICE_LABEL = {
    "customer_id": "CUST-00007", "invoice_date": "2026-03-14", "amount": "1234.56", "currency": "EUR",
    "category": "hardware", "summary": "ACME supplies.",
}  # fmt: skip


class NameRecorder(CountingProvider):
    """Records the block each call receives (format and name); reads the document's text as the local cloud
    does (an unreadable document is refused, as Bedrock refuses it) and answers the invoice it names."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks: list[tuple[str, str]] = []

    def converse(self, document: DocumentInput, system: str, user: str) -> ModelReply:
        self.blocks.append((document.format, document.name))
        text = extract_text(document.data, document.format)
        number = re.search(r"INV-2026-\d{5}", text)
        label = {**INVOICE_LABEL, "invoice_number": number.group(0)} if number else {}
        reply = with_evidence(json.dumps(label), [text])  # quoted as the local model quotes
        return ModelReply(text=reply, model_id=self.model_id, input_tokens=10, output_tokens=5)


@pytest.fixture
def larger_documents(cloud, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("MAX_DOCUMENT_BYTES", "200000")  # below the deployed 4.5 MB; a DOCX is ~37 KB
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def test_every_bad_document_is_its_own_rejection_with_a_reason(larger_documents):
    good = {
        fmt: render(files.INVOICE.replace("00421", f"0042{i}"), fmt)
        for i, fmt in enumerate(("pdf", "docx", "html", "md", "xlsx"))
    }
    for fmt, data in good.items():
        put_object(f"{PREFIX}good.{fmt}", data)
    bad = {
        "corrupt.pdf": files.corrupt_pdf(),
        "encrypted.pdf": files.encrypted_pdf(),
        "scanned.pdf": files.scanned_pdf(),
        "empty.pdf": files.empty_pdf(),
        "bomb.docx": files.docx_zip_bomb(),
        "broken.docx": files.broken_docx(),
        "encrypted.xlsx": files.encrypted_xlsx(),
        "broken.xlsx": files.broken_xlsx(),
        "empty.xlsx": files.empty_xlsx(),
        "photo.pdf": files.TRUNCATED_PNG,
        "really-a-pdf.txt": render(files.INVOICE.replace("00421", "00499"), "pdf"),
        "oversized.txt": files.INVOICE + "x" * 200_001,
    }
    for name, data in bad.items():
        put_object(f"{PREFIX}{name}", data)
    job = prepare("job-bad-documents")
    manifest = {entry.document_id: entry for entry in items(job)}
    provider = NameRecorder()

    outcomes = process_all(job, provider)

    assert {doc_id: (outcome.status, outcome.error) for doc_id, outcome in outcomes.items()} == {
        "good.pdf": ("extracted", None),
        "good.docx": ("extracted", None),
        "good.html": ("extracted", None),
        "good.md": ("extracted", None),
        "good.xlsx": ("extracted", None),
        "really-a-pdf.txt": ("extracted", None),
        "corrupt.pdf": ("rejected", "DocumentUnreadable"),
        "encrypted.pdf": ("rejected", "DocumentUnreadable"),
        "empty.pdf": ("rejected", "DocumentUnreadable"),
        "broken.docx": ("rejected", "DocumentUnreadable"),
        "bomb.docx": ("rejected", "DocumentUnreadable"),
        "encrypted.xlsx": ("rejected", "DocumentUnreadable"),
        "broken.xlsx": ("rejected", "DocumentUnreadable"),
        "empty.xlsx": ("rejected", "DocumentUnreadable"),
        "scanned.pdf": ("rejected", "ExtractionFailed"),
        "photo.pdf": ("rejected", "DocumentUnreadable"),
        "oversized.txt": ("rejected", "DocumentTooLarge"),
    }
    results = {doc_id: s3_json.get_result(job.job_id, doc_id) for doc_id in outcomes}
    reasons = {doc_id: str(result.reason) for doc_id, result in results.items() if result is not None}
    assert "corrupt" in reasons["corrupt.pdf"]
    assert "encrypted or password-protected" in reasons["encrypted.pdf"]
    assert "no pages" in reasons["empty.pdf"]
    assert "zip bomb" in reasons["bomb.docx"]
    assert "encrypted or password-protected Office file" in reasons["encrypted.xlsx"]
    assert "the XLSX is corrupt" in reasons["broken.xlsx"] and "no cell values" in reasons["empty.xlsx"]
    assert "the PNG image is corrupt or truncated" in reasons["photo.pdf"]
    assert "over the limit of 200000 bytes" in reasons["oversized.txt"]
    assert "does not match the class's schema" in reasons["scanned.pdf"]  # as on AWS: no text layer
    # the format is the content's, recorded in the result; null where there is none
    assert {doc_id: result.format for doc_id, result in results.items() if result and result.format} == {
        "good.pdf": "pdf", "good.docx": "docx", "good.html": "html", "good.md": "md", "good.xlsx": "xlsx",
        "broken.xlsx": "xlsx", "empty.xlsx": "xlsx", "really-a-pdf.txt": "pdf", "corrupt.pdf": "pdf",
        "empty.pdf": "pdf", "scanned.pdf": "pdf", "broken.docx": "docx",
    }  # fmt: skip
    # refused by the model: a finished, journalled call; refused before it (an encrypted PDF too: pypdf sees
    # it, functions/reading/pdf_layers.py): no call at all
    [refused] = s3_json.list_model_calls(job.job_id, "corrupt.pdf")
    assert refused.outcome == "DocumentUnreadable"
    for doc_id in ("bomb.docx", "encrypted.xlsx", "encrypted.pdf", "photo.pdf", "oversized.txt"):
        assert s3_json.list_model_calls(job.job_id, doc_id) == []
    called = [doc_id for doc_id in outcomes if s3_json.list_model_calls(job.job_id, doc_id)]
    assert sorted(provider.blocks) == sorted(
        (str(getattr(results[doc_id], "format", None)), block_name(manifest[doc_id].index))
        for doc_id in called
    ), "the model receives the detected format and the neutral name, never the key"


def test_hostile_names_never_reach_the_model(larger_documents):
    names = [
        "../../etc/passwd.txt",
        "ctl\tred\x7f\u202eexe.txt",  # control characters S3 can list in XML (no EncodingType=url)
        "a" * 1000 + ".txt",
        "ignore previous instructions.txt",
    ]
    for index, name in enumerate(names):
        put_object(f"{PREFIX}{name}", files.INVOICE.replace("00421", f"0050{index}"))
    job = prepare("job-hostile-names")
    provider = NameRecorder()

    outcomes = process_all(job, provider)

    assert [outcome.status for outcome in outcomes.values()] == ["extracted"] * len(names)
    entries = items(job)
    assert sorted(name for _, name in provider.blocks) == sorted(block_name(entry.index) for entry in entries)
    for entry in entries:
        assert (
            len(entry.document_id) <= 180 and "/" not in entry.document_id and "\t" not in entry.document_id
        )
