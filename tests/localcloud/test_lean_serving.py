"""The endpoint's handler leaves undone what nobody reads (localcloud/lean_serving.py), every byte the same:
its header split gives http.client's message, its Date is http.server's, its access log line is werkzeug's
when the logger writes one and is not built when it would not; and whole answers over a socket are those of
the handler without these cuts."""

from __future__ import annotations

import email.utils
import http.client
import io
import logging
import re
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pytest
from moto.core import request as moto_request
from moto.core.request import PRESERVED_HEADER_NAMES_ENVIRON_KEY
from moto.moto_server.werkzeug_app import MotoRequestHandler
from werkzeug import serving
from werkzeug.serving import WSGIRequestHandler, make_server

from docagent.localcloud import keep_alive, lean_serving
from docagent.localcloud.server import HOST

BLOCKS = [
    # what botocore sends (a DynamoDB call, signed with a role's session)
    b"Host: 127.0.0.1:5000\r\nAccept-Encoding: identity\r\nX-Amz-Target: DynamoDB_20120810.PutItem\r\n"
    b"Content-Type: application/x-amz-json-1.0\r\nUser-Agent: Boto3/1.35.0 md/Botocore#1.35.0\r\n"
    b"X-Amz-Security-Token: docagent-role:ASIA0123456789ABCDEF/fn\r\n"
    b"Authorization: AWS4-HMAC-SHA256 Credential=local/20261208/us-east-1/dynamodb/aws4_request, "
    b"SignedHeaders=host, Signature=00\r\nContent-Length: 2\r\n\r\n",
    b"Host: a\r\n\r\n",
    b"\r\n",
    b"A:  spaced  \r\nA: repeated\r\nx-amz-meta-my_key: v\r\nEmpty:\r\n\r\n",
    b"Latin: caf\xe9\n\n",  # LF-only lines, a byte above ASCII
    b"A: b\r\n  folded\r\n\r\n",  # the rest: http.client's parser, as before
    b"\tleading tab\r\n\r\n",
    b"no colon\r\n\r\n",
    b":no name\r\n\r\n",
    b"From someone\r\n\r\n",
    b"A: bare\rcarriage return\r\n\r\n",
    b"A: cut",  # the stream ends inside the block
]


def _state(message: http.client.HTTPMessage) -> dict[str, Any]:
    found = dict(vars(message))
    found["defects"] = [repr(defect) for defect in message.defects]  # defects compare by identity
    return found


