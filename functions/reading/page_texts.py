"""A document's text page by page, for the grounding check (functions/evidence/grounding.py): the ONE reader
of it, so the grounding, the console and the local model read the same pages.

PDF: pypdf's text of each page; DOCX: its paragraphs and tables as one page; text, Markdown and CSV: their
text as one page. A page without a text layer (an image-only PDF page, an image, each TIFF page) has the text
OCR read of it (``OcrRecord``, functions/reading/ocr/: stored once per document), when given. Anything else
(HTML, spreadsheets, a page without text and no OCR, a reader not installed): None, and the grounding check
marks the fields unverified (page only).

``PageTexts`` also says where a span of a page is on the page (``box``, docs/design.md "Evidence and
confidence"): an OCR'd page by its word boxes, a PDF page with a text layer by pypdfium2's character boxes
(where pypdfium2 is installed: the local cloud; else null).
"""

from __future__ import annotations

import functools
import io
import re
from collections.abc import Callable
from typing import Any

from functions.payloads.common import SourceFormat
from functions.payloads.evidence import Box, FieldEvidence
from functions.payloads.ocr import OcrPage, OcrRecord, OcrSummary


class PageTexts(list[str]):
    """The page texts (a list of str, page 1 first), which of them OCR read, and where a span is."""

    def __init__(self, texts: list[str], *, ocr: OcrRecord | None = None, pdf: bytes | None = None) -> None:
        super().__init__(texts)
        self.ocr = ocr
        self.pdf = pdf
        # The fields grounded on these pages, by what was grounded (functions/evidence/grounding.py
        # ``ground_fields``): a document's texts are read once a run, and the cascade's extraction, when it
        # goes on as it is, is grounded once for the cascade and the result (#51). Gone with the pages.
        self.grounded: dict[str, dict[str, FieldEvidence]] = {}

    @property
    def printed(self) -> bool:
        """Whether no page is OCR text: a value can then be found on its page as printed, so the model is
        asked its page only (functions/inference/evidence.py); OCR text is noisy (a diacritic lost, a line
        broken), so a value on it is quoted by the model and its quote found fuzzily."""
        return self.ocr is None or not self.ocr.pages

    def is_ocr(self, page: int) -> bool:
        """Whether page ``page`` (from 1) is OCR text (its grounding is tolerant of OCR noise)."""
        return self.ocr is not None and self.ocr.page(page) is not None

    def box(self, page: int, start: int, end: int) -> Box | None:
        """The box of ``[start, end)`` of page ``page``'s text, None when unknown."""
        if not 1 <= page <= len(self) or end <= start:
            return None
        found = self.ocr.page(page) if self.ocr is not None else None
        if found is not None:
            return _word_box(found, start, end)
        if self.pdf is not None:
            return _pdf_box(self.pdf, page, self[page - 1][start:end])
        return None


def union(boxes: list[Box]) -> Box | None:
    """The smallest box holding every one of ``boxes``."""
    if not boxes:
        return None
    left, top = min(box.left for box in boxes), min(box.top for box in boxes)
    right = max(box.left + box.width for box in boxes)
    bottom = max(box.top + box.height for box in boxes)
    return Box(left=left, top=top, width=min(1.0, right) - left, height=min(1.0, bottom) - top)


def _word_box(page: OcrPage, start: int, end: int) -> Box | None:
    """The union of the OCR words of ``page`` that ``[start, end)`` of its text covers."""
    covered, at = [], 0
    for word in page.words:
        where = page.text.find(word.text, at)
        if where < 0:
            continue
        at = where + len(word.text)
        if where < end and at > start:
            covered.append(word.box)
    return union(covered)


class _PdfPageChars:
    """A PDF page as pypdfium2 reads it: its text (one character each of its characters), each character's
    box read only when a span asks for it. Reading every character's box of every grounded page was a tenth
    of the ProcessDocument workers' CPU in the 200-document demo (`py-spy`, 2026-12-07); a page's grounded
    spans are a few dozen of its characters. The page stays open while it is cached (``release``)."""

    def __init__(self, data: bytes, page: int) -> None:
        import pypdfium2  # noqa: PLC0415 (the local cloud's; not in the Lambda layer: no box there)
        import pypdfium2.raw as pdfium_c  # noqa: PLC0415

        self._pdf = pypdfium2.PdfDocument(data)
        self._sheet = self._pdf[page - 1]
        self._width, self._height = self._sheet.get_size()
        self._text_page = self._sheet.get_textpage()
        raw, count = self._text_page.raw, self._text_page.count_chars()
        self.text = "".join(chr(pdfium_c.FPDFText_GetUnicode(raw, index) or 32) for index in range(count))

    def boxes(self, start: int, end: int) -> list[Box]:
        """The boxes (page ratios) of characters ``[start, end)`` that have one."""
        found = []
        for index in range(start, end):
            left, bottom, right, top = self._text_page.get_charbox(index)
            if right > left:
                x0, y0 = left / self._width, 1 - top / self._height
                x1, y1 = right / self._width, 1 - bottom / self._height
                width, height = max(0.0, x1 - x0), max(0.0, y1 - y0)
                found.append(Box(left=max(0.0, x0), top=max(0.0, y0), width=width, height=height))
        return found


