"""A local Bedrock Runtime: the ``Converse`` operation at the local cloud's endpoint.

boto3's ``bedrock-runtime`` client with ``endpoint_url`` (or ``AWS_ENDPOINT_URL``) reaches it: moto routes
``POST /model/{modelId}/converse`` (signing name ``bedrock``) to its Bedrock Runtime responses, which
implement no Converse; ``install()`` adds one. It reads what a call asks from its user text
(functions/inference/instructions.py) and answers from the document's label, found by the sha256 of the
document
block's bytes, or of the first image block's (images.py: image blocks checked with Converse's limits)
(labels.py): an extract call with the label's fields, a classify call with ``{"class": ...}``; a
document with no label is refused with how to add one, unless a reader (``local up --reader FILE``) answers
extract calls of its class. Replies carry token usage, so the production provider
(``BedrockConverseProvider``) runs end to end. Fault switches (``ModelFaults``) make it answer as Bedrock does
when busy or refusing: ThrottlingException (429), ServiceUnavailableException (503), a hang past the client's
read timeout, a malformed or cut-off reply (``stopReason`` max_tokens), one field of the reply made wrong
(``corrupt``, for ``docagent eval``), AccessDeniedException or ResourceNotFoundException for chosen model ids;
``models=ID`` keeps the other faults to the calls of chosen model ids (a cascade's cheap model).
An input longer than the model's context window is refused as Bedrock refuses it (ValidationException, HTTP
400). They are set when the cloud starts (``docagent local up --model-faults ...``) and changed while it runs
through ``/_docagent/bedrock/faults`` (``docagent local model-faults ...``).
"""

from __future__ import annotations

import base64
import binascii
import json
import random
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docagent.localcloud.bedrock import billed_tokens
from docagent.localcloud.bedrock.backends import (
    Backend,
    ModelChoice,
    backend_of,
    converse_answer,
    error_answer,
)
from docagent.localcloud.bedrock.batch_api import BatchService
from docagent.localcloud.bedrock.document_text import extract_text
from docagent.localcloud.bedrock.evidence import with_evidence
from docagent.localcloud.bedrock.image_blocks import read_images, visual_tokens
from docagent.localcloud.bedrock.labels import LabelStore, Reader, document_sha256, no_label, slice_digest
from docagent.localcloud.bedrock.model_faults import ModelFaults
from docagent.localcloud.bedrock.page_windows import window_reply
from docagent.localcloud.bedrock.prompt_cache import PromptCache
from docagent.localcloud.bedrock.recordings import RecordedReply, write_recordings
from docagent.localcloud.textract.reading import seen_pages
from functions.errors import DocumentUnreadable
from functions.inference.evidence import asked_quotes
from functions.inference.instructions import asked
from functions.reading.documents import CONVERSE_FORMATS, MAX_CONVERSE_DOCUMENTS, detect_format, name_problem
from functions.reading.page_texts import page_texts
from functions.reading.page_windows import PageWindow, window_source

# The model's context window: Claude Haiku 4.5 (the default model, stacks/config.py) takes 200,000 tokens
# (looked up 2026-12-01, AWS docs "Claude Haiku 4.5" model card: "Context window: 200K tokens"; the other
# Claude models a local job would name have as much or more). The local endpoint holds every model to it.
CONTEXT_WINDOW_TOKENS = 200_000
# Bedrock's answer to an input over the window (HTTP 400 ValidationException; as Converse words it in public
# bug reports, looked up 2026-12-01).
TOO_LONG_MESSAGE = "Input is too long for requested model."
_DOCUMENT_START, _DOCUMENT_END = "<document>\n", "\n</document>"
# What a model that saw an empty document replies (a scanned PDF read without citations: images.py).
BLIND_REPLY = "{}"
MALFORMED_REPLY = "I'm sorry, I can only describe this document in prose: it looks like a letter."


@dataclass(frozen=True)
class MessageInput:
    """What the local model reads of a message: text, the hash its label is found by, image tokens."""

    text: str
    digest: str
    image_tokens: int
    blind: bool = False
    window: PageWindow | None = None  # a long PDF's or TIFF's page window: answered from its source's label


