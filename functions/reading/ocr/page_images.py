"""Which pages of a document are read by OCR, and each as the image OCR reads (docs/design.md, "Page text by
OCR"): ``read: auto``'s rule per page. An image document's every page (a scan, a photo, each TIFF page: the
image blocks the model reads, functions/reading/images.py); a PDF's pages that have no text layer (pypdf
extracts no text from them), rendered with pypdfium2 where it is installed (the local cloud), else the page's
largest embedded image taken with pypdf (a scan is one image a page). Other formats: none.
"""

from __future__ import annotations

import io

from functions.reading.documents import DocumentInput
from functions.reading.page_texts import pdf_text_layer

# A rendered PDF page's long edge: 2,000 px (an A4 page at about 170 dpi), well within Textract's 10,000 px
# and 10 MB (functions/reading/ocr/textract.py). At 1,568 px (the long edge the model reads an image at) the
# local engine lost a line and a decimal point of an example job's scan (docs/performance.md, "OCR").
RENDER_LONG_EDGE = 2_000


def pages_without_text(document: DocumentInput) -> list[int]:
    """The pages (from 1) OCR reads: every page of an image, a PDF's pages without a text layer."""
    if document.images:
        return list(range(1, len(document.images) + 1))
    if document.format != "pdf":
        return []
    texts = _pdf_texts(document.data)
    return [number for number, text in enumerate(texts, start=1) if not text.strip()]


def _pdf_texts(data: bytes) -> tuple[str, ...]:
    """pypdf's text of each page, read once a document with the grounding's (none: pypdf cannot read it)."""
    return pdf_text_layer(data) or ()


def page_image(document: DocumentInput, number: int) -> bytes | None:
    """Page ``number`` (from 1) as PNG or JPEG bytes, None when it cannot be made."""
    if document.images:
        return document.images[number - 1].data
    try:
        return _rendered(document.data, number)
    except ImportError:
        return _embedded(document.data, number)


def _rendered(data: bytes, number: int) -> bytes | None:
    import pypdfium2  # noqa: PLC0415 (the local cloud's; not in the Lambda layer)

    pdf = pypdfium2.PdfDocument(data)
    try:
        page = pdf[number - 1]
        width, height = page.get_size()
        image = page.render(scale=RENDER_LONG_EDGE / max(width, height, 1)).to_pil()
        buffer = io.BytesIO()
        image.convert("L").save(buffer, format="PNG", optimize=True)
        return buffer.getvalue()
    finally:
        pdf.close()


def _embedded(data: bytes, number: int) -> bytes | None:
    try:
        from pypdf import PdfReader  # noqa: PLC0415 (as above)

        images = list(PdfReader(io.BytesIO(data)).pages[number - 1].images)
        largest = max(images, key=lambda found: len(found.data), default=None)
        if largest is None or largest.image is None:
            return None
        buffer = io.BytesIO()
        largest.image.convert("L").save(buffer, format="PNG", optimize=True)
        return buffer.getvalue()
    except Exception:  # a page pypdf cannot read: no OCR text for it
        return None
