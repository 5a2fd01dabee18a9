"""A document's text is read once a process (functions/reading/page_texts.py ``pdf_page_texts``,
``docx_text``): the local Bedrock's reading of a Converse document, the grounding's pages and the OCR
check's pages without text all ask for it, and pypdf or python-docx reads it once."""

from __future__ import annotations

import io
from typing import Any

import docx
import pytest
from pypdf import PageObject

from docagent.drills.scaffold import render_pdf_pages
from docagent.localcloud.bedrock.document_text import extract_text
from functions.reading import page_texts as reading
from functions.reading.documents import DocumentInput
from functions.reading.ocr.page_images import pages_without_text


def two_page_pdf(words: str) -> bytes:
    return render_pdf_pages([f"{words} page {page}" for page in (1, 2)], title=words)


def word_document(words: str) -> bytes:
    document: Any = docx.Document()
    document.add_paragraph(words)
    table = document.add_table(rows=1, cols=2)
    table.rows[0].cells[0].text, table.rows[0].cells[1].text = "Total", "42.00"
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def test_a_pdfs_pages_are_extracted_once_for_the_model_the_grounding_and_ocr(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    extracted: list[int] = []
    real = PageObject.extract_text

    def counting(page: PageObject, *args: Any, **kwargs: Any) -> str:
        extracted.append(1)
        return real(page, *args, **kwargs)

    monkeypatch.setattr(PageObject, "extract_text", counting)
    reading.pdf_page_texts.cache_clear()
    data = two_page_pdf("Invoice INV-7")
    text = extract_text(data, "pdf")
    pages = reading.page_texts(data, "pdf")
    missing = pages_without_text(DocumentInput(name="a.pdf", data=data, format="pdf"))
    assert pages == ["Invoice INV-7 page 1", "Invoice INV-7 page 2"]
    assert text == "\n".join(pages) and missing == []
    assert len(extracted) == 2  # each page once
    other = two_page_pdf("Invoice INV-8")  # another document is read for itself
    assert reading.page_texts(other, "pdf") == ["Invoice INV-8 page 1", "Invoice INV-8 page 2"]
    assert len(extracted) == 4


def test_a_word_documents_text_is_read_once_and_a_broken_one_refused_each_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = word_document("Invoice INV-9")
    opened: list[int] = []
    real = docx.Document

    def counting(*args: Any) -> Any:
        opened.append(1)
        return real(*args)

    monkeypatch.setattr(docx, "Document", counting)
    reading.docx_text.cache_clear()
    assert extract_text(data, "docx") == "Invoice INV-9\nTotal\t42.00"
    assert reading.page_texts(data, "docx") == ["Invoice INV-9\nTotal\t42.00"]
    assert len(opened) == 1
    broken = data[:-200]  # a DOCX cut short: its zip directory is gone
    for _ in range(2):
        with pytest.raises(Exception, match="could not be parsed"):
            extract_text(broken, "docx")
    assert reading.page_texts(broken, "docx") is None