@functools.lru_cache(maxsize=4)
def _pdf_chars(data: bytes, page: int) -> _PdfPageChars:
    return _PdfPageChars(data, page)


def _pdf_box(data: bytes, page: int, span: str) -> Box | None:
    """The union of the character boxes of ``span`` where pypdfium2's text of the page holds it (whitespace
    runs and case aside)."""
    words = span.split()
    if not words:
        return None
    try:
        chars = _pdf_chars(data, page)
        found = re.search(r"\s*".join(re.escape(word) for word in words), chars.text, re.IGNORECASE)
        return None if found is None else union(chars.boxes(found.start(), found.end()))
    except Exception:  # no pypdfium2, or a page it cannot read: the position is unknown
        return None


def stored_page_texts(
    data: bytes,
    document_format: SourceFormat | None,
    ocr: OcrSummary | None,
    read_json: Callable[[str], Any],
) -> PageTexts | None:
    """A stored result's page texts as its grounding read them: ``ocr`` (its ``DocumentResult.ocr``) names the
    stored OcrRecord, read with ``read_json`` (a key of the job bucket: the parsed object or None)."""
    stored = None if ocr is None else read_json(ocr.key)
    record = None if stored is None else OcrRecord.model_validate(stored)
    return document_page_texts(data, document_format, record)


def page_texts(data: bytes, document_format: SourceFormat | None) -> list[str] | None:
    """The text layer of each page (None: no text layer this function reads)."""
    return document_page_texts(data, document_format)


def document_page_texts(
    data: bytes, document_format: SourceFormat | None, ocr: OcrRecord | None = None
) -> PageTexts | None:
    """The text of each page: its text layer, else the text OCR read of it (``ocr``); None when no page has
    text."""
    layer = _text_layer(data, document_format)
    if ocr is None or not ocr.pages:
        if layer is None:
            return None
        return PageTexts(layer, pdf=data if document_format == "pdf" else None)
    count = max([len(layer or [])] + [page.page for page in ocr.pages])
    texts = [(layer[index] if layer is not None and index < len(layer) else "") for index in range(count)]
    for page in ocr.pages:
        texts[page.page - 1] = page.text
    return PageTexts(texts, ocr=ocr, pdf=data if document_format == "pdf" else None)


@functools.lru_cache(maxsize=4)
def pdf_page_texts(data: bytes) -> tuple[str, ...]:
    """pypdf's text of each page of a PDF (pypdf's errors raised): the one reading of a PDF's text layer.
    The last few are remembered: one document's text is asked for several times in one process (the OCR
    step's pages without text, the grounding's pages, the call's plan; the local Bedrock's reading, its
    grounding pages and its OCR check), and pypdf's extraction is the dearest part of each (a 200-document
    demo read each PDF three times in the local Bedrock, 2026-12-07)."""
    from pypdf import PdfReader  # noqa: PLC0415 (read only when a PDF is read)

    return tuple(page.extract_text() or "" for page in PdfReader(io.BytesIO(data)).pages)


@functools.lru_cache(maxsize=4)
def docx_text(data: bytes) -> str:
    """A DOCX's paragraphs, then its tables' rows (cells tab-separated), one a line (python-docx's errors
    raised): the one reading of a Word document's text, remembered as ``pdf_page_texts`` is."""
    import docx  # noqa: PLC0415 (read only when a DOCX is read)

    document: Any = docx.Document(io.BytesIO(data))
    lines = [paragraph.text for paragraph in document.paragraphs]
    for table in document.tables:
        lines.extend("\t".join(cell.text for cell in row.cells) for row in table.rows)
    return "\n".join(lines)


def release() -> None:
    """Forget the documents read (pypdf's texts, python-docx's, pypdfium2's open pages): called when a
    document is done, so a warm container holds no earlier document while it reads the next."""
    pdf_page_texts.cache_clear()
    docx_text.cache_clear()
    _pdf_chars.cache_clear()


def _text_layer(data: bytes, document_format: SourceFormat | None) -> list[str] | None:
    try:
        if document_format == "pdf":
            pages = list(pdf_page_texts(data))
            return pages if any(text.strip() for text in pages) else None
        if document_format == "docx":
            return [docx_text(data)]
        if document_format in {"txt", "md", "csv"}:
            return [data.decode("utf-8", errors="replace")]
    except ImportError:
        return None
    except Exception:
        return None
    return None
