"""A real external ticket service for local runs: HTTP on 127.0.0.1, a durable SQLite store, fault switches.

The local cloud starts it next to its AWS endpoint and publishes its URL in the SSM parameter
``/docagent/local/ticket-api-url``, which the local profile's ``ticket_api_url`` resolves at deploy time.

API (JSON):

- ``POST /tickets`` ``{"reference", "title", "body"}`` with an ``Idempotency-Key`` header: 201 and the new
  ticket; 200 and the same ticket for the same key and the same body; 409 for the same key with another body.
- ``GET /tickets?reference=REF``: ``{"tickets": [...]}`` oldest first (every ticket without ``reference``).
- ``GET /tickets/{id}``: the ticket, or 404.
- ``GET /_faults``, ``POST /_faults`` (a partial update, or ``{"clear": true}``), ``GET /_health``: admin,
  never faulted.

Fault switches (``TicketFaults``), settable over HTTP and from Python (``set_faults``):

- ``drop_responses``: the next N creates store the ticket, then close the connection without an answer;
- ``delay_seconds`` (with ``delay_requests``: how many, null = until cleared): answer that much later;
- ``fail_requests``: the next N ``/tickets`` requests answer 503 without doing anything;
- ``garbage_responses``: the next N ``/tickets`` requests do their work, then answer 200 with a non-JSON body;
- ``reject_idempotency_keys``: ignore the ``Idempotency-Key`` header, like an API without idempotency keys.

A ticket is ``{"id", "reference", "title", "body", "idempotency_key", "created_at"}``. With a ``token``, every
``/tickets`` request needs ``Authorization: Bearer <token>`` (401 otherwise).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime as dt
import hashlib
import json
import sqlite3
import sys
import threading
import urllib.parse
from collections.abc import Iterator
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from docagent.localcloud.request_guard import CROSS_SITE
from docagent.served_hosts import served_hosts

HOST = "127.0.0.1"
TICKET_API_URL_PARAMETER = "/docagent/local/ticket-api-url"
# The local cloud's other action targets (moto): the default event bus and a topic it creates at start, both
# allowed by the local profile, so a definition's eventbridge and sns actions run locally.
LOCAL_EVENT_BUS = "default"
LOCAL_TOPIC_NAME = "docagent-local-actions"
LOCAL_TOPIC_ARN = f"arn:aws:sns:us-east-1:123456789012:{LOCAL_TOPIC_NAME}"
MAX_BODY_BYTES = 64 * 1024

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tickets (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    reference TEXT NOT NULL,
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    body_sha256 TEXT NOT NULL,
    idempotency_key TEXT UNIQUE,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS tickets_by_reference ON tickets (reference);
"""


