"""A misbehaving model (issue #49, item 6), end to end through the model seam without a cloud: the fake
OpenAI-compatible endpoint (tests/fake_openai.py) in each bad mode, the local Bedrock's OpenAI backend
(docagent/localcloud/bedrock/backends.py) answering it as Bedrock would, and the functions' Converse client
(functions/inference/converse.py) reading that answer over HTTP as it does on Lambda. A reply that breaks the
protocol is ModelReplyInvalid (the document's failure, a finished call), a hang or a 5xx is ModelUnavailable
(retried), and no call is recorded above the request's maxTokens."""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import boto3
import pytest
from botocore.config import Config

from docagent.localcloud.bedrock.backends import MIN_REPLY_BYTES, OpenAIBackend
from functions import aws
from functions.errors import ModelReplyInvalid, ModelUnavailable
from functions.inference import BedrockConverseProvider
from functions.reading.documents import LOCAL_BAD_REPLY, DocumentInput
from tests.fake_openai import HTML_PAGE, serve

MODEL = "global.anthropic.claude-haiku-4-5-20251001-v1:0"
MAX_TOKENS = 800
DOCUMENT = DocumentInput(data=b"Claim POL-000123, total 120.00 EUR", format="txt", name="document-00001")
MESSAGES = [{"role": "user", "content": [{"text": "Claim POL-000123"}, {"text": "Extract the fields."}]}]
Canned = tuple[int, dict[str, str], bytes]


def _reply(_: dict[str, Any]) -> dict[str, Any]:
    return {"policy_number": "POL-000123"}


@contextmanager
def fake_bedrock(answer: Callable[[], Canned]) -> Iterator[str]:
    """An HTTP endpoint standing in for Bedrock Runtime: each Converse request answered with ``answer()``
    (status, headers, body) as it is, so the functions' client reads it over a socket as on Lambda."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            status, headers, body = answer()
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet."""

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _provider(endpoint: str) -> BedrockConverseProvider:
    client = boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        endpoint_url=endpoint,
        aws_access_key_id="local",
        aws_secret_access_key="local",
        config=Config(retries={"total_max_attempts": 1}, read_timeout=10),
    )
    return BedrockConverseProvider(MODEL, client, max_tokens=MAX_TOKENS)


def _through_the_local_bedrock(mode: str, timeout_seconds: float = 60) -> tuple[Any, float]:
    """The function's call of a document whose endpoint answers in ``mode``: (the reply or the error raised,
    the seconds it took)."""
    with serve(_reply, behave=lambda _: mode) as endpoint:
        backend = OpenAIBackend(endpoint.url, "fake", timeout_seconds)

        def answer() -> Canned:
            status, headers, body = backend.converse(MODEL, [{"text": "You read"}], MESSAGES, MAX_TOKENS, "x")
            return status, headers, body.encode()

        with fake_bedrock(answer) as bedrock:
            started = time.monotonic()
            try:
                return _provider(bedrock).converse(
                    DOCUMENT, "You read", "Extract."
                ), time.monotonic() - started
            except (ModelReplyInvalid, ModelUnavailable) as error:
                return error, time.monotonic() - started


@pytest.mark.parametrize(
    ("mode", "said"),
    [
        ("html", "a body that is not JSON (text/html"),
        ("binary", "a body that is not JSON (application/octet-stream"),
        ("list", "JSON that is not an object: a list ('[1,2,3]')"),
        ("wrong_types", "usage.prompt_tokens: Input should be a valid integer (got 'lots')"),
        ("huge", f"more than {MIN_REPLY_BYTES:,} bytes"),
    ],
)
def test_an_answer_that_breaks_the_protocol_fails_the_document_with_its_reason(mode: str, said: str) -> None:
    error, seconds = _through_the_local_bedrock(mode)
    assert isinstance(error, ModelReplyInvalid), error  # the document's failure: a finished call, no retry
    assert LOCAL_BAD_REPLY in str(error) and said in str(error)
    assert error.error_name == "ModelReplyInvalid" and error.output_tokens == 0
    assert seconds < 30, "the 50 MB body is not read past the reply's bound"


def test_a_500_page_is_transient_and_a_hang_ends_at_the_endpoint_s_timeout() -> None:
    error, _ = _through_the_local_bedrock("error_500")
    assert isinstance(error, ModelUnavailable) and "answered 500" in str(error)
    error, seconds = _through_the_local_bedrock("hang", timeout_seconds=0.5)
    assert isinstance(error, ModelUnavailable) and "ModelTimeoutException" in str(error)
    assert seconds < 10, "a hung endpoint is bounded, not waited on for 300 s"


def test_a_call_is_never_recorded_above_the_request_s_max_tokens() -> None:
    reply, _ = _through_the_local_bedrock("many_tokens")
    assert json.loads(reply.text) == {"policy_number": "POL-000123"}
    assert reply.output_tokens == MAX_TOKENS
    assert reply.tokens_clamped == (
        f"output tokens 10,000,000 reported, clamped at the request's maxTokens {MAX_TOKENS}"
    )


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (HTML_PAGE, "model reply is not a Converse answer: output: Field required"),
        (b"[1,2,3]", "model reply is not a Converse answer (AttributeError"),
        (
            json.dumps(
                {
                    "output": {"message": {"role": "assistant", "content": [{"text": "{}"}]}},
                    "stopReason": "end_turn",
                    "usage": {"inputTokens": "lots", "outputTokens": 5},
                }
            ).encode(),
            "model reply is not a Converse answer (ValueError",
        ),
        (bytes(range(256)), "model reply is not a Converse answer (UnicodeDecodeError"),
    ],
)
def test_a_bedrock_answer_that_is_no_converse_answer_is_model_reply_invalid(body: bytes, said: str) -> None:
    canned = (200, {"Content-Type": "application/json"}, body)
    with fake_bedrock(lambda: canned) as bedrock, pytest.raises(ModelReplyInvalid) as raised:
        _provider(bedrock).converse(DOCUMENT, "You read", "Extract.")
    assert said in str(raised.value)


def test_a_hung_call_ends_within_the_invocation_s_remaining_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """The function's own bound: a call's read timeout is 70% of the time left (functions/aws.py)."""
    with serve(_reply, behave=lambda _: "hang") as endpoint:
        monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", endpoint.url.removesuffix("/v1"))
        monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "local")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "local")
        aws.bedrock_runtime_client.cache_clear()
        provider = BedrockConverseProvider(MODEL, max_tokens=MAX_TOKENS, time_left=lambda: 2.0)
        started = time.monotonic()
        with pytest.raises(ModelUnavailable, match="did not answer in time"):
            provider.converse(DOCUMENT, "You read", "Extract.")
        assert time.monotonic() - started < 2.0
        aws.bedrock_runtime_client.cache_clear()
