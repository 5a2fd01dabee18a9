"""What every payload shares: ids' patterns, Converse's document limits, statuses, the strict base model."""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel, ConfigDict

# A job id is also the execution's name and a command-line argument: it may not start with '-', or the
# operator's commands would take it for an option.
JOB_ID_PATTERN = r"^[A-Za-z0-9_][A-Za-z0-9_-]{0,79}$"
JOB_ID_RULE = "letters, digits, '-' and '_', 1-80, not starting with '-'"
DOCUMENT_ID_PATTERN = r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,199}$"

# Converse's per-document limits (looked up 2026-12-01: AWS docs, Bedrock API Reference "Message": "You can
# include up to five documents. Each document's size must be no more than 4.5 MB" and "up to 20 images. Each
# image's size, height, and width must be no more than 3.75 MB, 8000 px, and 8000 px"; Bedrock User Guide
# "API restrictions": "Claude requires PDF documents to be a maximum of 100 pages per request"). docagent
# sends one document, or an image document's pages (functions/reading/images.py), per call; a PDF over 100
# pages is Bedrock's refusal of that document.
# A newer page lifts the size for PDFs on Claude 4 and later (looked up 2026-12-04, Bedrock User Guide "API
# restrictions", inference-api-restrictions.html: "For Claude 4 and subsequent versions, the 4.5 MB document
# size restriction does not apply to the PDF format", Nova models neither for PDF nor DOCX; the console keeps
# it). Claude's own limits then bound the request: 32 MB a request and 100 PDF pages for models with a
# 200k-token context window, 600 for larger ones (Anthropic docs "PDF support", same date). docagent applies
# each block kind's limit once the format is known (functions/reading/block_limits.py) and reads a PDF over
# one call in page windows (functions/reading/page_windows.py).
MAX_CONVERSE_DOCUMENT_BYTES = 4_500_000
MAX_CONVERSE_PDF_PAGES = 100
# The bytes a function reads of one stored document, before its format is known (MAX_DOCUMENT_BYTES, at most
# this): a PDF over 4.5 MB is read in page windows, an image is converted to blocks within Converse's limits,
# so neither is bounded by the 4.5 MB document limit (functions/reading/block_limits.py applies each kind's).
# 50 MB holds a 200-megapixel phone photo and a scanned PDF of hundreds of pages in a function of 1 GB or
# more.
MAX_SOURCE_DOCUMENT_BYTES = 50_000_000
# The document limits' defaults: the stack's config (stacks/config.py), the functions' settings and the
# operator's checks before a job starts all start from these.
DEFAULT_MAX_DOCUMENT_BYTES = MAX_SOURCE_DOCUMENT_BYTES
DEFAULT_MAX_DOCUMENTS = 100_000
# The most a deployment may set MAX_DOCUMENTS to (docs/scale.md, "A million"): one Map Run carries it, the
# listing writes it in parts, batch inference splits it into batch jobs (functions/batch_inference/plan.py).
MAX_DOCUMENTS_CAP = 1_000_000
# S3's minimum multipart part size (as of 2026-11, AWS docs "Amazon S3 multipart upload limits": 5 MiB to
# 5 GiB, no minimum for the last part): each part of a job's items but the last holds at least this much.
DEFAULT_ITEMS_PART_MIN_BYTES = 5 * 1024 * 1024


FaultPointName = Literal[
    "after_batch_submit",
    "after_batch_wait_token",
    "before_model_call",
    "after_model_call",
    "before_store_result",
    "after_store_result",
    "before_action",
    "after_action_request",
    "after_action",
    "before_report",
    "after_report_partial",
    "after_report",
    "before_verify",
    "after_verify_partition",
]

# extracted: accepted (every check passed); review: a check with on_fail "review" failed, none with "reject".
DocumentStatus = Literal["extracted", "review", "rejected"]
# What a model call is for: the class of a document (classify), the class of each page of a packet
# (classify-pages, functions/reading/sections.py), or its fields (extract); escalate: the strong model's
# extraction of a definition naming two models (functions/inference/cascade.py).
CallPurpose = Literal["extract", "classify", "classify-pages", "escalate"]
# The Converse document formats (functions/reading/documents.py); ModelCallOutcome: a finished call's outcome.
DocumentFormat = Literal["pdf", "csv", "doc", "docx", "xls", "xlsx", "html", "txt", "md"]
# The image kinds docagent reads (functions/reading/images.py): sent as Converse image blocks, converted when
# Converse does not take the kind itself (tiff, bmp, heic). SourceFormat: what a document's content is.
ImageKind = Literal["png", "jpeg", "gif", "webp", "tiff", "bmp", "heic"]
SourceFormat = DocumentFormat | ImageKind
ModelCallOutcome = Literal[
    "ok", "ExtractionFailed", "DocumentUnreadable", "DocumentTooLong", "ModelReplyInvalid"
]
# How a job's model calls are made (docs/batch.md): one Converse call per document (on_demand), one Bedrock
# batch inference job for the whole job (batch: about half the price, hours of latency), or batch when the job
# is large enough for it to pay off (auto). InferenceMode: how one finished call was made (priced by it).
Inference = Literal["on_demand", "batch", "auto"]
InferenceMode = Literal["on_demand", "batch"]


def utc_now() -> str:
    """An ISO-8601 UTC timestamp with second precision."""
    return dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


class StrictModel(BaseModel):
    """Refuses unknown fields so a typo in a payload is an error, not a silently ignored key."""

    model_config = ConfigDict(extra="forbid")
