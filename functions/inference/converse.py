"""Amazon Bedrock through the Converse API, with its failures named (docs/design.md, "Model calls")."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from botocore.exceptions import (
    ClientError,
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    ReadTimeoutError,
)
from botocore.parsers import ResponseParserError
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from functions import aws
from functions.budget import MAX_INPUT_TOKENS
from functions.errors import (
    DocumentNotLabelled,
    DocumentTooLong,
    DocumentUnreadable,
    ExtractionFailed,
    ModelAccessDenied,
    ModelError,
    ModelNotAvailable,
    ModelReplyInvalid,
    ModelRequestInvalid,
    ModelThrottled,
    ModelUnavailable,
)
from functions.inference.prompt_cache import system_blocks
from functions.payloads.common import InferenceMode
from functions.payloads.model_calls import ModelReply
from functions.reading.documents import (
    LOCAL_BAD_REPLY,
    LOCAL_NO_LABEL,
    DocumentInput,
    is_document_refusal,
    is_too_long,
)

if TYPE_CHECKING:
    from mypy_boto3_bedrock_runtime import BedrockRuntimeClient

DEFAULT_MAX_TOKENS = 800
# The read timeout of a call: this share of the invocation's remaining time, at most
# MAX_READ_TIMEOUT_SECONDS, so the journal write and the result still fit before the function's timeout;
# rounded down to the second (to the tenth under a second): the SDK client is made per read timeout
# (functions/aws.py), and a timeout to the tenth made a new client, with a new connection, for about half the
# calls of a warm worker (17 clients for 40 documents on 8 workers, 2026-12-08; 2-4 ms of CPU each).
READ_TIMEOUT_SHARE = 0.7
MAX_READ_TIMEOUT_SECONDS = 60
# Below this much remaining time no call is started: it is retried as ModelUnavailable in a fresh invocation.
MIN_SECONDS_FOR_A_CALL = 0.5
# What a call's ModelUnavailable says when its read timeout ran out (the demo names it "timed out").
TIMED_OUT = "Bedrock did not answer in time"

# Error codes of the Converse API (as of 2026-11, AWS docs: Bedrock API Reference, "Converse", Errors).
THROTTLED_CODES = frozenset(
    {"ThrottlingException", "ServiceQuotaExceededException", "TooManyRequestsException"}
)
UNAVAILABLE_CODES = frozenset(
    {
        "ServiceUnavailableException",
        "ModelTimeoutException",
        "ModelNotReadyException",
        "InternalServerException",
        "ModelErrorException",
        "InternalFailure",
        "ServiceUnavailable",
    }
)
# A ValidationException with one of these in its message is about the model id, not the request: an EOL model
# answers "The provided model identifier is invalid"; a model that needs a profile says "inference profile".
_MODEL_ID_PHRASES = ("model identifier", "inference profile", "end of its life", "end-of-life", "model id")


def model_access_fix(model_id: str) -> str:
    """What makes a model accessible now. Looked up 2026-12-01 (AWS docs, Bedrock User Guide "Access Amazon
    Bedrock foundation models", model-access.html): the console's "Model access" page is retired; every
    serverless model is enabled by default "with the correct AWS Marketplace permissions". The first call of
    a third-party model subscribes the account through AWS Marketplace in the background (up to 15 minutes),
    which needs the caller to hold aws-marketplace:Subscribe, Unsubscribe and ViewSubscriptions and the
    account a valid payment method; Anthropic models also need the first-time-use form (use case details,
    once per account or per organization's management account). After a denied subscription is fixed,
    calls may be denied for up to 2 more minutes. IAM policies and SCPs restrict access."""
    return (
        f"{model_id} has no console 'Model access' switch any more (AWS retired that page; models are "
        "enabled by default). For an Anthropic model, submit the first-time-use form once (Bedrock console "
        "> Model catalog > the model: use case details); then have an administrator, whose identity may "
        "call aws-marketplace:Subscribe, Unsubscribe and ViewSubscriptions in an account with a valid "
        "payment method, run `docagent preflight --aws --invoke`: that first call subscribes the account "
        "(allow up to 15 minutes). Check too that the ProcessDocument role may call bedrock:InvokeModel on "
        "the inference profile and its foundation models and that no SCP denies it."
    )


def classify(error: ClientError, model_id: str) -> ModelError:
    """The named docagent error for a Bedrock ClientError; a permanent one says what to do."""
    details = error.response.get("Error", {})
    code = str(details.get("Code", ""))
    message = str(details.get("Message", "")) or code
    status = int(error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)
    said = f"Bedrock {code or status}: {message}"
    if code in THROTTLED_CODES or status == 429:
        return ModelThrottled(f"{said} (retried with backoff; raise the model's quota if it persists)")
    if code in UNAVAILABLE_CODES or status >= 500:
        return ModelUnavailable(f"{said} (transient; retried with backoff)")
    if code == "AccessDeniedException" or status == 403:
        fix = model_access_fix(model_id)
        return ModelAccessDenied(f"{said}. Fix: {fix} Then `docagent redrive` the job.")
    if (
        code == "ResourceNotFoundException"
        or status == 404
        or (code == "ValidationException" and any(phrase in message.lower() for phrase in _MODEL_ID_PHRASES))
    ):
        return ModelNotAvailable(
            f"{said}. Fix: {model_id} is not offered here (wrong region, past its end of life, or it needs "
            "an inference profile id): pick an Active model (`docagent preflight --aws` shows its "
            "lifecycle), set model_id in cdk.json, deploy, and start the job again (a job keeps the model "
            "it was prepared with)."
        )
    return ModelRequestInvalid(
        f"{said}. Fix: the request does not suit {model_id}: check model_max_tokens and model_temperature in "
        "cdk.json against the model's limits, deploy, and start the job again."
    )


def document_refusal(
    error: ClientError, document: DocumentInput
) -> DocumentTooLong | DocumentUnreadable | ModelReplyInvalid | None:
    """A ValidationException about this one document: longer than the model's context window
    (DocumentTooLong), or a document block Bedrock cannot parse (DocumentUnreadable, e.g. a corrupt or
    encrypted PDF, over 100 pages). That document's rejection, not the job's (docs/design.md, "Documents").

    None for any other error: ``classify`` names it, and a ValidationException nobody recognises is
    ModelRequestInvalid, which opens the job's breaker. That default is the safe one: a message docagent
    does not know may be about its own request (a model setting, the request's shape), the same for every
    document, and stopping after about MaxConcurrency calls loses nothing (redrive after the fix), while
    rejecting per document would reject every document of a job, each with a stored result, silently."""
    details = error.response.get("Error", {})
    message = str(details.get("Message", ""))
    if details.get("Code") == "ModelErrorException" and LOCAL_BAD_REPLY in message:
        return ModelReplyInvalid(message[message.index(LOCAL_BAD_REPLY) :])
    if details.get("Code") != "ValidationException":
        return None
    if is_too_long(message):
        return DocumentTooLong(
            f"Bedrock refused the {document.format} document ({len(document.data)} bytes) as longer than "
            f"the model's context window: {message}"
        )
    if LOCAL_NO_LABEL in message:
        return DocumentNotLabelled(message[message.index(LOCAL_NO_LABEL) :])
    if is_document_refusal(message):
        return DocumentUnreadable(f"Bedrock refused the {document.format} document: {message}")
    return None


class BedrockConverseProvider:
    """One Converse call per document: the system prompt, the document block and the user text; the reply's
    text back (the caller parses it against the class's schema).

    ``time_left`` (seconds remaining in the invocation) sets each call's read timeout; a call that fails
    raises a ``ModelError`` subclass, a finished call with a bad reply raises ``ExtractionFailed``.
    """

    system = "aws.bedrock"
    operation = "chat"

    def __init__(
        self,
        model_id: str,
        client: BedrockRuntimeClient | None = None,
        *,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        temperature: float = 0.0,
        time_left: Callable[[], float] | None = None,
    ) -> None:
        self._model_id = model_id
        self._client = client
        self._max_tokens = max_tokens
        self._temperature = temperature
        self._time_left = time_left

    @property
    def model_id(self) -> str:
        return self._model_id

    def read_timeout(self) -> float:
        """Seconds (a tenth at least) for the call's read timeout, below the invocation's remaining time:
        its READ_TIMEOUT_SHARE rounded down to the second, or to the tenth under a second."""
        if self._time_left is None:
            return MAX_READ_TIMEOUT_SECONDS
        remaining = self._time_left()
        if remaining < MIN_SECONDS_FOR_A_CALL:
            error = ModelUnavailable(
                f"only {remaining:.1f} s left in this invocation: not enough for a model call (retried)"
            )
            error.call_made = False
            raise error
        share = remaining * READ_TIMEOUT_SHARE
        rounded = math.floor(share) if share >= 1 else math.floor(share * 10) / 10
        return max(0.1, min(MAX_READ_TIMEOUT_SECONDS, rounded))

    def converse(self, document: DocumentInput, system: str, user: str) -> ModelReply:
        client = self._client or aws.bedrock_runtime_client(self.read_timeout())
        body = converse_body(
            document, system, user, self._max_tokens, self._temperature, model_id=self._model_id
        )
        try:
            response = client.converse(modelId=self._model_id, **body)
        except ClientError as error:
            refused = document_refusal(error, document)
            if refused is not None:
                raise refused from None
            raise classify(error, self._model_id) from None
        except (ReadTimeoutError, ConnectTimeoutError) as error:
            raise ModelUnavailable(f"{TIMED_OUT} ({error}); retried") from None
        except (EndpointConnectionError, ConnectionClosedError) as error:
            raise ModelUnavailable(f"Bedrock could not be reached ({error}); retried") from None
        except (ResponseParserError, AttributeError, TypeError, ValueError) as error:
            # The call was answered (HTTP 2xx) with a body botocore cannot read as a Converse answer: a list
            # (AttributeError), a wrong type (ValueError: int("lots")), bytes that are not UTF-8. The same
            # request would get the same answer: this document's failure, not a retry.
            raise ModelReplyInvalid(
                f"model reply is not a Converse answer ({type(error).__name__}: {str(error)[:200]})",
                model_id=self._model_id,
                tokens_clamped=UNKNOWN_USAGE,
            ) from None
        return read_reply(response, self._model_id, self._max_tokens)


def converse_body(
    document: DocumentInput,
    system: str,
    user: str,
    max_tokens: int,
    temperature: float,
    *,
    model_id: str | None = None,
) -> dict[str, Any]:
    """The Converse request's body but the model id: the system prompt (with a cache checkpoint where the
    model caches a prompt this long: functions/inference/prompt_cache.py), one user message of the
    document's blocks (a document block, or an image document's image blocks) and the user text, the
    inference settings. A batch record's ``modelInput`` is the same body without the checkpoint (no
    ``model_id``: functions/batch_inference/input_records.py), so a batch reply answers exactly the call the
    on-demand path would make."""
    return {
        "system": system_blocks(system, model_id),
        "messages": [{"role": "user", "content": [*document.converse_blocks(), {"text": user}]}],
        "inferenceConfig": {"maxTokens": max_tokens, "temperature": temperature},
    }


def reply_text(content: Sequence[Mapping[str, Any]]) -> str:
    """The reply's text: its text blocks and, for a document read with citations (a visual PDF), the text
    of its ``citationsContent`` blocks (AWS API Reference "CitationsContentBlock": ``content``, a list of
    ``{"text"}``, with the ``citations`` that ground it; looked up 2026-12-04)."""
    parts = []
    for block in content:
        if "text" in block:
            parts.append(str(block["text"]))
        for generated in (block.get("citationsContent") or {}).get("content", []):
            parts.append(str(generated.get("text", "")))
    return "".join(parts)


class _Usage(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)

    inputTokens: int = Field(ge=0)  # noqa: N815 (Converse's names)
    outputTokens: int = Field(ge=0)  # noqa: N815
    # with prompt caching (AWS "Prompt caching", looked up 2026-12-07): inputTokens are the tokens neither
    # read from nor written to the cache; these are the others, absent without caching
    cacheReadInputTokens: int = Field(0, ge=0)  # noqa: N815
    cacheWriteInputTokens: int = Field(0, ge=0)  # noqa: N815


class _Message(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)

    content: list[dict[str, Any]]


class _Output(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)

    message: _Message


class ConverseAnswer(BaseModel):
    """What a Converse answer must hold to be read (AWS Bedrock API Reference "Converse", Response Syntax:
    ``output``, ``stopReason`` and ``usage`` are required; looked up 2026-12-07). Anything else in it is
    ignored."""

    model_config = ConfigDict(extra="ignore", strict=True)

    output: _Output
    stopReason: str  # noqa: N815
    usage: _Usage


# The record's note for a call whose answer gave no usable token counts.
UNKNOWN_USAGE = "usage unknown: the answer could not be read, recorded as 0 tokens"


def first_problem(error: ValidationError) -> str:
    """The first thing wrong with an answer (Converse's, a chat completion), in one line:
    ``usage.inputTokens: Input should be a valid integer (got 'lots')``."""
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "the answer"
    got = "" if first["type"] == "missing" else f" (got {str(first.get('input'))[:60]!r})"
    return f"{where}: {first['msg']}{got}"


def clamped_usage(input_tokens: int, output_tokens: int, max_tokens: int) -> tuple[int, int, str | None]:
    """The tokens a call is recorded (and priced) with: never more output than the request's maxTokens, nor
    more input than a request can hold (budget.MAX_INPUT_TOKENS, the context window); the note names a
    clamp (None: as reported)."""
    notes = []
    if output_tokens > max_tokens:
        notes.append(
            f"output tokens {output_tokens:,} reported, clamped at the request's maxTokens {max_tokens:,}"
        )
    if input_tokens > MAX_INPUT_TOKENS:
        notes.append(
            f"input tokens {input_tokens:,} reported, clamped at the context window's {MAX_INPUT_TOKENS:,}"
        )
    clamped = (min(input_tokens, MAX_INPUT_TOKENS), min(output_tokens, max_tokens))
    return (*clamped, "; ".join(notes) or None)


def read_reply(
    response: Mapping[str, Any], model_id: str, max_tokens: int, inference: InferenceMode = "on_demand"
) -> ModelReply:
    """A Converse response (or a batch output record's ``modelOutput``, the same shape) as the reply's text
    and usage, the usage clamped at what the request allowed (``clamped_usage``); ModelReplyInvalid when it
    is not a Converse answer; a reply cut off at the token limit raises ExtractionFailed (a finished call)."""
    try:
        answer = ConverseAnswer.model_validate(dict(response))
        reply = reply_text(answer.output.message.content)
    except ValidationError as error:
        raise ModelReplyInvalid(
            f"model reply is not a Converse answer: {first_problem(error)}",
            model_id=model_id,
            tokens_clamped=UNKNOWN_USAGE,
        ) from None
    except (AttributeError, TypeError) as error:  # a content block that is not a text block's shape
        raise ModelReplyInvalid(
            f"model reply is not a Converse answer: its content ({type(error).__name__}: {error})",
            model_id=model_id,
            tokens_clamped=UNKNOWN_USAGE,
        ) from None
    input_tokens, output_tokens, clamp = clamped_usage(
        answer.usage.inputTokens, answer.usage.outputTokens, max_tokens
    )
    if answer.stopReason == "max_tokens":
        raise ExtractionFailed(
            f"model reply was cut off at {max_tokens} tokens (stopReason max_tokens)",
            model_id=model_id,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            tokens_clamped=clamp,
        )
    return ModelReply(
        text=reply,
        model_id=model_id,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cache_read_tokens=answer.usage.cacheReadInputTokens,
        cache_write_tokens=answer.usage.cacheWriteInputTokens,
        inference=inference,
        tokens_clamped=clamp,
    )
