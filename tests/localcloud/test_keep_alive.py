"""The local cloud's endpoint keeps a client's connection between requests (localcloud/keep_alive.py): each
request's body is read by its framing whatever the application read of it, so the next request on the
connection is read right; a client that asks to close is closed; stopping the server ends idle connections."""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pytest

from docagent.localcloud.server import free_port
from docagent.localcloud.state.persistence import JournaledMotoServer


def echo(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    """Reads the body only when asked to (``?read``); answers with what it read and the request's port."""
    read = environ["wsgi.input"].read() if "read" in environ["QUERY_STRING"] else b""
    body = json.dumps({"read": read.decode(), "port": environ["REMOTE_PORT"], "path": environ["PATH_INFO"]})
    start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
    return [body.encode()]


@pytest.fixture
def server() -> Iterator[JournaledMotoServer]:
    started = JournaledMotoServer(None, "127.0.0.1", free_port(), app=echo)
    started.bind()
    started.serve()
    try:
        yield started
    finally:
        started.stop()


def ask(
    connection: http.client.HTTPConnection, path: str, body: Any = None, headers: dict[str, str] | None = None
) -> tuple[http.client.HTTPResponse, dict[str, Any]]:
    connection.request("POST", path, body=body, headers=headers or {})
    response = connection.getresponse()
    return response, json.loads(response.read())


def test_requests_share_one_connection_whatever_the_application_read(server: JournaledMotoServer) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", server._port, timeout=10)
    first, unread = ask(connection, "/first", b"a body nobody reads")
    assert first.getheader("Connection") is None, "no close on a kept connection"
    _, read = ask(connection, "/second?read", b"read this")
    chunks = iter([b"in ", b"chunks"])
    _, chunked = ask(connection, "/third?read", chunks)  # an iterable without a length: sent chunked
    _, after_chunks = ask(connection, "/fourth", b"")
    assert [unread["path"], read["path"], chunked["path"], after_chunks["path"]] == [
        "/first",
        "/second",
        "/third",
        "/fourth",
    ]
    assert (read["read"], chunked["read"]) == ("read this", "in chunks")
    assert len({unread["port"], read["port"], chunked["port"], after_chunks["port"]}) == 1, "one connection"
    connection.close()


def test_a_client_that_asks_to_close_is_closed(server: JournaledMotoServer) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", server._port, timeout=10)
    response, _ = ask(connection, "/", b"", {"Connection": "close"})
    assert response.getheader("Connection") == "close"
    assert response.will_close


def test_stopping_the_server_ends_its_idle_connections(server: JournaledMotoServer) -> None:
    client = socket.create_connection(("127.0.0.1", server._port), timeout=10)
    client.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
    answer = b""
    while b'"path": "/"}' not in answer:
        answer += client.recv(4096)
    assert b"Connection: close" not in answer
    server.stop()
    assert client.recv(4096) == b"", "the server closed the idle connection when it stopped"
    client.close()
