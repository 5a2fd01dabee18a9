"""A PDF's pages in windows, and a run of its pages as a PDF of its own (docs/design.md, "Packets").

A slice is a pure function of the pinned bytes: pypdf writes the same bytes for the same pages every time (no
date, no random file identifier), so a redrive sends the model the same block, and the local Bedrock finds a
section's label by the slice's hash (docagent/localcloud/bedrock/labels.py slices the samples the same way).
A slice of every page is the document's own bytes.
"""

from __future__ import annotations

import io

from functions.errors import DocumentFormatUnsupported, DocumentUnreadable

# Pages a page-classification call reads at once: a packet's windows are 1-20, 21-40, ... (one durable step
# each). Well under Converse's 100 PDF pages a request for Claude (docs/design.md, "Reading PDFs").
PAGE_WINDOW = 20


def page_windows(pages: int, size: int = PAGE_WINDOW) -> list[tuple[int, int]]:
    """The windows (first, last), counted from 1, that cover ``pages`` pages."""
    return [(first, min(first + size - 1, pages)) for first in range(1, pages + 1, size)]


def slice_pages(data: bytes, first: int, last: int) -> bytes:
    """Pages ``first`` to ``last`` (from 1, inclusive) of the PDF ``data`` as a PDF; ``data`` itself when that
    is every page. DocumentFormatUnsupported without pypdf; DocumentUnreadable when pypdf cannot read it."""
    try:
        from pypdf import PdfReader, PdfWriter  # noqa: PLC0415 (only a packet is sliced)
    except ImportError:  # pragma: no cover - the local cloud and tests have pypdf
        raise DocumentFormatUnsupported(
            "the job splits PDFs into sections (split: pages) and this deployment has no PDF library (pypdf)"
        ) from None
    try:
        reader = PdfReader(io.BytesIO(data))
        count = len(reader.pages)
        if not 1 <= first <= last <= count:
            raise DocumentUnreadable(f"pages {first}-{last} are not within the PDF's {count} pages")
        if (first, last) == (1, count):
            return data
        writer = PdfWriter()
        for index in range(first - 1, last):
            writer.add_page(reader.pages[index])
        buffer = io.BytesIO()
        writer.write(buffer)
    except DocumentUnreadable:
        raise
    except Exception as error:  # pypdf raises many kinds for a broken file
        raise DocumentUnreadable(f"the PDF's pages {first}-{last} cannot be read ({error})") from None
    return buffer.getvalue()
