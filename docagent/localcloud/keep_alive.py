"""Keep-alive connections for the local cloud's endpoint: one TCP connection (and one serving thread) per
client connection, not per request.

werkzeug's development server, which moto's server is, answers every request with ``Connection: close``
(werkzeug/serving.py, ``run_wsgi``: "They aren't handled well by Python's http.server because it doesn't
know how to drain the stream before the next request line"), so each SDK call opened a new connection and
the endpoint started a new thread for it: 921 connections for 926 requests in a 40-document demo (counted
2026-12-02 around ``ThreadingMixIn.process_request``; werkzeug 3.1.9). After the response, werkzeug also
reads whatever the socket still holds, waiting up to 10 ms for it (``selector.select(timeout=0.01)``),
which on a kept connection could swallow the client's next request.

``KeepAliveRequestHandler`` reads each request's body by its own framing (``Content-Length``, or chunked),
always to its end once the response is written, so the next request line is where the connection's
stream stands; it drops werkzeug's ``Connection: close`` (a client that asks to close, or an HTTP/1.0
client, is still answered and closed as http.server does), and switches werkzeug's after-response read off
for its own requests only (``_NoLeftovers``: a selector that finds nothing, for the thread serving a
kept connection). A connection idle for ``IDLE_SECONDS`` is closed by the endpoint (a client's pool then
opens a new one: urllib3 checks a pooled connection before reusing it), and ``close_idle`` closes every
kept connection when the server stops, so no serving thread outlives it. Durability is unchanged: a
change is answered only once it is on disk (persistence.py), whichever connection carried it.
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import threading
from types import SimpleNamespace
from typing import Any

from moto.moto_server.werkzeug_app import MotoRequestHandler
from werkzeug import serving
from werkzeug.wsgi import LimitedStream

from docagent.localcloud import lean_serving

IDLE_SECONDS = 60.0


class _Serving(threading.local):
    keep_alive = False  # this thread serves a kept connection whose request bodies it reads itself


_SERVING = _Serving()


class _NothingLeft:
    """werkzeug's after-response read, on a kept connection: the body was read to its end by its framing."""

    def register(self, *_: Any) -> None:
        pass

    def select(self, timeout: float | None = None) -> list[Any]:
        return []

    def close(self) -> None:
        pass


def _selector() -> Any:
    return _NothingLeft() if _SERVING.keep_alive else selectors.DefaultSelector()


_NO_LEFTOVERS = SimpleNamespace(DefaultSelector=_selector, EVENT_READ=selectors.EVENT_READ)


def install() -> None:
    """werkzeug's serving module reads leftovers through ``_selector`` (the real selector but for us);
    the handler's request headers are split by lean_serving.py."""
    vars(serving)["selectors"] = _NO_LEFTOVERS
    lean_serving.install()


class Connections:
    """A server's kept connections: idle ones are closed when it stops, busy ones after their answer."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: dict[socket.socket, bool] = {}  # connection -> idle (waiting for its next request)
        self.stopping = False

    def opened(self, connection: socket.socket) -> None:
        with self._lock:
            self._idle[connection] = True

    def busy(self, connection: socket.socket) -> bool:
        """Mark it serving a request; False when the server is stopping (answer, then close)."""
        with self._lock:
            self._idle[connection] = False
            return not self.stopping

    def idle(self, connection: socket.socket) -> bool:
        """Mark it waiting for its next request; False when the server is stopping (close it now)."""
        with self._lock:
            self._idle[connection] = True
            return not self.stopping

    def closed(self, connection: socket.socket) -> None:
        with self._lock:
            self._idle.pop(connection, None)

    def close_idle(self) -> None:
        """The server stops: end every idle connection (its thread sees the end of its stream)."""
        with self._lock:
            self.stopping = True
            idle = [connection for connection, waiting in self._idle.items() if waiting]
        for connection in idle:
            with contextlib.suppress(OSError):  # the client closed it meanwhile
                connection.shutdown(socket.SHUT_RDWR)


class KeepAliveRequestHandler(lean_serving.LeanHandler, MotoRequestHandler):
    """moto's request handler with HTTP/1.1 keep-alive (see the module's doc), without the per-request work
    nobody reads (lean_serving.py)."""

    protocol_version = "HTTP/1.1"
    timeout = IDLE_SECONDS  # StreamRequestHandler: the socket's timeout, so an idle connection ends
    _body: Any = None

    def _connections(self) -> Connections | None:
        found = getattr(self.server, "docagent_connections", None)
        return found if isinstance(found, Connections) else None

    def setup(self) -> None:
        super().setup()
        # werkzeug writes an answer's status line, headers and body in separate sends: on a kept connection
        # Nagle's algorithm would hold the body until the client acknowledged the headers, which it delays
        # (40 ms on Linux). A closed connection flushed it; here each send goes at once.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        connections = self._connections()
        if connections is not None:
            connections.opened(self.connection)

    def finish(self) -> None:
        connections = self._connections()
        if connections is not None:
            connections.closed(self.connection)
        super().finish()

    def make_environ(self) -> dict[str, Any]:
        return self.framed(super().make_environ())

    def framed(self, environ: dict[str, Any]) -> dict[str, Any]:
        """``environ`` whose body stream ends where the request's body does (its own framing)."""
        if not environ.get(
            "wsgi.input_terminated"
        ):  # chunked: werkzeug's DechunkedInput ends at the last chunk
            length = str(environ.get("CONTENT_LENGTH") or "0")
            stream: Any = self.rfile
            environ["wsgi.input"] = LimitedStream(stream, int(length) if length.isdigit() else 0)
        self._body = environ["wsgi.input"]
        return environ

    def run_wsgi(self) -> None:
        connections = self._connections()
        if connections is not None and not connections.busy(self.connection):
            self.close_connection = True
        _SERVING.keep_alive = True
        completed = False
        try:
            super().run_wsgi()
            completed = True
        finally:
            _SERVING.keep_alive = False
            try:
                self._read_to_the_end()
            except (OSError, ValueError):
                completed = False
            if not completed:
                self.close_connection = True
            if connections is not None and not connections.idle(self.connection):
                self.close_connection = True

    def _read_to_the_end(self) -> None:
        body = self._body
        self._body = None
        if isinstance(body, LimitedStream):
            body.exhaust()
        elif body is not None:
            while body.read(1 << 16):
                pass

    def send_header(self, keyword: str, value: str) -> None:
        if keyword.lower() == "connection" and value.lower() == "close" and not self.close_connection:
            return  # werkzeug's close on every answer: the connection stays for the next request
        super().send_header(keyword, value)
