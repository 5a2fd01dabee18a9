"""The local Bedrock Runtime's image blocks: checked with Converse's limits and answered as Bedrock answers.

A Converse request's ``image`` blocks (functions/reading/images.py holds the limits, looked up and dated
there): at most 20 a request, each png | jpeg | gif | webp, at most 3.75 MB and 8000 x 8000 px, its bytes an
image of the declared format. One that breaks a limit is refused as Bedrock refuses it (ValidationException,
HTTP 400, naming the block). An image is billed width x height / 750 tokens (Anthropic docs "Vision",
2026-12-04).

A PDF document block with citations enabled is read visually, as Claude on Bedrock reads it then (each page
as text and image); without them a PDF page with no text layer is blank to the model, so the local model,
which reads no pixels, answers a PDF with no text at all and no citations as a model that saw nothing would:
``{}`` (its label is not consulted). A visual page is billed at the documented visual rate.

The local model answers from labels by the first image's sha256: for an image sent as it is, the file's own
hash; for a converted image (a TIFF fax, a rotated photo), the hash of its first converted page, which
``docagent local labels`` registers beside the file's (labels.py, ``label_digests``). A long TIFF's page
window is answered from its source's label: its first page's note names the source
(functions/reading/page_windows.py, ``window_source``), as a PDF window's document information does.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
from dataclasses import dataclass
from typing import Any

from functions.reading.images import (
    CONVERSE_IMAGE_FORMATS,
    MAX_IMAGE_BYTES,
    MAX_IMAGE_EDGE,
    MAX_IMAGES_PER_REQUEST,
    PIXELS_PER_TOKEN,
    image_kind,
)
from functions.reading.pdf_layers import TEXT_TOKENS_PER_PAGE, VISUAL_TOKENS_PER_PAGE, text_layer


@dataclass(frozen=True)
class ReadImages:
    """The message's images as the local model sees them: the first one's sha256 and bytes, and their billed
    tokens."""

    count: int
    digest: str
    tokens: int
    first: bytes = b""


def read_images(blocks: list[dict[str, Any]]) -> ReadImages | str:
    """The message's image blocks checked (``count`` 0 when there are none), or the ValidationException
    message Bedrock answers for the first one that breaks a limit."""
    images = [(index, block["image"]) for index, block in enumerate(blocks) if "image" in block]
    if len(images) > MAX_IMAGES_PER_REQUEST:
        return f"messages.0.content: at most {MAX_IMAGES_PER_REQUEST} images, got {len(images)}"
    digest, tokens, first = "", 0, b""
    for index, image in images:
        where = f"messages.0.content.{index}.image"
        declared = str(image.get("format", ""))
        if declared not in CONVERSE_IMAGE_FORMATS:
            return f"{where}.format: {declared!r} is not one of {', '.join(CONVERSE_IMAGE_FORMATS)}"
        raw = (image.get("source") or {}).get("bytes", b"")
        try:  # moto's request parsing decodes the blob; a raw JSON body would still hold base64
            data = raw if isinstance(raw, bytes) else base64.b64decode(str(raw), validate=True)
        except binascii.Error:
            return f"{where}.source.bytes: the image bytes are not valid base64"
        problem = _image_problem(data, declared)
        if problem is not None:
            return f"{where}.source.bytes: {problem}"
        width, height = _size(data)
        tokens += -(-width * height // PIXELS_PER_TOKEN)
        digest, first = digest or hashlib.sha256(data).hexdigest(), first or data
    return ReadImages(count=len(images), digest=digest, tokens=tokens, first=first)


def _size(data: bytes) -> tuple[int, int]:
    from PIL import Image  # noqa: PLC0415 (when an image is read)

    with Image.open(io.BytesIO(data)) as image:
        width, height = image.size
    return int(width), int(height)


def _image_problem(data: bytes, declared: str) -> str | None:
    """Why Bedrock would refuse these bytes as an image of ``declared`` format, or None."""
    from PIL import Image, UnidentifiedImageError  # noqa: PLC0415 (when an image is read)

    if not data:
        return "the image is empty"
    if len(data) > MAX_IMAGE_BYTES:
        return f"the image is {len(data)} bytes, over the limit of {MAX_IMAGE_BYTES}"
    if image_kind(data) != declared:
        return f"the image bytes could not be parsed as {declared}"
    try:
        with Image.open(io.BytesIO(data)) as image:
            width, height = image.size
            if width > MAX_IMAGE_EDGE or height > MAX_IMAGE_EDGE:
                limit = f"{MAX_IMAGE_EDGE} x {MAX_IMAGE_EDGE}"
                return f"the image is {width} x {height} px, over the limit of {limit}"
            image.load()
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, Image.DecompressionBombError) as error:
        return f"the image bytes could not be parsed as {declared} ({error})"
    return None


def visual_tokens(blocks: list[dict[str, Any]]) -> int | None:
    """The tokens a message's PDFs read visually (citations enabled) cost beyond their text: each page at
    the documented visual rate less the text rate (functions/reading/pdf_layers.py: Anthropic's ~7,000 against
    ~1,000 tokens for 3 pages); None when no document of the message is read visually."""
    pages = None
    for block in blocks:
        document = block.get("document") or {}
        if document.get("format") == "pdf" and (document.get("citations") or {}).get("enabled"):
            raw = (document.get("source") or {}).get("bytes", b"")
            data = raw if isinstance(raw, bytes) else base64.b64decode(str(raw))
            pages = (pages or 0) + text_layer(data).pages
    return None if pages is None else pages * (VISUAL_TOKENS_PER_PAGE - TEXT_TOKENS_PER_PAGE)
