"""The OCR seam (docs/design.md, "Page text by OCR"), like the model's (functions/inference/): a provider
reads one page image and answers its text and word boxes. On AWS and locally alike it is Amazon Textract's
DetectDocumentText (functions/reading/ocr/textract.py); the local cloud answers that API with a real OCR
engine (docagent/localcloud/textract/)."""

from __future__ import annotations

from typing import Protocol

from functions.payloads.ocr import OcrPage


class OcrProvider(Protocol):
    """Reads one page image (PNG or JPEG bytes): its text and word boxes, as page ``number``."""

    name: str

    def read_page(self, number: int, image: bytes) -> OcrPage | None:
        """The page read, or None when the service refuses the image (unsupported, unreadable)."""
        ...


def get_ocr_provider() -> OcrProvider:
    """The deployment's OCR: Amazon Textract (locally, the local cloud's answers to its API)."""
    from functions.reading.ocr.textract import TextractProvider  # noqa: PLC0415 (only where a page is read)

    return TextractProvider()
