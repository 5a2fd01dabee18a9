"""A PDF's pages in windows, and a run of its pages as a PDF of its own (docs/design.md, "Packets").

A slice is a pure function of the pinned bytes: pypdf writes the same bytes for the same pages every time (no
date, no random file identifier), so a redrive sends the model the same block, and the local Bedrock finds a
section's label by the slice's hash (docagent/localcloud/bedrock/labels.py slices the samples the same way).
A slice of every page is the document's own bytes.
"""

from __future__ import annotations

import functools
import io

from functions.errors import DocumentFormatUnsupported, DocumentUnreadable

# Pages a page-classification call reads at once: a packet's windows are 1-20, 21-40, ... (one durable step
# each). Well under Converse's 100 PDF pages a request for Claude (docs/design.md, "Reading PDFs").
PAGE_WINDOW = 20
_NO_PYPDF = "the job splits PDFs into sections (split: pages) and this deployment has no PDF library (pypdf)"


def page_windows(pages: int, size: int = PAGE_WINDOW) -> list[tuple[int, int]]:
    """The windows (first, last), counted from 1, that cover ``pages`` pages."""
    return [(first, min(first + size - 1, pages)) for first in range(1, pages + 1, size)]


def page_count(data: bytes) -> int:
    """The PDF's pages, as pypdf reads them (DocumentUnreadable when it cannot)."""
    return _read(data)[1]


@functools.lru_cache(maxsize=1)
def _read(data: bytes) -> tuple[object, int]:
    """The PDF read by pypdf, and its pages: kept while its document is processed (``release``), so a
    packet's windows and sections are sliced from one reading (a 5,000-page PDF takes 0.5 s to read and
    2 ms a slice after: measured on this 2-core machine 2026-12-07), not one reading a slice."""
    try:
        from pypdf import PdfReader  # noqa: PLC0415 (only a packet is counted)
    except ImportError:  # pragma: no cover - the local cloud and tests have pypdf
        raise DocumentFormatUnsupported(_NO_PYPDF) from None
    try:
        reader = PdfReader(io.BytesIO(data))
        return reader, len(reader.pages)
    except Exception as error:  # pypdf raises many kinds for a broken file
        raise DocumentUnreadable(f"the PDF cannot be read ({error})") from None


def release() -> None:
    """Forget the PDF read (its bytes and pypdf's objects): called when a document is done, so a warm
    container holds no earlier document's PDF while it reads the next."""
    _read.cache_clear()


def slice_pages(data: bytes, first: int, last: int) -> bytes:
    """Pages ``first`` to ``last`` (from 1, inclusive) of the PDF ``data`` as a PDF; ``data`` itself when that
    is every page. DocumentFormatUnsupported without pypdf; DocumentUnreadable when pypdf cannot read it."""
    reader, count = _read(data)
    if not 1 <= first <= last <= count:
        raise DocumentUnreadable(f"pages {first}-{last} are not within the PDF's {count} pages")
    if (first, last) == (1, count):
        return data
    from pypdf import PdfReader, PdfWriter  # noqa: PLC0415 (read above)

    assert isinstance(reader, PdfReader)
    try:
        writer = PdfWriter()
        for index in range(first - 1, last):
            writer.add_page(reader.pages[index])
        buffer = io.BytesIO()
        writer.write(buffer)
    except Exception as error:  # pypdf raises many kinds for a broken file
        raise DocumentUnreadable(f"the PDF's pages {first}-{last} cannot be read ({error})") from None
    return buffer.getvalue()
