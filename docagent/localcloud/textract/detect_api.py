"""The local Textract on moto's server: moto's ``TextractResponse.detect_document_text`` answers fixed text;
it is replaced by the local OCR engine reading the request's page image (docagent/localcloud/textract/
engine.py), with Textract's errors for what Textract refuses. Only DetectDocumentText is served for real (the
functions call nothing else of Textract)."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from moto.textract.responses import TextractResponse

from functions.reading.ocr.textract import MAX_SYNC_BYTES

_INVALID = "Request has invalid parameters"


def _error(code: str, message: str) -> tuple[int, dict[str, str], str]:
    body = json.dumps({"__type": code, "message": message, "Message": message})
    return 400, {"status": "400", "x-amzn-ErrorType": code}, body


def _detect_document_text(self: TextractResponse) -> tuple[int, dict[str, str], str]:
    """DetectDocumentText with ``Document.Bytes`` (an ``S3Object`` is not served: docagent sends bytes)."""
    from docagent.localcloud.textract import engine  # noqa: PLC0415 (the engine loads when a page is read)

    document: dict[str, Any] = (json.loads(self.body or b"{}") or {}).get("Document") or {}
    raw = document.get("Bytes")
    if raw is None:
        return _error("InvalidParameterException", f"{_INVALID}: Document.Bytes is required")
    try:
        image = raw if isinstance(raw, bytes) else base64.b64decode(str(raw), validate=True)
    except binascii.Error:
        return _error("InvalidParameterException", f"{_INVALID}: Document.Bytes is not base64")
    if len(image) > MAX_SYNC_BYTES:
        return _error("DocumentTooLargeException", "Request has invalid document size: over 10 MB")
    try:
        answer = engine.detect_document_text(image)
    except engine.UnreadableImageError:
        return _error("UnsupportedDocumentException", "Request has unsupported document format")
    return 200, {"status": "200"}, json.dumps(answer)


class _Installed:
    done = False


def install() -> None:
    """Serve DetectDocumentText with the local OCR engine (once per process)."""
    if _Installed.done:
        return
    TextractResponse.detect_document_text = _detect_document_text  # type: ignore[method-assign,assignment]
    _Installed.done = True