class LocalBedrock:
    """The process-wide state of the local Bedrock Runtime (moto's backends are process-wide too)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.faults = ModelFaults()
        self.stats: Counter[str] = Counter()
        self._random = random.Random()
        self.stopping = threading.Event()
        self.prompt_cache = PromptCache()
        self.labels = LabelStore()
        self.reader: Reader | None = None
        self.model = ModelChoice()
        self.backend: Backend | None = None

    def choose_model(self, choice: ModelChoice) -> None:
        """What answers the model calls from now on (docagent/localcloud/bedrock/backends.py)."""
        with self.lock:
            self.model, self.backend = choice, backend_of(choice)

    def record(self, user_text: str, digest: str, body: str, beside_samples: bool = True) -> None:
        """Keep a forwarded reply as its document's recording (and beside its labelled sample, if it has one
        and ``beside_samples``)."""
        question = asked(user_text)
        purpose = "extract" if question is None else question.kind
        class_name = question.class_name if question is not None and purpose == "extract" else None
        answered = json.loads(body)
        reply = "".join(block.get("text", "") for block in answered["output"]["message"]["content"])
        usage = answered.get("usage", {})
        recording = self.labels.keep_reply(
            digest,
            RecordedReply(
                purpose=purpose,
                class_name=class_name,
                reply=reply,
                input_tokens=usage.get("inputTokens"),
                output_tokens=usage.get("outputTokens"),
            ),
        )
        if beside_samples and recording.source and Path(recording.source).parent.is_dir():
            write_recordings(Path(recording.source).parent, [recording])
        self._count("recorded")

    def configure(self, faults: ModelFaults) -> None:
        with self.lock:
            self.faults = faults
            self._random = random.Random(faults.seed)

    def reset(self) -> None:
        self.configure(ModelFaults())
        with self.lock:
            self.stats.clear()
        self.stopping.clear()

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            return {
                "faults": self.faults.model_dump(),
                "stats": dict(self.stats),
                "model": self.model.model_dump(),
            }

    def replay(self, user_text: str, digest: str) -> RecordedReply | None:
        """A real model's recorded reply to this call, replayed as it was given (no evidence added)."""
        question = asked(user_text)
        purpose = "extract" if question is None else question.kind
        recorded = self.labels.recorded(digest, purpose, question.class_name if question else None)
        if recorded is not None:
            self._count("replayed")
        return recorded

    def answer(self, user_text: str, digest: str, text: str) -> str | tuple[int, dict[str, str], str]:
        """The reply to what the user text asks about the document whose bytes hash to ``digest`` (its text
        ``text``), from its label, or the refusal of a document the local Bedrock cannot answer. A user text
        no docagent function writes is taken as an extract call of any class."""
        question = asked(user_text)
        label = self.labels.get(digest)
        if question is not None and question.kind == "classify-pages":
            if label is not None and not label.unlabelled:
                self._count("labelled")
                count = (question.last or 1) - (question.first or 1) + 1
                pages = [answer.model_dump(mode="json") for answer in label.page_answers(count)]
                return json.dumps({"pages": pages})
            if label is not None:  # a packet's window with pages in no labelled section
                self._count("unlabelled")
                unlabelled = ", ".join(str(page) for page in label.unlabelled)
                return _invalid(f"messages.0.content.0.document: {no_label(digest)} (pages {unlabelled})")
        elif question is not None and question.kind == "classify":
            if label is not None:
                self._count("labelled")
                return json.dumps({"class": None if label.no_class else label.class_name})
        elif label is not None and not label.no_class:
            self._count("labelled")
            return json.dumps(label.fields)
        elif self.reader is not None and (question is None or question.class_name == self.reader.class_name):
            self._count("read")
            return self.reader.reply(text)
        self._count("unlabelled")
        return _invalid(f"messages.0.content.0.document: {no_label(digest)}")

    def _message_input(
        self, blocks: list[dict[str, Any]], user_text: str, model_id: str
    ) -> MessageInput | tuple[int, dict[str, str], str]:
        """What the local model reads of the message (its documents' text, or none for images: it reads no
        pixels) and the hash its label is found by, or the ValidationException Bedrock answers for a block."""
        read = read_documents(blocks, model_id)
        if isinstance(read, tuple):
            self._count("invalid_documents")
            return read
        images = read_images(blocks)
        if isinstance(images, str):
            self._count("invalid_images")
            return _invalid(images)
        if read is not None:
            visual = visual_tokens(blocks)
            blind = visual is None and not read.strip()  # a scan read without citations: nothing to see
            tokens = images.tokens + (visual or 0)
            source = window_source(document_bytes(blocks) or b"")
            if source is not None:  # a page window: its source's label answers it (page_windows.py)
                return MessageInput(read, source.sha256, tokens, blind, source.window)
            return MessageInput(read, document_digest(blocks), tokens, blind)
        if images.count:
            source = window_source(images.first)
            window = source.window if source is not None else None
            part = (
                None
                if source is None or window is None
                else slice_digest(source.sha256, window.first, window.last)
            )
            if part is not None and self.labels.get(part) is not None:  # a TIFF packet's slice: its own label
                return MessageInput("", part, images.tokens)
            if source is not None:  # a long TIFF's page window: its source's label answers it
                return MessageInput("", source.sha256, images.tokens, window=source.window)
            return MessageInput("", images.digest, images.tokens)
        # no document block: the text between <document> markers, or all of it
        text = user_text.split(_DOCUMENT_START, 1)[-1].rsplit(_DOCUMENT_END, 1)[0]
        return MessageInput(text, document_sha256(text.encode("utf-8")), 0)

    def _with_faults(
        self,
        reply: str,
        model_id: str,
        *,
        evidence: bool,
        pages: list[str] | None = None,
        quotes: dict[str, str] | None = None,
        split: bool = False,
        quoted: list[str] | None = None,
    ) -> str:
        """An answer with its evidence (``evidence``: an extract call answered from a label, ``quotes`` the
        label's own: docagent/localcloud/bedrock/evidence.py), then the ``corrupt`` and ``misquote`` faults
        (for the models they apply to), and a page classification's (``split``) ``split`` fault."""
        if evidence:
            reply = with_evidence(reply, pages or [], quotes, quoted)
        if not self.faults.applies_to(model_id):
            return reply
        if split:
            reply = self.faults.wrong_split(reply, self._draw())
        if self.faults.corrupt is not None:
            reply = self.faults.corrupted(reply, self._draw())
        if self.faults.misquote is not None:
            reply = self.faults.misquoted(reply, self._draw())
        return reply

    def _label_quotes(self, digest: str) -> dict[str, str] | None:
        """The supporting quotes the label of the document ``digest`` gives (its ``_evidence``), if any."""
        label = self.labels.get(digest)
        return label.quotes if label is not None else None

    def _draw(self) -> float:
        with self.lock:
            return self._random.random()

    def _count(self, name: str, amount: int = 1) -> None:
        with self.lock:
            self.stats[name] += amount

    def _faulted(self, model_id: str) -> tuple[int, dict[str, str], str] | None:
        """The error a configured fault answers before the model reads anything (--model-faults), or None."""
        faults = self.faults
        if faults.latency and faults.applies_to(model_id):
            self.stopping.wait(faults.latency)
        if model_id in faults.deny:
            self._count("access_denied")
            return _error(
                403,
                "AccessDeniedException",
                "You don't have access to the model with the specified model ID.",
            )
        if model_id in faults.missing:
            self._count("not_found")
            return _error(404, "ResourceNotFoundException", "Model not found.")
        if not faults.applies_to(model_id):
            return None
        draw = self._draw()
        if draw < faults.throttle:
            self._count("throttled")
            return _error(429, "ThrottlingException", "Too many requests, please wait before trying again.")
        if draw < faults.throttle + faults.unavailable:
            self._count("unavailable")
            return _error(503, "ServiceUnavailableException", "Service unavailable. Try your request again.")
        if draw < faults.throttle + faults.unavailable + faults.timeout:
            self._count("timed_out")
            self.stopping.wait(600)  # past any client's read timeout; ends when the cloud stops
            return _error(503, "ServiceUnavailableException", "The local cloud stopped.")
        return None

    def converse(
        self,
        model_id: str,
        system: list[dict[str, Any]],
        messages: list[dict[str, Any]],
        max_tokens: int,
        tool_config: dict[str, Any] | None = None,
    ) -> tuple[int, dict[str, str], str]:
        """One Converse call: (HTTP status, headers, body), as Bedrock answers it; ``usage`` counts what
        Bedrock would bill for it (docagent/localcloud/bedrock/billed_tokens.py)."""
        faults = self.faults
        self._count("calls")
        started = time.monotonic()
        refused = self._faulted(model_id)
        if refused is not None:
            return refused
        blocks = [block for message in messages for block in message.get("content", [])]
        user_text = "".join(block.get("text", "") for block in blocks)
        message = self._message_input(blocks, user_text, model_id)
        if isinstance(message, tuple):
            return message
        read, digest, image_tokens = message.text, message.digest, message.image_tokens
        documents_text = read if any("document" in block for block in blocks) else ""
        prompt = "".join(block.get("text", "") for block in system)
        if estimate_input_tokens(prompt, user_text, read) + image_tokens + max_tokens > CONTEXT_WINDOW_TOKENS:
            self._count("too_long")
            return _invalid(TOO_LONG_MESSAGE)
        backend, model = self.backend, self.model
        if backend is not None:  # a real model answers (--model bedrock | openai=URL)
            self._count("forwarded")
            forwarded = backend.converse(model_id, system, messages, max_tokens, documents_text)
            if forwarded[0] == 200 and model.record and message.window is None:  # a window: no recording
                self.record(user_text, digest, forwarded[2], model.beside_samples)
            return forwarded
        # a recording answers a whole document's call, never one page window's (recordings skip windows)
        replayed = None if message.window is not None else self.replay(user_text, digest)
        if replayed is not None:
            reply = self._with_faults(replayed.reply, model_id, evidence=False)
        elif message.blind:  # a scan read without citations: nothing seen, nothing quoted
            reply = BLIND_REPLY
        else:
            answered = self.answer(user_text, digest, read)
            if isinstance(answered, tuple):
                return answered
            pages, question = document_pages(blocks, read), asked(user_text)
            evidence = question is None or question.kind == "extract"
            if message.window is not None and evidence:
                answered = window_reply(answered, message.window, pages)
            reply = self._with_faults(  # a scan's pages as OCR reads them (#52: seen_pages), not a window's
                answered,
                model_id,
                evidence=evidence,
                pages=seen_pages(blocks, pages) if evidence and message.window is None else pages,
                quotes=self._label_quotes(digest),
                split=question is not None and question.kind == "classify-pages",
                quoted=asked_quotes("".join(block.get("text", "") for block in system)),
            )
        stop_reason = "end_turn"
        shape = self._draw() if faults.applies_to(model_id) else 1.0
        if shape < faults.malformed:
            self._count("malformed")
            reply = MALFORMED_REPLY
        elif shape < faults.malformed + faults.cutoff or billed_tokens.output_tokens(reply) > max_tokens:
            self._count("cut_off")
            words = reply.split(" ")
            reply, stop_reason = " ".join(words[: max(1, min(max_tokens, len(words) // 2))]), "max_tokens"
        input_tokens = billed_tokens.input_tokens(system, messages, read, tool_config) + image_tokens
        output_tokens = billed_tokens.output_tokens(reply)
        if replayed is not None and replayed.input_tokens is not None and replayed.output_tokens is not None:
            input_tokens, output_tokens = replayed.input_tokens, replayed.output_tokens  # as the model billed
        self._count("answered")
        self._count("input_tokens", input_tokens)
        self._count("output_tokens", output_tokens)
        return converse_answer(  # a cachePoint's prefix counted apart
            reply,
            stop_reason,
            input_tokens,
            output_tokens,
            started,
            cached=self.prompt_cache.usage(model_id, system),
        )


def estimate_input_tokens(*texts: str) -> int:
    """The input's tokens as the local endpoint counts them against the context window: the texts at the
    billed rate of characters a token (billed_tokens.CHARACTERS_PER_TOKEN, about 4 for English text;
    Anthropic's rule of thumb is ~3.5), so the estimate errs on the short side and a document it refuses is
    one Bedrock would refuse too."""
    return billed_tokens.text_tokens("".join(texts))


def read_documents(
    blocks: list[dict[str, Any]], model_id: str = ""
) -> str | tuple[int, dict[str, str], str] | None:
    """The text of the message's document blocks, None when it has none, or the ValidationException Bedrock
    answers for them (as of 2026-11, AWS docs "Message" and "DocumentBlock": at most five documents of 4.5 MB,
    a text block beside them, a known format, a name of 1 to 200 allowed characters; a document it cannot
    parse is refused). The text comes from docagent/localcloud/bedrock/document_text.py (pypdf, python-docx,
    openpyxl, xlrd, stdlib)."""
    documents = [(index, block["document"]) for index, block in enumerate(blocks) if "document" in block]
    if not documents:
        return None
    if len(documents) > MAX_CONVERSE_DOCUMENTS:
        return _invalid(
            f"messages.0.content: at most {MAX_CONVERSE_DOCUMENTS} documents, got {len(documents)}"
        )
    if not any("text" in block for block in blocks):
        return _invalid("messages.0.content: a message with a document needs a text block too")
    texts = []
    for index, document in documents:
        where = f"messages.0.content.{index}.document"
        problem = name_problem(str(document.get("name", "")))
        if problem is not None:
            return _invalid(f"{where}.name: the document name is invalid: {problem}")
        declared = str(document.get("format", "txt"))
        if declared not in CONVERSE_FORMATS:
            return _invalid(f"{where}.format: {declared!r} is not one of {', '.join(CONVERSE_FORMATS)}")
        raw = (document.get("source") or {}).get("bytes", b"")
        try:  # moto's request parsing decodes the blob; a raw JSON body would still hold base64
            data = raw if isinstance(raw, bytes) else base64.b64decode(str(raw), validate=True)
        except binascii.Error:
            return _invalid(f"{where}.source.bytes: the document bytes are not valid base64")
        try:
            texts.append(extract_text(data, declared, model_id))
        except DocumentUnreadable as refused:
            return _invalid(
                f"The model returned the following errors: {where}.source.bytes: {refused.reason}"
            )
    return "\n\n".join(texts)


def document_pages(blocks: list[dict[str, Any]], text: str) -> list[str]:
    """The first document block's page texts as the grounding check reads them
    (functions/reading/page_texts.py), else ``text`` as one page."""
    for block in blocks:
        if "document" in block:
            raw = (block["document"].get("source") or {}).get("bytes", b"")
            data = raw if isinstance(raw, bytes) else base64.b64decode(str(raw))
            return page_texts(data, detect_format(data)) or [text]
    return [text]


def document_bytes(blocks: list[dict[str, Any]]) -> bytes | None:
    """The first document block's bytes (read_documents has checked them), None without one."""
    for block in blocks:
        if "document" in block:
            raw = (block["document"].get("source") or {}).get("bytes", b"")
            return raw if isinstance(raw, bytes) else base64.b64decode(str(raw))
    return None


def document_digest(blocks: list[dict[str, Any]]) -> str:
    """The sha256 of the first document block's bytes, "" without one."""
    data = document_bytes(blocks)
    return "" if data is None else document_sha256(data)


def _invalid(message: str) -> tuple[int, dict[str, str], str]:
    return _error(400, "ValidationException", message)


_error = error_answer


STATE = LocalBedrock()
# The control plane's batch inference jobs, answered record by record by the same local Bedrock.
BATCH = BatchService(STATE.converse, lambda: STATE.faults, STATE._draw)