@dataclasses.dataclass
class TicketFaults:
    drop_responses: int = 0
    delay_seconds: float = 0.0
    delay_requests: int | None = None
    fail_requests: int = 0
    garbage_responses: int = 0
    reject_idempotency_keys: bool = False

    def update(self, changes: dict[str, Any]) -> None:
        names = {field.name for field in dataclasses.fields(self)}
        unknown = sorted(set(changes) - names - {"clear"})
        if unknown:
            raise ValueError(f"unknown fault switch(es): {', '.join(unknown)}")
        if changes.get("clear"):
            for field in dataclasses.fields(self):
                setattr(self, field.name, field.default)
        for name, value in changes.items():
            if name == "clear":
                continue
            if name == "reject_idempotency_keys":
                if not isinstance(value, bool):
                    raise ValueError("reject_idempotency_keys must be true or false")
            elif name == "delay_requests":
                if value is not None and (not isinstance(value, int) or value < 0):
                    raise ValueError("delay_requests must be a count or null")
            elif isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ValueError(f"{name} must be a non-negative number")
            elif name != "delay_seconds" and not isinstance(value, int):
                raise ValueError(f"{name} must be a count")
            setattr(self, name, value)


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class TicketStore:
    """Tickets in SQLite; every write is one transaction, so the store survives a crash or a restart."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._path = path
        self._lock = threading.Lock()
        with self._connect() as connection:
            connection.executescript(_SCHEMA)

    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        connection = sqlite3.connect(self._path, timeout=10, isolation_level=None)
        connection.row_factory = sqlite3.Row
        try:
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=FULL")
            yield connection
        finally:
            connection.close()

    @staticmethod
    def _ticket(row: sqlite3.Row) -> dict[str, Any]:
        return {
            "id": row["id"],
            "reference": row["reference"],
            "title": row["title"],
            "body": row["body"],
            "idempotency_key": row["idempotency_key"],
            "created_at": row["created_at"],
        }

    def create(
        self, reference: str, title: str, body: str, idempotency_key: str | None
    ) -> tuple[int, dict[str, Any]]:
        """(201, new ticket), (200, the key's ticket) or (409, an error object)."""
        digest = hashlib.sha256(json.dumps([reference, title, body]).encode()).hexdigest()
        with self._lock, self._connect() as connection:
            connection.execute("BEGIN IMMEDIATE")
            try:
                if idempotency_key is not None:
                    row = connection.execute(
                        "SELECT * FROM tickets WHERE idempotency_key = ?", (idempotency_key,)
                    ).fetchone()
                    if row is not None:
                        connection.execute("COMMIT")
                        if row["body_sha256"] != digest:
                            return 409, {
                                "error": "IdempotencyKeyReused",
                                "message": f"idempotency key {idempotency_key} was used with another body",
                                "ticket_id": row["id"],
                            }
                        return 200, self._ticket(row)
                seq = connection.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM tickets").fetchone()[0]
                ticket_id = f"TKT-{seq:06d}"
                connection.execute(
                    "INSERT INTO tickets (seq, id, reference, title, body, body_sha256, idempotency_key,"
                    " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (seq, ticket_id, reference, title, body, digest, idempotency_key, _now()),
                )
                row = connection.execute("SELECT * FROM tickets WHERE seq = ?", (seq,)).fetchone()
                connection.execute("COMMIT")
            except BaseException:
                connection.execute("ROLLBACK")
                raise
        return 201, self._ticket(row)

    def find(self, reference: str | None = None) -> list[dict[str, Any]]:
        with self._connect() as connection:
            if reference is None:
                rows = connection.execute("SELECT * FROM tickets ORDER BY seq").fetchall()
            else:
                rows = connection.execute(
                    "SELECT * FROM tickets WHERE reference = ? ORDER BY seq", (reference,)
                ).fetchall()
        return [self._ticket(row) for row in rows]

    def get(self, ticket_id: str) -> dict[str, Any] | None:
        with self._connect() as connection:
            row = connection.execute("SELECT * FROM tickets WHERE id = ?", (ticket_id,)).fetchone()
        return None if row is None else self._ticket(row)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    service: TicketService

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away (timed out, killed) is expected here: only other errors are printed."""
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the service is a test double, its callers log what matters."""

    # -- plumbing ----------------------------------------------------------------------------------

    def _send(self, status: int, payload: Any = None, *, raw: bytes | None = None) -> None:
        data = raw if raw is not None else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json" if raw is None else "text/html")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: HTTPStatus, message: str) -> None:
        self._send(status, {"error": status.phrase, "message": message})

    def _body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        if length < 0 or length > MAX_BODY_BYTES:
            raise ValueError(f"body over {MAX_BODY_BYTES} bytes")
        raw = self.rfile.read(length) if length else b""
        return json.loads(raw) if raw else None

    def _drop(self) -> None:
        """Close the connection without a word: the client cannot tell whether anything happened."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(2)

    # -- routes ------------------------------------------------------------------------------------

    def do_GET(self) -> None:
        self._route("GET")

    def do_POST(self) -> None:
        self._route("POST")

    def _route(self, method: str) -> None:
        service = self.server.service
        url = urllib.parse.urlsplit(self.path)
        # As the local cloud's endpoint (request_guard.py): this machine's clients only, no web page.
        if (self.headers.get("Host") or "").lower() not in served_hosts(self.server.server_address[1]):
            self.close_connection = True
            self._error(HTTPStatus.MISDIRECTED_REQUEST, "not a host this ticket service serves")
            return
        if self.headers.get("Origin") is not None or self.headers.get("Sec-Fetch-Site") in CROSS_SITE:
            self.close_connection = True
            self._error(HTTPStatus.FORBIDDEN, "a browser's cross-origin request is refused")
            return
        try:
            body = self._body() if method == "POST" else None
        except (ValueError, UnicodeDecodeError):
            self._error(HTTPStatus.BAD_REQUEST, "the body is not JSON")
            return
        if url.path == "/_health" and method == "GET":
            self._send(200, {"ok": True})
            return
        if url.path == "/_faults":
            if method == "POST":
                try:
                    service.set_faults(**(body if isinstance(body, dict) else {}))
                except (TypeError, ValueError) as error:
                    self._error(HTTPStatus.BAD_REQUEST, str(error))
                    return
            self._send(200, service.faults())
            return
        if url.path != "/tickets" and not url.path.startswith("/tickets/"):
            self._error(HTTPStatus.NOT_FOUND, f"no route {method} {url.path}")
            return
        if service.token is not None and self.headers.get("Authorization") != f"Bearer {service.token}":
            self._error(HTTPStatus.UNAUTHORIZED, "a valid bearer token is required")
            return
        plan = service.take_faults(creating=method == "POST" and url.path == "/tickets")
        if plan.delay and service.stopping.wait(plan.delay):
            self._drop()
            return
        if plan.fail:
            self._error(HTTPStatus.SERVICE_UNAVAILABLE, "the ticket service is unavailable (fault switch)")
            return
        status, payload = self._tickets(method, url, body)
        if plan.drop and status in {200, 201}:
            self._drop()
        elif plan.garbage:
            self._send(200, raw=b"<html><body>502 Bad Gateway</body></html>")
        else:
            self._send(status, payload)

    def _tickets(self, method: str, url: urllib.parse.SplitResult, body: Any) -> tuple[int, Any]:
        service = self.server.service
        if method == "GET" and url.path == "/tickets":
            query = urllib.parse.parse_qs(url.query)
            reference = query.get("reference", [None])[0]
            return 200, {"tickets": service.store.find(reference)}
        if method == "GET":
            ticket = service.store.get(urllib.parse.unquote(url.path.removeprefix("/tickets/")))
            return (200, ticket) if ticket else (404, {"error": "Not Found", "message": "no such ticket"})
        if url.path != "/tickets":
            return 405, {"error": "Method Not Allowed", "message": f"{method} {url.path}"}
        if not isinstance(body, dict) or not all(
            isinstance(body.get(name), str) for name in ("reference", "title", "body")
        ):
            return 400, {
                "error": "Bad Request",
                "message": "reference, title and body (strings) are required",
            }
        if not body["reference"]:
            return 400, {"error": "Bad Request", "message": "reference must not be empty"}
        key = None if service.current_faults.reject_idempotency_keys else self.headers.get("Idempotency-Key")
        return service.store.create(body["reference"], body["title"], body["body"], key or None)


@dataclasses.dataclass(frozen=True)
class _Plan:
    delay: float = 0.0
    fail: bool = False
    drop: bool = False
    garbage: bool = False


class TicketService:
    """``start()`` serves on 127.0.0.1 (a free port, kept across restarts); ``stop()`` keeps the store."""

    def __init__(self, db_path: Path, *, port: int = 0, token: str | None = None) -> None:
        self.db_path = db_path
        self.port = port
        self.token = token
        self.store = TicketStore(db_path)
        self.current_faults = TicketFaults()
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def running(self) -> bool:
        return self._server is not None

    def start(self) -> TicketService:
        if self._server is not None:
            return self
        self.stopping.clear()
        server = _Server((HOST, self.port), _Handler)
        server.service = self
        self.port = int(server.server_address[1])
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="ticket-service", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        self.stopping.set()
        server.shutdown()
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def restart(self) -> TicketService:
        self.stop()
        return self.start()

    # -- fault switches ----------------------------------------------------------------------------

    def set_faults(self, **changes: Any) -> dict[str, Any]:
        """Change some switches (``clear=True`` first resets all); returns the switches now in force."""
        with self._lock:
            candidate = dataclasses.replace(self.current_faults)
            candidate.update(changes)
            self.current_faults = candidate
            return dataclasses.asdict(candidate)

    def clear_faults(self) -> dict[str, Any]:
        return self.set_faults(clear=True)

    def faults(self) -> dict[str, Any]:
        with self._lock:
            return dataclasses.asdict(self.current_faults)

    def take_faults(self, *, creating: bool) -> _Plan:
        """The faults that apply to one request, counting down the switches it uses."""
        with self._lock:
            faults = self.current_faults
            delay = 0.0
            if faults.delay_seconds > 0 and faults.delay_requests != 0:
                delay = faults.delay_seconds
                if faults.delay_requests is not None:
                    faults.delay_requests -= 1
            if faults.fail_requests > 0:
                faults.fail_requests -= 1
                return _Plan(delay=delay, fail=True)
            drop = creating and faults.drop_responses > 0
            if drop:
                faults.drop_responses -= 1
            garbage = not drop and faults.garbage_responses > 0
            if garbage:
                faults.garbage_responses -= 1
            return _Plan(delay=delay, drop=drop, garbage=garbage)

    # -- reading -----------------------------------------------------------------------------------

    def tickets(self, reference: str | None = None) -> list[dict[str, Any]]:
        return self.store.find(reference)

    def __enter__(self) -> TicketService:
        return self.start()

    def __exit__(self, *_: Any) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="serve the local ticket service until interrupted")
    parser.add_argument("--db", type=Path, required=True, help="the SQLite file (created if missing)")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    service = TicketService(args.db, port=args.port).start()
    print(service.url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        service.stop()


if __name__ == "__main__":
    main()
