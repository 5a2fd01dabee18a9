"""The model seam: a provider protocol (one call: a document, a system prompt, a user text; the reply's text
back), and the deployment's prompt versions (PROMPT_VERSION, pinned in JobVersions)."""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from functions.documents import DocumentInput
from functions.models import ModelReply, prompt_file_name

PROMPTS_DIR = Path(__file__).resolve().parent.parent / "prompts"
_PROMPT_VERSION = re.compile(r"^[a-z0-9-]+$")


@dataclass(frozen=True)
class Prompt:
    version: str
    text: str
    sha256: str


@functools.cache
def load_prompt(version: str) -> Prompt:
    """The system prompt of a version: ``extract-v1`` is ``prompts/extract_v1.txt``."""
    if not _PROMPT_VERSION.match(version):
        raise ValueError(f"invalid prompt version {version!r}")
    path = PROMPTS_DIR / prompt_file_name(version)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ValueError(f"no prompt file for prompt version {version!r} ({path.name})") from None
    return Prompt(version=version, text=raw.decode("utf-8"), sha256=hashlib.sha256(raw).hexdigest())


class ModelProvider(Protocol):
    """Answers one document with one model call: the reply's text and its token usage. What the reply means
    (a class, a class's fields) is read by the caller (functions/fields.py)."""

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
