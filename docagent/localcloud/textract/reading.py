"""What the local model sees on a page without a text layer: the local OCR engine's text of it, read through
the one reader of page texts (functions/reading/page_texts.py), so the local model quotes a scan, a photo or a
fax as a model reading the page would, and the grounding check finds those quotes in the same OCR text the
durable step ``ocr`` stores (the engine answers the same page image once:
docagent/localcloud/textract/engine.py)."""

from __future__ import annotations

import base64
from typing import Any

from functions.errors import DocumentRejected
from functions.payloads.ocr import OcrRecord
from functions.reading.documents import DocumentInput, document_input
from functions.reading.ocr.page_images import page_image, pages_without_text
from functions.reading.ocr.textract import page_from_blocks
from functions.reading.page_texts import document_page_texts

_NAME = "document-00001"


def _blob(raw: Any) -> bytes:
    return raw if isinstance(raw, bytes) else base64.b64decode(str(raw))


def _document(blocks: list[dict[str, Any]]) -> DocumentInput | None:
    images = [
        _blob((block["image"].get("source") or {}).get("bytes", b"")) for block in blocks if "image" in block
    ]
    try:
        for block in blocks:
            if "document" in block:
                return document_input(_blob((block["document"].get("source") or {}).get("bytes", b"")), _NAME)
        if images:
            document = document_input(images[0], _NAME)
            return DocumentInput(data=images[0], format=document.format, name=_NAME, images=tuple(
                document_input(image, _NAME).images[0] for image in images))  # fmt: skip
    except DocumentRejected:
        return None
    return None


def seen_pages(blocks: list[dict[str, Any]], pages: list[str]) -> list[str]:
    """The message's first document (or its images) page by page as the local model reads it: ``pages`` (its
    text layer) with each page that has none read by the local OCR engine."""
    from docagent.localcloud.textract import engine  # noqa: PLC0415 (the engine loads when a page is read)

    document = _document(blocks)
    numbers = [] if document is None else pages_without_text(document)
    if document is None or not numbers:
        return pages
    read = []
    for number in numbers:
        image = page_image(document, number)
        if image is not None:
            read.append(page_from_blocks(number, engine.detect_document_text(image)["Blocks"]))
    record = OcrRecord(job_id="local", document_id="local", engine=engine.ENGINE, pages=read)
    return document_page_texts(document.data, document.format, record) or pages
