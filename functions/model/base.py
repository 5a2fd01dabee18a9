"""The model seam: a provider protocol, the pinned prompt, and parsing of the model's JSON reply."""

from __future__ import annotations

import functools
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from pydantic import ValidationError

from functions.documents import DocumentInput
from functions.errors import ExtractionFailed
from functions.models import ExtractedFacts, ModelResponse, prompt_file_name

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
    """Extracts ExtractedFacts from a document (its bytes, format and neutral name) with one model call."""

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

    def extract(self, document: DocumentInput, prompt: str) -> ModelResponse:
        """One model call. Raises ExtractionFailed when the reply is not valid JSON for the schema, and
        DocumentUnreadable when the model refuses the document itself (corrupt, encrypted, no pages)."""
        ...


def user_instruction(document: DocumentInput) -> str:
    """The text block beside the document block (Converse requires one): it names the block, nothing else."""
    return (
        f"Extract the invoice facts from the attached document {document.name}. "
        "Reply with the JSON object only."
    )


_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)
# A valid reply (ExtractedFacts as JSON) is well under 1,000 characters. Anything this long is not an
# extraction (a runaway reply, or a document that talked the model into writing something else).
MAX_REPLY_CHARS = 10_000


def parse_facts(reply: str, *, model_id: str, input_tokens: int, output_tokens: int) -> ExtractedFacts:
    """Parse and validate the model's reply; ExtractionFailed says precisely what was wrong."""

    def failed(message: str) -> ExtractionFailed:
        return ExtractionFailed(
            message, model_id=model_id, input_tokens=input_tokens, output_tokens=output_tokens
        )

    if len(reply) > MAX_REPLY_CHARS:
        raise failed(
            f"model reply is too large: {len(reply)} characters, over the limit of {MAX_REPLY_CHARS}"
        )
    text = reply.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    if not text:
        raise failed("model reply is empty")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        where = f"line {error.lineno} column {error.colno}"
        raise failed(f"model reply is not valid JSON ({error.msg} at {where})") from None
    if not isinstance(data, dict):
        raise failed(f"model reply is JSON {type(data).__name__}, not an object")
    try:
        return ExtractedFacts.model_validate(data)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in issue['loc']) or 'reply'}: {issue['msg']}"
            for issue in error.errors()
        )
        raise failed(f"model reply does not match the extraction schema: {problems}") from None


def estimate_tokens(text: str) -> int:
    """A rough token count (words), for providers that do not report usage."""
    return len(text.split())
