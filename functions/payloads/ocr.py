"""A document's pages read by OCR (docs/design.md, "Page text by OCR"): each page's text and word boxes,
stored once per document (``OcrRecord``, jobs/{job_id}/ocr/{document_id}.json), and the durable step's
small record (``OcrSummary``)."""

from __future__ import annotations

from pydantic import Field

from functions.payloads.common import DOCUMENT_ID_PATTERN, JOB_ID_PATTERN, StrictModel
from functions.payloads.evidence import Box


class OcrWord(StrictModel):
    """One word as the OCR read it, with its box on the page."""

    text: str
    box: Box


class OcrPage(StrictModel):
    """One page read by OCR: its lines joined by newlines (reading order) and its words, each with its box."""

    page: int = Field(ge=1, description="the page of the document, from 1")
    text: str
    words: list[OcrWord] = Field(default_factory=list)
    confidence: float | None = Field(None, ge=0, le=100, description="the words' mean confidence, 0-100")


class OcrRecord(StrictModel):
    """Every page of a document (or a packet's section) that has no text layer, read by OCR."""

    job_id: str = Field(pattern=JOB_ID_PATTERN)
    document_id: str = Field(pattern=DOCUMENT_ID_PATTERN)
    section_id: str | None = None
    engine: str = Field(description="what read the pages: textract, or the local cloud's engine through it")
    pages: list[OcrPage] = Field(default_factory=list)
    cost_usd: float = Field(0.0, ge=0, description="the pages priced (functions/spend.py, ocr_cost_nano)")

    def page(self, number: int) -> OcrPage | None:
        return next((page for page in self.pages if page.page == number), None)


class OcrSummary(StrictModel):
    """The durable step ``ocr``'s record and ``DocumentResult.ocr``: where the page texts are and what they
    cost."""

    key: str = Field(description="the OcrRecord's key in the job bucket")
    pages: list[int] = Field(default_factory=list, description="the pages read by OCR, from 1")
    engine: str
    cost_usd: float = Field(0.0, ge=0)
