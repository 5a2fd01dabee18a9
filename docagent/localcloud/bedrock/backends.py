"""A real model behind the local cloud (``--model``): the local Bedrock Runtime forwards each Converse call
of the pipeline's model steps, so a team tries its prompts and schemas on a real model before deploying, with
everything else (Step Functions, Lambda, S3, DynamoDB) still local.

- ``labels`` (the default): answers from labels and recordings (docagent/localcloud/bedrock/labels.py).
- ``bedrock``: real Amazon Bedrock, with the user's own AWS credentials and Region (boto3's default chain, the
  real endpoint, never the local one). The request goes as the function sent it.
- ``openai=URL[#MODEL]``: an OpenAI-compatible chat-completions endpoint (Ollama, vLLM, LM Studio:
  ``http://127.0.0.1:11434/v1#llama3.1``). The Converse request is translated (openai_request.py): the system
  prompt, the user's text with each document's text as Bedrock would read it (the local Bedrock's own reader),
  its images and a visually read PDF's pages as image parts (data URLs), JSON output asked
  (``response_format: json_object``); the reply's text, stop reason and token usage come back as Converse's.
  Without ``#MODEL`` the Converse model id is sent as the model name.

With ``record`` each reply is kept as a recording of its document (``NAME.recording.json`` beside a labelled
sample, and in the cloud's state): a later run replays it offline, so CI never needs the network
(docs/local-cloud.md, "A real model").
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from docagent.localcloud.bedrock import billed_tokens
from docagent.localcloud.bedrock.openai_request import (
    NotSendableError,
    chat_request,
    source_bytes,
    user_text,
)
from docagent.localcloud.request_guard import signed
from functions.inference.converse import MAX_READ_TIMEOUT_SECONDS, first_problem
from functions.reading.documents import LOCAL_BAD_REPLY

Answer = tuple[int, dict[str, str], str]
# How long the endpoint may take to answer: no function waits longer for a call (functions/inference/
# converse.py), so a longer wait only holds the local cloud's thread. Then the local Bedrock answers as
# Bedrock does for a model that took too long (ModelTimeoutException, HTTP 408): the functions retry it.
OPENAI_TIMEOUT_SECONDS = MAX_READ_TIMEOUT_SECONDS
# The most bytes of an answer read: a chat completion of the request's max_tokens is far smaller (a token is a
# few characters; JSON escapes at most 6 bytes a character), so a longer body is no reply to this request.
MIN_REPLY_BYTES = 1_048_576
REPLY_BYTES_PER_TOKEN = 64


class ModelChoice(BaseModel):
    """What answers the local cloud's model calls (``--model``), and whether replies are kept."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["labels", "bedrock", "openai"] = "labels"
    url: str | None = None
    model_name: str | None = None
    record: bool = False
    # openai: how long the endpoint may take to answer a call, in seconds (then ModelTimeoutException).
    timeout_seconds: float = Field(OPENAI_TIMEOUT_SECONDS, gt=0, le=OPENAI_TIMEOUT_SECONDS)
    # With record: each recording also written beside its labelled sample (False: kept in the cloud's state
    # only, as `docagent chaos --model` does without --record).
    beside_samples: bool = True

    def spec(self) -> str:
        """The ``--model`` value that gives this choice."""
        if self.kind != "openai":
            return self.kind
        return f"openai={self.url}" + (f"#{self.model_name}" if self.model_name else "")

    def mode(self) -> str:
        """How a report names what answered: ``labels``, ``bedrock`` or ``openai (URL)``."""
        return f"openai ({self.url})" if self.kind == "openai" else self.kind


def parse_model(spec: str, record: bool = False) -> ModelChoice:
    """``labels``, ``bedrock`` or ``openai=URL[#MODEL]``; ValueError naming the forms otherwise."""
    if spec in {"labels", "bedrock"}:
        return ModelChoice(kind=spec, record=record)
    if spec.startswith("openai="):
        url, _, name = spec.removeprefix("openai=").partition("#")
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"--model {spec}: the URL is http(s)://HOST[:PORT]/v1")
        return ModelChoice(kind="openai", url=url.rstrip("/"), model_name=name or None, record=record)
    raise ValueError(f"--model {spec}: use labels, bedrock, or openai=URL[#MODEL]")


class Backend(Protocol):
    def converse(
        self,
        model_id: str,
        system: list[dict[str, Any]],
        messages: list[dict[str, Any]],
        max_tokens: int,
        text: str,
    ) -> Answer: ...


def error_answer(status: int, code: str, message: str) -> Answer:
    """A Bedrock error as it is answered: the status, the x-amzn-ErrorType, the message."""
    headers = {"Content-Type": "application/json", "x-amzn-ErrorType": code}
    return status, headers, json.dumps({"message": message})


