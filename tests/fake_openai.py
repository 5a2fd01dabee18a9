"""A fake OpenAI-compatible chat-completions endpoint on 127.0.0.1 for the tests of ``--model openai=URL``:
each POST's body is kept and answered with what ``answer(body)`` returns, as a chat completion (JSON content,
``finish_reason: stop``, a fixed usage). The test starts and stops it (``serve``).

``behave(body)`` names how a request is answered instead (issue #49's misbehaving model): ``ok`` (the
default), or one of BAD_MODES: ``html`` (a 200 HTML page), ``binary`` (200, bytes that are no text),
``list`` (200, ``[1,2,3]``), ``wrong_types`` (a completion whose ``usage.prompt_tokens`` is ``"lots"``),
``huge`` (a 50 MB completion without usage, written until the reader stops reading), ``many_tokens`` (a
good completion whose usage claims 10,000,000 completion tokens), ``hang`` (no answer until the server
stops), ``error_500`` (an HTML 500 page)."""

from __future__ import annotations

import contextlib
import http.server
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from docagent.localcloud.bedrock.openai_request import user_text
from functions.inference.instructions import Asked, asked

Answer = Callable[[dict[str, Any]], dict[str, Any]]
Behave = Callable[[dict[str, Any]], str]
BAD_MODES = ("html", "binary", "list", "wrong_types", "huge", "many_tokens", "hang", "error_500")
HUGE_BYTES = 50_000_000
HTML_PAGE = b"<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"


def question_of(body: dict[str, Any]) -> tuple[str, Asked | None]:
    """The request's user text (the document's text and the instruction: its text parts when it holds images)
    and what the instruction asks."""
    user = user_text(body["messages"][-1]["content"])
    return user, asked(user.rsplit("</document>\n\n", 1)[-1])


def _completion(content: str, usage: dict[str, Any] | None) -> dict[str, Any]:
    completion: dict[str, Any] = {
        "choices": [{"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]
    }
    return completion if usage is None else {**completion, "usage": usage}


class FakeServer:
    """The running endpoint: its ``url`` (``http://127.0.0.1:PORT/v1``), the ``requests`` it was sent and
    the ``modes`` it answered them in."""

    def __init__(self, answer: Answer, usage: tuple[int, int], behave: Behave | None = None) -> None:
        self.requests: list[dict[str, Any]] = []
        self.modes: list[str] = []
        self.stopping = threading.Event()
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append(body)
                mode = behave(body) if behave is not None else "ok"
                fake.modes.append(mode)
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the reader stopped: right
                    self._answer(mode, body)

            def _answer(self, mode: str, body: dict[str, Any]) -> None:
                tokens = {"prompt_tokens": usage[0], "completion_tokens": usage[1]}
                if mode == "hang":
                    fake.stopping.wait()
                    return
                if mode == "huge":
                    self._send(200, "application/json", b"", length=HUGE_BYTES)
                    self.wfile.write(b'{"choices": [{"message": {"role": "assistant", "content": "')
                    chunk = b"x" * 65536
                    for _ in range(HUGE_BYTES // len(chunk)):
                        self.wfile.write(chunk)
                    return
                content = json.dumps(answer(body))
                bodies: dict[str, tuple[int, str, bytes]] = {
                    "ok": (200, "application/json", json.dumps(_completion(content, tokens)).encode()),
                    "html": (200, "text/html", HTML_PAGE),
                    "error_500": (500, "text/html", HTML_PAGE),
                    "binary": (200, "application/octet-stream", bytes(range(256)) * 8),
                    "list": (200, "application/json", b"[1,2,3]"),
                    "wrong_types": (
                        200,
                        "application/json",
                        json.dumps(_completion(content, {**tokens, "prompt_tokens": "lots"})).encode(),
                    ),
                    "many_tokens": (
                        200,
                        "application/json",
                        json.dumps(
                            _completion(content, {**tokens, "completion_tokens": 10_000_000})
                        ).encode(),
                    ),
                }
                self._send(*bodies[mode])

            def _send(self, status: int, content_type: str, data: bytes, length: int | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data) if length is None else length))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet."""

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"


@contextmanager
def serve(
    answer: Answer, usage: tuple[int, int] = (1000, 100), behave: Behave | None = None
) -> Iterator[FakeServer]:
    fake = FakeServer(answer, usage, behave)
    threading.Thread(target=fake.server.serve_forever, daemon=True).start()
    try:
        yield fake
    finally:
        fake.stopping.set()  # a hanging request ends
        fake.server.shutdown()
        fake.server.server_close()
