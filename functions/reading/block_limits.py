"""Converse's size limit of each content block kind, applied once a document's format is known
(docs/design.md, "Size limits by block kind"): a document is never refused on the 4.5 MB document limit before
its format says which limit is its own.

Looked up 2026-12-04:
- AWS Bedrock API Reference "Message" (https://docs.aws.amazon.com/bedrock/latest/APIReference/
  API_runtime_Message.html): "You can include up to five documents. Each document's size must be no more than
  4.5 MB"; "up to 20 images. Each image's size, height, and width must be no more than 3.75 MB, 8000 px, and
  8000 px" (the image limits: functions/reading/images.py).
- Bedrock User Guide "API restrictions" (https://docs.aws.amazon.com/bedrock/latest/userguide/
  inference-api-restrictions.html): "For Claude 4 and subsequent versions, the 4.5 MB document size
  restriction does not apply to the PDF format" (Nova neither for PDF nor DOCX: docagent keeps 4.5 MB for
  Nova's DOCX, the stricter); "the Anthropic Messages standard endpoint supports a maximum request size of
  32 MB", "Claude has ... a maximum of 100 PDF pages per request".
- Anthropic docs "PDF support" (https://docs.claude.com/en/docs/build-with-claude/pdf-support): maximum
  request size 32 MB, 100 pages per request, "standard PDF (no passwords/encryption)"; both limits are "on
  the entire request payload, including any other content sent alongside PDFs".
The request carries the PDF base64-encoded (4 characters for 3 bytes), so a call's PDF bytes are held to 3/4
of 32 MB less room for the prompt: 23,500,000.
"""

from __future__ import annotations

import re

from functions.errors import DocumentTooLarge
from functions.payloads.common import MAX_CONVERSE_DOCUMENT_BYTES, SourceFormat

MAX_CLAUDE_REQUEST_BYTES = 32_000_000
# 3/4 of the request (base64) less 0.5 MB for the system prompt, the user text and the JSON around them.
MAX_CLAUDE_PDF_CALL_BYTES = MAX_CLAUDE_REQUEST_BYTES * 3 // 4 - 500_000
# The page ceiling of a job whose job.json sets no ``max_pages``: a PDF or TIFF of more pages is rejected
# DocumentTooLarge before any model call. Amazon Textract's asynchronous analysis, AWS's own service for long
# documents, takes a PDF or TIFF of at most 3,000 pages (Textract Developer Guide "Set Quotas in Amazon
# Textract"; looked up 2026-12-07). At the default window of 20 pages that is 150 model calls, which a
# document reads across invocations (functions/logic/window_extraction.py): its pages are counted in 0.6 s
# even at 5,000 pages (a 628 KB PDF of blank pages, measured on this 2-core machine 2026-12-07), so a
# longer one is refused in the first invocation, never after hours of windows. job.json's max_pages (at most
# 100,000) raises or lowers it.
DEFAULT_MAX_PAGES = 3_000
_CLAUDE_GENERATION = re.compile(r"claude-(?:(?:opus|sonnet|haiku)-)?(\d+)(?![\d])")


def claude_generation(model_id: str) -> int | None:
    """The Claude model generation a model id names (``anthropic.claude-haiku-4-5-...`` -> 4,
    ``anthropic.claude-3-5-sonnet-...`` -> 3), None for another model."""
    match = _CLAUDE_GENERATION.search(model_id)
    return int(match[1]) if match else None


def pdf_call_bytes(model_id: str) -> int:
    """The most bytes of PDF one call of ``model_id`` takes: Claude 4 and later 23,500,000 (the 4.5 MB
    document limit does not apply to their PDFs; Claude's 32 MB request does), any other model 4.5 MB."""
    generation = claude_generation(model_id)
    if generation is not None and generation >= 4:
        return MAX_CLAUDE_PDF_CALL_BYTES
    return MAX_CONVERSE_DOCUMENT_BYTES


def check_document_bytes(document_format: SourceFormat, size: int) -> None:
    """A Converse document other than a PDF over 4.5 MB is DocumentTooLarge (a PDF's bytes are checked per
    call, window by window: functions/reading/page_windows.py; an image's per block:
    functions/reading/images.py)."""
    if document_format == "pdf" or size <= MAX_CONVERSE_DOCUMENT_BYTES:
        return
    raise DocumentTooLarge(
        f"the {document_format} document is {size} bytes, over Converse's limit of "
        f"{MAX_CONVERSE_DOCUMENT_BYTES} bytes per document"
    )


def check_page_ceiling(what: str, pages: int, max_pages: int | None) -> None:
    """DocumentTooLarge with the figure when a document of ``pages`` pages (``what``: "PDF", "TIFF image") is
    over the job's ``max_pages``, or over DEFAULT_MAX_PAGES when job.json sets none."""
    if max_pages is not None and pages > max_pages:
        raise DocumentTooLarge(
            f"the {what} has {pages} pages, over the job's ceiling of {max_pages} (max_pages)"
        )
    if max_pages is None and pages > DEFAULT_MAX_PAGES:
        raise DocumentTooLarge(
            f"the {what} has {pages} pages, over the job's ceiling of {DEFAULT_MAX_PAGES} (the default "
            "max_pages: job.json sets none; set max_pages to read longer documents)"
        )