def converse_answer(
    reply: str,
    stop: str,
    input_tokens: int,
    output_tokens: int,
    started: float,
    *,
    cached: tuple[int, int] = (0, 0),
) -> Answer:
    """A Converse reply as Bedrock answers it: the text, the stop reason, the usage (``cached``: the prompt
    cache's (read, written) tokens of the ``input_tokens``, counted apart from ``inputTokens`` as Bedrock
    does), the latency."""
    read, written = cached
    input_tokens = max(0, input_tokens - read - written)
    usage = {"inputTokens": input_tokens, "outputTokens": output_tokens}
    if read or written:
        usage |= {"cacheReadInputTokens": read, "cacheWriteInputTokens": written}
    body = {
        "output": {"message": {"role": "assistant", "content": [{"text": reply}]}},
        "stopReason": stop,
        "usage": {**usage, "totalTokens": input_tokens + output_tokens + read + written},
        "metrics": {"latencyMs": int((time.monotonic() - started) * 1000)},
    }
    return 200, {"Content-Type": "application/json"}, json.dumps(body)


class BedrockBackend:
    """Real Amazon Bedrock: the same Converse request, with the user's credentials and Region."""

    def __init__(self, client: Any | None = None) -> None:
        self._client = client

    def client(self) -> Any:
        if self._client is None:
            import boto3  # noqa: PLC0415 (only when --model bedrock)

            # The real endpoint: the local cloud's own AWS_ENDPOINT_URL (if any) is not Bedrock.
            self._client = boto3.session.Session().client("bedrock-runtime", endpoint_url=None)
        return self._client

    def converse(
        self,
        model_id: str,
        system: list[dict[str, Any]],
        messages: list[dict[str, Any]],
        max_tokens: int,
        text: str,
    ) -> Answer:
        from botocore.exceptions import BotoCoreError, ClientError  # noqa: PLC0415

        started = time.monotonic()
        try:
            answer = self.client().converse(
                modelId=model_id,
                system=system,
                messages=_with_bytes(messages),
                inferenceConfig={"maxTokens": max_tokens},
            )
        except ClientError as error:
            details = error.response.get("Error", {})
            status = int(error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 400) or 400)
            return error_answer(
                status, str(details.get("Code", "ValidationException")), str(details.get("Message", ""))
            )
        except BotoCoreError as error:
            return error_answer(
                503, "ServiceUnavailableException", f"Amazon Bedrock could not be reached: {error}"
            )
        reply = "".join(block.get("text", "") for block in answer["output"]["message"]["content"])
        usage = answer.get("usage", {})
        return converse_answer(
            reply,
            str(answer.get("stopReason", "end_turn")),
            int(usage.get("inputTokens", 0)),
            int(usage.get("outputTokens", 0)),
            started,
        )