@pytest.mark.parametrize("block", BLOCKS)
def test_the_header_split_gives_http_client_s_message(block: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = http.client.parse_headers(io.BytesIO(block), _class=lean_serving.LocalMessage)
    monkeypatch.setattr(http.client, "parse_headers", lean_serving.parse_headers)
    found = http.client.parse_headers(io.BytesIO(block), _class=lean_serving.LocalMessage)
    assert type(found) is lean_serving.LocalMessage
    assert _state(found) == _state(expected)
    assert found.items() == expected.items()


def test_only_the_handler_s_messages_are_split_here(monkeypatch: pytest.MonkeyPatch) -> None:
    given: list[type[Any]] = []

    def original(fp: Any, _class: type[Any]) -> str:
        given.append(_class)
        return "parsed by http.client"

    monkeypatch.setattr(lean_serving, "_parse_headers_of_http_client", original)
    assert lean_serving.parse_headers(io.BytesIO(b"A: b\r\n\r\n")) == "parsed by http.client"
    assert given == [http.client.HTTPMessage]


def test_the_date_is_http_server_s_for_this_second() -> None:
    handler = keep_alive.KeepAliveRequestHandler.__new__(keep_alive.KeepAliveRequestHandler)
    for _ in range(3):
        before = email.utils.formatdate(time.time(), usegmt=True)
        found = handler.date_time_string()
        after = email.utils.formatdate(time.time(), usegmt=True)
        assert found in (before, after)
    assert handler.date_time_string(0) == "Thu, 01 Jan 1970 00:00:00 GMT"


def echo(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    """Answers with the request's headers as the WSGI application saw them."""
    seen = sorted(f"{key}={value}" for key, value in environ.items() if key.startswith(("HTTP_", "CONTENT_")))
    seen.append(f"preserved={environ[PRESERVED_HEADER_NAMES_ENVIRON_KEY]}")  # moto's table of header names
    body = "\n".join(seen).encode()
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]


class UncutHandler(keep_alive.KeepAliveRequestHandler):
    """The endpoint's handler before lean_serving.py: http.server's and werkzeug's own per-request work."""

    MessageClass = http.client.HTTPMessage
    log_request = WSGIRequestHandler.log_request
    date_time_string = WSGIRequestHandler.date_time_string

    def make_environ(self) -> dict[str, Any]:
        return self.framed(MotoRequestHandler.make_environ(self))


@pytest.fixture
def servers() -> Iterator[dict[str, int]]:
    keep_alive.install()
    started = {}
    for name, handler in (("lean", keep_alive.KeepAliveRequestHandler), ("uncut", UncutHandler)):
        server = make_server(HOST, 0, echo, True, request_handler=handler)
        started[name] = server
    threads = [threading.Thread(target=server.serve_forever, daemon=True) for server in started.values()]
    for thread in threads:
        thread.start()
    try:
        yield {name: server.server_port for name, server in started.items()}
    finally:
        for server in started.values():
            server.shutdown()
            server.server_close()


def _exchange(port: int, requests: list[bytes]) -> list[bytes]:
    """The raw answers to ``requests``, sent on one connection; the Date header's value blanked."""
    answers = []
    with socket.create_connection((HOST, port), timeout=10) as connection:
        reader = connection.makefile("rb")
        for request in requests:
            connection.sendall(request)
            head = b""
            while not head.endswith(b"\r\n\r\n"):
                head += reader.readline()
            length = int(re.search(rb"Content-Length: (\d+)", head).group(1))  # type: ignore[union-attr]
            answers.append(re.sub(rb"Date: [^\r]*", b"Date: -", head) + reader.read(length))
    return answers


def test_answers_over_a_socket_are_those_of_the_uncut_handler(servers: dict[str, int]) -> None:
    requests = [
        b"PUT /bucket/key HTTP/1.1\r\nHost: 127.0.0.1\r\nx-amz-meta-my_key: v\r\nx-amz-meta-my-key: w\r\n"
        b"Content-Length: 3\r\n\r\nabc",
        b"PUT /bucket/key HTTP/1.1\r\nHost: 127.0.0.1\r\nx-amz-meta-plain: v\r\nContent-Length: 0\r\n\r\n",
        b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Amz-Target: DynamoDB_20120810.GetItem\r\n"
        b"Content-Type: application/x-amz-json-1.0\r\nContent-Length: 2\r\n\r\n{}",
        b"GET /bucket?list-type=2 HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Folded: a\r\n  b\r\n\r\n",
    ]
    assert _exchange(servers["lean"], requests) == _exchange(servers["uncut"], requests)


def test_the_access_line_is_werkzeug_s_when_its_logger_writes_it(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    handler = keep_alive.KeepAliveRequestHandler.__new__(keep_alive.KeepAliveRequestHandler)
    vars(handler).update(
        command="GET", path="/bucket/caf%C3%A9", request_version="HTTP/1.1", client_address=("127.0.0.1", 1)
    )
    logger = logging.getLogger("werkzeug")
    monkeypatch.setattr(logger, "level", logging.INFO)
    with caplog.at_level(logging.INFO, logger="werkzeug"):
        handler.log_request(200, 5)
        WSGIRequestHandler.log_request(handler, 200, 5)
    lines = [record.getMessage() for record in caplog.records if record.name == "werkzeug"]
    assert len(lines) == 2 and lines[0] == lines[1] and '"GET /bucket/café HTTP/1.1" 200 5' in lines[0]

    def never(*_: Any) -> str:
        raise AssertionError("the line was built for a logger that drops it")

    monkeypatch.setattr(serving, "uri_to_iri", never)
    monkeypatch.setattr(logger, "level", logging.CRITICAL)  # as the local cloud sets it (server.py)
    handler.log_request(200, 5)
    monkeypatch.setattr(logger, "level", logging.NOTSET)  # werkzeug sets an unset logger to INFO: it writes
    with pytest.raises(AssertionError, match="the line was built"):
        handler.log_request(200, 5)


@pytest.mark.parametrize("names", [None, {}, {"HTTP_X_AMZ_META_MY_KEY": "x-amz-meta-my_key"}])
def test_moto_s_header_view_walks_as_moto_s(names: dict[str, str] | None) -> None:
    environ = {
        "HTTP_HOST": "127.0.0.1",
        "HTTP_X_AMZ_META_MY_KEY": "v",
        "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": "",
        "HTTP_CONTENT_LENGTH": "9",
        "wsgi.input": io.BytesIO(),
    }
    if names is not None:
        environ[PRESERVED_HEADER_NAMES_ENVIRON_KEY] = names
    headers = moto_request.EnvironHeaders(environ)
    expected = list(lean_serving._moto_headers_iter(headers))
    assert list(lean_serving.headers_iter(headers)) == expected
    assert ("x-amz-meta-my_key" if names else "X-Amz-Meta-My-Key", "v") in expected
