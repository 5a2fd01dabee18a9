"""A model step's Converse request as an OpenAI-compatible chat-completions request (``--model openai=URL``,
docagent/localcloud/bedrock/backends.py): what Bedrock would read, in the form such an endpoint reads.

- The system blocks become the system message; the user message keeps Converse's order of its blocks.
- A ``text`` block is text; a ``document`` block is its text between ``<document>`` markers, as the local
  Bedrock's reader reads it (docagent/localcloud/bedrock/document_text.py: Bedrock reads a PDF's text so too).
- An ``image`` block (a photo, a scan, a fax page: functions/reading/images.py, already at the size Claude
  reads best) is an ``image_url`` part holding a data URL (``data:image/png;base64,...``), its bytes as
  Bedrock gets them.
- A PDF read visually (citations enabled on its block: functions/reading/documents.py, a scan or ``read:
  visual``) is its text layer as above (empty for a scan) and each of its pages rendered to PNG, one
  ``image_url`` part a page, as Claude reads such a PDF: each page as text and image
  (functions/reading/pdf_layers.py).
- A message with no image is one string, as every OpenAI-compatible server reads; one with images is a list of
  ``text`` and ``image_url`` parts.

The page size (looked up 2026-12-04; OpenAI docs "Images and vision",
https://developers.openai.com/docs/guides/ images, "Image input requirements": PNG, JPEG, WebP, non-animated
GIF, "up to 20MB per image", "up to 500 individual images" and "up to 50 MB image bytes per request";
"High-resolution: 768px (short side) x 2000px (long side)"): a page is rendered to fit that box, short edge
768 px and long edge at most 2000 px (a Letter page at 768 x 994, an A4 page at 768 x 1086), the most OpenAI's
high detail reads; each image part asks ``detail: high`` (the Chat Completions schema's ``image_url.detail``),
as a page of text read at the 512 px of low detail is not legible. Local servers (Ollama, vLLM, LM Studio)
resize for their own models.
"""

from __future__ import annotations

import base64
import io
from typing import Any

SHORT_EDGE = 768  # px, OpenAI's high-detail short side ("Images and vision", above)
LONG_EDGE = 2000  # px, its long side
MAX_REQUEST_IMAGE_BYTES = 50_000_000  # "up to 50 MB image bytes per request" (above)
MAX_REQUEST_IMAGES = 500  # "up to 500 individual images" (above)


class NotSendableError(ValueError):
    """A request that cannot go: a visual PDF that pdfium cannot render, or images over OpenAI's limits."""


def chat_request(
    model: str, system: list[dict[str, Any]], messages: list[dict[str, Any]], max_tokens: int, text: str
) -> dict[str, Any]:
    """The chat-completions body of a Converse call: ``text`` is the documents' text as the local Bedrock read
    it (empty for a scan), sent where the first document block stands. NotSendableError for a visual PDF that
    cannot be rendered, or images over OpenAI's limits a request (checked before any call)."""
    parts: list[dict[str, Any]] = []
    documents_placed = False
    for block in (block for message in messages for block in message.get("content", [])):
        if "text" in block:
            _add_text(parts, str(block["text"]))
        elif "image" in block:
            image = block["image"]
            parts.append(_image_part(str(image["format"]), source_bytes(image)))
        elif "document" in block:
            if not documents_placed and text:
                _add_text(parts, f"<document>\n{text}\n</document>\n\n")
            documents_placed = True
            document = block["document"]
            if document.get("format") == "pdf" and (document.get("citations") or {}).get("enabled"):
                parts.extend(_image_part("png", page) for page in rendered_pages(source_bytes(document)))
    images = [part["image_url"]["url"] for part in parts if part["type"] == "image_url"]
    _within_limits(images)
    user: str | list[dict[str, Any]] = parts if images else user_text(parts)
    return {
        "model": model,
        "messages": [
            {"role": "system", "content": "".join(str(block.get("text", "")) for block in system)},
            {"role": "user", "content": user},
        ],
        "max_tokens": max_tokens,
        "temperature": 0,
        "response_format": {"type": "json_object"},
    }


def user_text(content: str | list[dict[str, Any]]) -> str:
    """The text of a chat message's content: the string, or its text parts joined."""
    if isinstance(content, str):
        return content
    return "".join(str(part.get("text", "")) for part in content if part.get("type") == "text")


def rendered_pages(data: bytes) -> list[bytes]:
    """Each page of a PDF as PNG bytes, fitted to OpenAI's high-detail box (SHORT_EDGE x LONG_EDGE)."""
    import pypdfium2  # noqa: PLC0415 (when a visual PDF goes to an OpenAI-compatible model)

    try:
        pdf = pypdfium2.PdfDocument(data)
    except pypdfium2.PdfiumError as error:
        raise NotSendableError(f"the PDF could not be rendered ({error})") from None
    try:
        pages = []
        for index in range(len(pdf)):
            page = pdf[index]
            try:
                width, height = page.get_size()  # in points
                scale = min(SHORT_EDGE / min(width, height), LONG_EDGE / max(width, height))
                image = page.render(scale=scale).to_pil()
                buffer = io.BytesIO()
                image.save(buffer, format="PNG", optimize=True)
                pages.append(buffer.getvalue())
            finally:
                page.close()
        return pages
    finally:
        pdf.close()


def _within_limits(urls: list[str]) -> None:
    """OpenAI's images and image bytes a request (its data URLs' base64 is 4 characters for 3 bytes)."""
    if len(urls) > MAX_REQUEST_IMAGES:
        raise NotSendableError(f"{len(urls)} images, over the limit of {MAX_REQUEST_IMAGES} a request")
    size = sum(_decoded_size(url.split(",", 1)[1]) for url in urls)
    if size > MAX_REQUEST_IMAGE_BYTES:
        raise NotSendableError(
            f"{size} bytes of images, over the limit of {MAX_REQUEST_IMAGE_BYTES} a request"
        )


def _decoded_size(encoded: str) -> int:
    """The bytes that base64 text holds (4 characters for 3 bytes, less its padding)."""
    return len(encoded) * 3 // 4 - (len(encoded) - len(encoded.rstrip("=")))


def _add_text(parts: list[dict[str, Any]], text: str) -> None:
    """Text joins the text part before it (one part per run of text, as one string was sent before)."""
    if parts and parts[-1]["type"] == "text":
        parts[-1]["text"] += text
    else:
        parts.append({"type": "text", "text": text})


def _image_part(image_format: str, data: bytes) -> dict[str, Any]:
    url = f"data:image/{image_format};base64,{base64.b64encode(data).decode('ascii')}"
    return {"type": "image_url", "image_url": {"url": url, "detail": "high"}}


def source_bytes(block: dict[str, Any]) -> bytes:
    """A block's source bytes (the local endpoint may hold them as base64)."""
    raw = (block.get("source") or {}).get("bytes", b"")
    return raw if isinstance(raw, bytes) else base64.b64decode(str(raw))