def _with_bytes(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages with each document's and image's bytes as bytes (the local endpoint may hold base64)."""
    found = []
    for message in messages:
        content = []
        for block in message.get("content", []):
            sent = block
            for kind in ("document", "image"):
                if kind in block:
                    source = {**(block[kind].get("source") or {}), "bytes": source_bytes(block[kind])}
                    sent = {kind: {**block[kind], "source": source}}
            content.append(sent)
        found.append({**message, "content": content})
    return found


class _ChatMessage(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)

    content: str | None = None


class _ChatChoice(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)

    message: _ChatMessage
    finish_reason: str | None = None


class _ChatUsage(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)

    prompt_tokens: int | None = Field(None, ge=0)
    completion_tokens: int | None = Field(None, ge=0)


class ChatCompletion(BaseModel):
    """What a chat completion must hold to be read (the OpenAI API reference, "The chat completion object":
    ``choices[].message.content``, ``choices[].finish_reason``, ``usage.prompt_tokens`` and
    ``completion_tokens``; looked up 2026-12-07). Anything else in it is ignored."""

    model_config = ConfigDict(extra="ignore", strict=True)

    choices: list[_ChatChoice] = Field(min_length=1)
    usage: _ChatUsage | None = None


class BadReplyError(Exception):
    """The endpoint answered 200 with something that is no chat completion: what is wrong, in one line."""


def read_completion(data: bytes, content_type: str, limit: int) -> ChatCompletion:
    """A chat completion from the body of a 200 answer, or BadReplyError naming what is wrong with it."""
    if len(data) > limit:
        raise BadReplyError(f"more than {limit:,} bytes: longer than any reply to the request's max_tokens")
    try:
        answer = json.loads(data)
    except ValueError:
        start = data[:60].decode("utf-8", "replace")
        raise BadReplyError(
            f"a body that is not JSON ({content_type or 'no content type'}, {len(data):,} bytes: {start!r})"
        ) from None
    if not isinstance(answer, dict):
        start = data[:60].decode("utf-8", "replace")
        raise BadReplyError(f"JSON that is not an object: a {type(answer).__name__} ({start!r})")
    try:
        return ChatCompletion.model_validate(answer)
    except ValidationError as error:
        raise BadReplyError(f"no chat completion: {first_problem(error)}") from None


class OpenAIBackend:
    """An OpenAI-compatible ``/chat/completions`` endpoint. Its failures are answered as Bedrock's: 429 as
    ThrottlingException, a 5xx or no connection as ServiceUnavailableException, no answer within
    ``timeout_seconds`` as ModelTimeoutException (all retried by the functions), another 4xx as
    ValidationException; a 200 that is no chat completion (not JSON, not an object, wrong types, too long) as
    ModelErrorException whose message starts with LOCAL_BAD_REPLY, which the functions read as
    ModelReplyInvalid: that document's failure, never retried (docs/local-cloud.md, "A real model")."""

    def __init__(
        self, url: str, model_name: str | None = None, timeout_seconds: float = OPENAI_TIMEOUT_SECONDS
    ) -> None:
        self.url, self.model_name, self.timeout_seconds = url, model_name, timeout_seconds

    def converse(
        self,
        model_id: str,
        system: list[dict[str, Any]],
        messages: list[dict[str, Any]],
        max_tokens: int,
        text: str,
    ) -> Answer:
        started = time.monotonic()
        try:
            request = chat_request(self.model_name or model_id, system, messages, max_tokens, text)
        except NotSendableError as error:
            return error_answer(400, "ValidationException", f"messages.0.content for {self.url}: {error}")
        call = urllib.request.Request(
            f"{self.url}/chat/completions",
            data=json.dumps(request).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        limit = max(MIN_REPLY_BYTES, max_tokens * REPLY_BYTES_PER_TOKEN)
        try:
            with urllib.request.urlopen(call, timeout=self.timeout_seconds) as response:
                data = response.read(limit + 1)
                completion = read_completion(data, str(response.headers.get("Content-Type", "")), limit)
        except urllib.error.HTTPError as error:
            said = error.read(500).decode("utf-8", "replace")
            if error.code == 429:
                return error_answer(429, "ThrottlingException", f"{self.url} is throttling: {said}")
            if error.code >= 500:
                return error_answer(
                    503, "ServiceUnavailableException", f"{self.url} answered {error.code}: {said}"
                )
            return error_answer(
                400, "ValidationException", f"{self.url} refused the request ({error.code}): {said}"
            )
        except BadReplyError as error:
            return error_answer(424, "ModelErrorException", f"{LOCAL_BAD_REPLY}: {self.url} answered {error}")
        except TimeoutError:
            return error_answer(
                408,
                "ModelTimeoutException",
                f"{self.url} did not answer within {self.timeout_seconds:g} s (retried)",
            )
        except (urllib.error.URLError, OSError) as error:
            if isinstance(getattr(error, "reason", None), TimeoutError):
                return error_answer(
                    408,
                    "ModelTimeoutException",
                    f"{self.url} did not answer within {self.timeout_seconds:g} s (retried)",
                )
            return error_answer(
                503, "ServiceUnavailableException", f"{self.url} could not be reached: {error}"
            )
        choice = completion.choices[0]
        reply = choice.message.content or ""
        usage = completion.usage or _ChatUsage()
        return converse_answer(
            reply,
            "max_tokens" if choice.finish_reason == "length" else "end_turn",
            usage.prompt_tokens or billed_tokens.text_tokens(_request_text(request)),
            usage.completion_tokens or billed_tokens.output_tokens(reply),
            started,
        )


def _request_text(request: dict[str, Any]) -> str:
    """The system prompt and the user's text of a chat request (what a token estimate counts)."""
    return "".join(user_text(message["content"]) for message in request["messages"])


def backend_of(choice: ModelChoice) -> Backend | None:
    """The backend a choice forwards to (None: labels answer)."""
    if choice.kind == "bedrock":
        return BedrockBackend()
    if choice.kind == "openai":
        assert choice.url is not None
        return OpenAIBackend(choice.url, choice.model_name, choice.timeout_seconds)
    return None


MODEL_PATH = "/_docagent/bedrock/model"


def set_model(endpoint: str, choice: ModelChoice) -> ModelChoice:
    """Make a running local cloud's model calls go to ``choice``."""
    request = urllib.request.Request(
        endpoint.rstrip("/") + MODEL_PATH,
        data=choice.model_dump_json().encode(),
        method="PUT",
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(signed(request), timeout=10) as response:
        return ModelChoice.model_validate_json(response.read())
