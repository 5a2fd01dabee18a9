"""The model seam: a provider protocol (one call: a document, a system prompt, a user text; the reply's text
back). The prompts are the job definition's (functions/inference/prompts.py)."""

from __future__ import annotations

import hashlib
from typing import Protocol

from functions.payloads.model_calls import ModelReply
from functions.reading.documents import DocumentInput


class ModelProvider(Protocol):
    """Answers one document with one model call: the reply's text and its token usage. What the reply means
    (a class, a class's fields) is read by the caller (functions/checks/fields.py)."""

    @property
    def system(self) -> str:
        """The OpenTelemetry ``gen_ai.system`` value (e.g. ``aws.bedrock``)."""
        ...

    @property
    def operation(self) -> str:
        """The OpenTelemetry ``gen_ai.operation.name`` value (e.g. ``chat``)."""
        ...

    @property
    def model_id(self) -> str: ...

    def converse(self, document: DocumentInput, system: str, user: str) -> ModelReply:
        """One model call with ``system`` as the system prompt and ``user`` as the text beside the document.
        Raises ExtractionFailed when the reply was cut off, DocumentUnreadable/DocumentTooLong when the model
        refuses the document itself, and a ModelError when the call did not finish."""
        ...


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def estimate_tokens(text: str) -> int:
    """A rough token count (words), for providers that do not report usage."""
    return len(text.split())
