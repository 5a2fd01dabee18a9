"""A fake OpenAI-compatible chat-completions endpoint on 127.0.0.1 for the tests of ``--model openai=URL``:
each POST's body is kept and answered with what ``answer(body)`` returns, as a chat completion (JSON content,
``finish_reason: stop``, a fixed usage). The test starts and stops it (``serve``)."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from docagent.localcloud.bedrock.openai_request import user_text
from functions.inference.instructions import Asked, asked

Answer = Callable[[dict[str, Any]], dict[str, Any]]


def question_of(body: dict[str, Any]) -> tuple[str, Asked | None]:
    """The request's user text (the document's text and the instruction: its text parts when it holds images)
    and what the instruction asks."""
    user = user_text(body["messages"][-1]["content"])
    return user, asked(user.rsplit("</document>\n\n", 1)[-1])


class FakeServer:
    """The running endpoint: its ``url`` (``http://127.0.0.1:PORT/v1``) and the ``requests`` it was sent."""

    def __init__(self, answer: Answer, usage: tuple[int, int]) -> None:
        self.requests: list[dict[str, Any]] = []
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append(body)
                reply = {"role": "assistant", "content": json.dumps(answer(body))}
                completion = {
                    "choices": [{"message": reply, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1]},
                }
                data = json.dumps(completion).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet."""

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"


@contextmanager
def serve(answer: Answer, usage: tuple[int, int] = (1000, 100)) -> Iterator[FakeServer]:
    fake = FakeServer(answer, usage)
    threading.Thread(target=fake.server.serve_forever, daemon=True).start()
    try:
        yield fake
    finally:
        fake.server.shutdown()
        fake.server.server_close()
