"""Amazon Textract as the OCR seam: one synchronous DetectDocumentText call per page image, its answer read
from Textract's shape (``Blocks`` of ``PAGE``, ``LINE`` and ``WORD``, each with ``Geometry.BoundingBox`` as
ratios of the page).

Limits (looked up 2026-12-07, AWS docs "Set Quotas in Amazon Textract",
https://docs.aws.amazon.com/textract/latest/dg/limits-document.html): synchronous operations take JPEG, PNG,
PDF and TIFF, "a limit of 10 MB in memory", a PDF or TIFF "a limit of 1 page"; "images with a resolution less
than or equal to 10000 pixels on all sides"; the asynchronous API (StartDocumentTextDetection) takes a PDF or
TIFF of up to 3,000 pages from S3. docagent sends each page as a PNG or JPEG image it made
(functions/reading/ocr/ page_images.py keeps them within both limits), one call a page. Price:
functions/spend.py (``OCR_PRICE_PER_1000_PAGES``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from botocore.exceptions import ClientError

from functions import aws
from functions.observability import logger
from functions.payloads.evidence import Box
from functions.payloads.ocr import OcrPage, OcrWord

MAX_SYNC_BYTES = 10 * 1024 * 1024  # "10 MB in memory" (above)
MAX_EDGE_PIXELS = 10_000  # "less than or equal to 10000 pixels on all sides" (above)
# What Textract answers an image it will not read: the page then has no OCR text (its fields unverified),
# never a failed document. Throttling and service errors are raised: the step is retried.
REFUSALS = frozenset(
    {
        "InvalidParameterException",
        "UnsupportedDocumentException",
        "BadDocumentException",
        "DocumentTooLargeException",
    }
)
ENGINE = "textract"


def _box(geometry: Mapping[str, Any] | None) -> Box:
    found = (geometry or {}).get("BoundingBox") or {}

    def ratio(name: str) -> float:
        return min(1.0, max(0.0, float(found.get(name, 0.0))))

    return Box(left=ratio("Left"), top=ratio("Top"), width=ratio("Width"), height=ratio("Height"))


def page_from_blocks(number: int, blocks: Iterable[Mapping[str, Any]]) -> OcrPage:
    """Page ``number`` from Textract's blocks: its LINE texts joined by newlines, its WORDs with their boxes
    (in the order Textract answers them: reading order)."""
    lines: list[str] = []
    words: list[OcrWord] = []
    confidences: list[float] = []
    for block in blocks:
        kind, text = block.get("BlockType"), str(block.get("Text", ""))
        if kind == "LINE":
            lines.append(text)
        elif kind == "WORD" and text:
            words.append(OcrWord(text=text, box=_box(block.get("Geometry"))))
            if "Confidence" in block:
                confidences.append(float(block["Confidence"]))
    confidence = round(sum(confidences) / len(confidences), 2) if confidences else None
    return OcrPage(page=number, text="\n".join(lines), words=words, confidence=confidence)


class TextractProvider:
    """DetectDocumentText, one page image a call."""

    name = ENGINE

    def read_page(self, number: int, image: bytes) -> OcrPage | None:
        try:
            answer = aws.textract_client().detect_document_text(Document={"Bytes": image})
        except ClientError as error:
            code = error.response.get("Error", {}).get("Code", "")
            if code in REFUSALS:
                logger.warning("OCR refused a page", extra={"page": number, "error": code})
                return None
            raise
        return page_from_blocks(number, answer.get("Blocks", []))
