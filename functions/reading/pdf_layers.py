"""Whether a PDF's pages have a text layer, with the standard library (a structural test, below), and its
page count by pypdf where pypdf reads it (``pdf_pages``; the document layer ships pypdf): the pages a model
reads as text, and the ones it can only read visually (a scan, a photo of a page).

How Converse reads a PDF (looked up 2026-12-04; Anthropic docs "PDF support", Amazon Bedrock section,
https://docs.claude.com/en/docs/build-with-claude/pdf-support): without citations, "Converse Document Chat
... basic text extraction only ... Cannot analyze images, charts, or visual layouts ... approximately 1,000
tokens for a 3-page PDF"; with citations enabled on the document block, "Claude PDF Chat ... Full visual
understanding ... each page as text and image ... approximately 7,000 tokens for a 3-page PDF". A scanned page
has no text to extract, so a scan is read visually or not at all.

The test here is structural, not a text extraction: the page objects (``/Type /Page``, also inside
compressed object streams) are counted, and the content streams that show text (a ``BT`` ... ``ET`` block
with ``Tj``/``TJ``/``'``/``"``) are counted; a PDF whose text-showing streams are fewer than its pages has a
page without text. A page drawn from several content streams counts once per stream that shows text, so a
PDF may look as if every page had text when one has not: ``read: visual`` in job.json covers that case.
"""

from __future__ import annotations

import io
import re
import zlib
from dataclasses import dataclass
from typing import Literal

from functions.errors import DocumentUnreadable

# How a job reads its PDFs (job.json ``read``): text (Converse's text extraction), visual (citations
# enabled: every page as text and image) or auto (text where every page has text, visual otherwise).
ReadMode = Literal["auto", "text", "visual"]
# Anthropic's figures above: ~1,000 tokens for 3 pages as text, ~7,000 read visually.
TEXT_TOKENS_PER_PAGE = 1_000 // 3 + 1
VISUAL_TOKENS_PER_PAGE = 7_000 // 3 + 1
# Streams inflated to look for page objects and text operators: at most this many bytes each, and in all.
MAX_INFLATED_BYTES = 20_000_000

_STREAM = re.compile(rb"(?<![a-z])stream\r?\n")
_STREAM_BODY = re.compile(rb"(?<![a-z])stream\r?\n.*?endstream", re.S)
_PAGE = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")
_TEXT_BLOCK = re.compile(rb"(?:^|[\s\]>)])BT(?=[\s/\[(<])(.*?)(?:^|[\s\]>)])ET(?![a-zA-Z])", re.S)
_SHOWS_TEXT = re.compile(rb"(?:\)|>|\])\s*(?:Tj|TJ|'|\")")


@dataclass(frozen=True)
class TextLayer:
    """A PDF's page count and how many of its content streams show text."""

    pages: int
    text_streams: int

    @property
    def every_page_has_text(self) -> bool:
        return self.pages > 0 and self.text_streams >= self.pages


def _streams(data: bytes) -> list[bytes]:
    """Each stream's bytes, inflated when it is Flate-compressed (a stream that does not inflate is kept
    as it is: it is an image or another filter)."""
    found, budget = [], MAX_INFLATED_BYTES
    for match in _STREAM.finditer(data):
        end = data.find(b"endstream", match.end())
        if end < 0:
            break
        raw = data[match.end() : end]
        try:
            inflater = zlib.decompressobj()
            inflated = inflater.decompress(raw, max(1, budget))
        except zlib.error:
            inflated = raw
        budget -= len(inflated)
        found.append(inflated)
        if budget <= 0:
            break
    return found


def text_layer(data: bytes) -> TextLayer:
    """The pages of the PDF ``data`` and the number of its content streams that show text."""
    streams = _streams(data)
    outside = _STREAM_BODY.sub(b"", data)
    pages = len(_PAGE.findall(outside)) + sum(len(_PAGE.findall(stream)) for stream in streams)
    text_streams = sum(
        1
        for stream in streams
        if any(_SHOWS_TEXT.search(block.group(1)) for block in _TEXT_BLOCK.finditer(stream))
    )
    return TextLayer(pages=pages, text_streams=text_streams)


def pdf_pages(data: bytes) -> int | None:
    """The pages of a PDF as pypdf (the functions' document layer) counts them; DocumentUnreadable for an
    encrypted one (Claude reads "standard PDF (no passwords/encryption)": Anthropic docs "PDF support", looked
    up 2026-12-04), before any call; None when pypdf is not installed or cannot parse it (the structural count
    and Bedrock's own refusal then decide)."""
    try:
        from pypdf import PdfReader  # noqa: PLC0415 (when a PDF is read)
        from pypdf.errors import PyPdfError  # noqa: PLC0415
    except ImportError:
        return None
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise DocumentUnreadable(
                "the PDF is encrypted or password-protected; Claude reads no encrypted PDF"
            )
        return len(reader.pages)
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, OSError, RecursionError):
        return None
