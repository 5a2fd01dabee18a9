"""The local cloud's state on disk: a journal of every change, replayed into a fresh moto at start.

moto keeps S3, DynamoDB, Lambda, IAM, SSM, CloudWatch Logs and Step Functions in memory. The endpoint
here journals every mutating API request that succeeded (method, path, headers, body) before it answers:
an answered change is on disk, an unanswered one may be lost, as a client of any service must assume
when the connection drops. At start the requests are replayed, in order, straight into moto's WSGI
application (no network). Step Functions executions are not replayed as requests (running them again
would run every task again): the engine records them itself (see ``resume.py``) in the same journal.

Journal first, apply after: a journaled request is written to the journal and synced *before* moto applies
it, and requests are applied one at a time in the order they were written, so the journal's order is the
order the changes were applied; a request the journal could not take (a full or failing disk) is
answered 500 without being applied: it is neither visible while the cloud runs nor after a restart. A
request that moto then refuses (any answer but 2xx) is taken back from the journal (``Journal.retract``).
The ids a change hands out (an S3 version id, a multipart UploadId) are drawn before it is applied, written
with it and pinned while it is applied, live and on replay alike (``_pinned_ids``). Concurrent requests
(and the engine's records) share one disk sync (journal.py: group commit).
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import shutil
import sys
import threading
import time
import urllib.parse
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from moto.moto_api._internal import mock_random
from moto.moto_server.threaded_moto_server import ThreadedMotoServer
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
from moto.s3 import models as s3_models
from werkzeug.serving import BaseWSGIServer, make_server

from docagent.localcloud import keep_alive
from docagent.localcloud.request_counts import WsgiApp
from docagent.localcloud.state.journal import Journal, JournalWriteError

JOURNAL_NAME = "journal.log"
STATE_FOLDER = "cloud-state"
SETTINGS_NAME = "settings.json"

_READ_PREFIXES = ("Get", "Describe", "List", "Query", "Scan", "BatchGet", "Filter", "Test", "Validate")
# Executions are the engine's to record (resume.py): replaying these would run their tasks again.
_ENGINE_ACTIONS = {
    "StartExecution",
    "StartSyncExecution",
    "RedriveExecution",
    "StopExecution",
    "SendTaskSuccess",
    "SendTaskFailure",
    "SendTaskHeartbeat",
}
_ENVIRON_KEYS = (
    "REQUEST_METHOD",
    "SCRIPT_NAME",
    "PATH_INFO",
    "QUERY_STRING",
    "CONTENT_TYPE",
    "SERVER_NAME",
    "SERVER_PORT",
    "SERVER_PROTOCOL",
    "REQUEST_URI",
    "RAW_URI",
)
_PRESERVED_NAMES = "moto.preserved_header_names"


def state_folder(state_dir: Path) -> Path:
    return state_dir / STATE_FOLDER


def _action(environ: dict[str, Any], body: bytes) -> str | None:
    """The API action of a JSON (X-Amz-Target) or query (Action=) request; None for REST APIs."""
    target = environ.get("HTTP_X_AMZ_TARGET")
    if target:
        return str(target).rsplit(".", 1)[-1]
    if str(environ.get("CONTENT_TYPE", "")).startswith("application/x-www-form-urlencoded"):
        form = urllib.parse.parse_qs(body.decode("utf-8", "replace"))
        if "Action" in form:
            return form["Action"][0]
    query = urllib.parse.parse_qs(str(environ.get("QUERY_STRING", "")))
    return query["Action"][0] if "Action" in query else None


def is_journaled(environ: dict[str, Any], body: bytes) -> bool:
    """Whether a request changes state that the journal keeps (reads and executions do not)."""
    method = str(environ.get("REQUEST_METHOD", "GET")).upper()
    if method in ("GET", "HEAD", "OPTIONS"):
        return False
    path = str(environ.get("PATH_INFO", ""))
    if path.endswith("/invocations") or path.endswith("/invoke-async") or "/invoke-async/" in path:
        return False  # a Lambda invocation: its effects arrive as requests of their own
    if path.endswith("/converse") or path.startswith("/_docagent/"):
        # A model call keeps nothing; the local cloud's own switches (the local Bedrock's faults) are set
        # again by `local up --model-faults`, not replayed over them.
        return False
    action = _action(environ, body)
    if action is None:
        return True  # REST (S3, Lambda's control plane): every non-read method changes something
    return action not in _ENGINE_ACTIONS and not action.startswith(_READ_PREFIXES)


def read_body(environ: dict[str, Any]) -> bytes:
    stream = environ["wsgi.input"]
    length = environ.get("CONTENT_LENGTH")
    if length:
        body: bytes = stream.read(int(length))
    elif str(environ.get("HTTP_TRANSFER_ENCODING", "")).lower() == "chunked":
        body = stream.read()
    else:
        body = b""  # no length and not chunked: no body (reading would wait for the client to close)
    environ["wsgi.input"] = io.BytesIO(body)
    environ["CONTENT_LENGTH"] = str(len(body))
    environ.pop("HTTP_TRANSFER_ENCODING", None)
    return body


def _request_record(environ: dict[str, Any], body: bytes) -> dict[str, Any]:
    saved = {key: environ[key] for key in _ENVIRON_KEYS if isinstance(environ.get(key), str)}
    saved.update({key: value for key, value in environ.items() if key.startswith("HTTP_")})
    if isinstance(environ.get(_PRESERVED_NAMES), dict):
        saved[_PRESERVED_NAMES] = environ[_PRESERVED_NAMES]
    return {"t": "api", "environ": saved, "body": body}


class JournalingApp:
    """WSGI middleware: journal each mutating request, then apply it once it is on disk (never before).

    Requests pass three steps: write (in turn, under ``_write_order``), sync (together: the records that
    concurrent requests wrote meanwhile share one ``fdatasync``, group commit), apply (one at a time, in
    the order they were written: the order the replay applies them in)."""

    def __init__(self, app: Callable[..., Any], journal: Journal) -> None:
        self.app = app
        self.journal = journal
        self._write_order = threading.Lock()
        self._turns = threading.Condition()
        self._handed_out = 0  # turns to apply handed out, in journal order
        self._applied = 0  # turns done
        self.requests = 0

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if str(environ.get("REQUEST_METHOD", "GET")).upper() in ("GET", "HEAD", "OPTIONS"):
            return self.app(environ, start_response)  # type: ignore[no-any-return]
        body = read_body(environ)
        if not is_journaled(environ, body):
            return self.app(environ, start_response)  # type: ignore[no-any-return]
        statuses: list[str] = []

        def capture(status: str, headers: Any, exc_info: Any = None) -> Any:
            statuses.append(status)
            return start_response(status, headers, exc_info)

        record = {**_request_record(environ, body), **_new_ids(environ, body)}
        with self._write_order:
            try:
                sequence, offset = self.journal.write_at(record)
            except JournalWriteError as error:  # nothing of it is in the journal: nothing is applied
                return _journal_failed(environ, start_response, error)
            turn = self._handed_out
            self._handed_out += 1
        failure: Exception | None = None
        try:
            self.journal.sync(sequence)
        except Exception as error:  # a failed sync took it back from the journal (journal.py)
            failure = error
        with self._turns:
            self._turns.wait_for(lambda: self._applied == turn)
        chunks: list[bytes] = []
        try:  # the turn is passed on whatever happens, or every later change would wait forever
            if failure is None:
                with _pinned_ids(record.get("version_id"), record.get("upload_id")):
                    chunks = list(self.app(environ, capture))
        finally:
            if not _succeeded(statuses):  # not applied, or refused (or failed) in moto: it changed nothing
                self.journal.retract(sequence, offset)
            with self._turns:
                self._applied += 1
                self._turns.notify_all()
        if isinstance(failure, JournalWriteError):
            return _journal_failed(environ, start_response, failure)
        if failure is not None:
            raise failure
        if _succeeded(statuses):
            self.requests += 1
        return chunks


def _succeeded(statuses: list[str]) -> bool:
    return bool(statuses) and statuses[-1][:1] == "2"


def _new_ids(environ: dict[str, Any], body: bytes) -> dict[str, str]:
    """The ids a change will hand out, drawn before it is applied (the journal holds them before moto does).

    REST changes (S3, Lambda's control plane) draw ``mock_random.uuid4`` (an S3 object version, a function's
    revision); a CreateMultipartUpload (``POST /bucket/key?uploads``) draws its UploadId as moto does."""
    ids: dict[str, str] = {}
    if _action(environ, body) is None:
        ids["version_id"] = str(uuid.uuid4())
    query = urllib.parse.parse_qs(str(environ.get("QUERY_STRING", "")), keep_blank_values=True)
    if str(environ.get("REQUEST_METHOD", "")).upper() == "POST" and "uploads" in query:
        drawn = base64.b64encode(os.urandom(s3_models.UPLOAD_ID_BYTES)).decode()
        ids["upload_id"] = drawn.replace("=", "").replace("+", "").replace("/", "")
    return ids


def _journal_failed(
    environ: dict[str, Any], start_response: Callable[..., Any], error: JournalWriteError
) -> list[bytes]:
    """HTTP 500 in the request's protocol (JSON, query or REST XML): the SDK retries it, as it would an
    InternalError from AWS; the change was not applied."""
    message = f"{error.strerror}; the change was not applied"
    if environ.get("HTTP_X_AMZ_TARGET"):
        body = json.dumps({"__type": "InternalFailure", "message": message}).encode()
        content_type = "application/x-amz-json-1.0"
    else:
        escaped = message.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        error_xml = f"<Error><Code>InternalError</Code><Message>{escaped}</Message></Error>"
        if str(environ.get("CONTENT_TYPE", "")).startswith("application/x-www-form-urlencoded"):
            error_xml = f"<ErrorResponse>{error_xml}</ErrorResponse>"
        body = error_xml.encode()
        content_type = "application/xml"
    headers = [
        ("Content-Type", content_type),
        ("Content-Length", str(len(body))),
        ("x-amzn-ErrorType", "InternalFailure"),
    ]
    start_response("500 Internal Server Error", headers)
    return [body]


def replay_request(app: Callable[..., Any], record: dict[str, Any]) -> str:
    """Apply one journaled request to moto's application; returns the HTTP status."""
    body: bytes = record["body"]
    environ: dict[str, Any] = dict(record["environ"])
    environ.update(
        {
            "wsgi.input": io.BytesIO(body),
            "wsgi.errors": sys.stderr,
            "wsgi.version": (1, 0),
            "wsgi.url_scheme": "http",
            "wsgi.multithread": True,
            "wsgi.multiprocess": False,
            "wsgi.run_once": False,
            "CONTENT_LENGTH": str(len(body)),
        }
    )
    statuses: list[str] = []

    def start_response(status: str, headers: Any, exc_info: Any = None) -> Callable[[bytes], None]:
        statuses.append(status)
        return lambda _: None

    with _pinned_ids(record.get("version_id"), record.get("upload_id")):
        for _ in app(environ, start_response):
            pass
    return statuses[-1] if statuses else "500"


class _Pins(threading.local):
    """The ids the change being applied in this thread hands out (None: moto draws them)."""

    version_id: str | None = None
    upload_id: str | None = None


_PINS = _Pins()


def _pinned_uuid4() -> uuid.UUID:
    pinned = _PINS.version_id
    return uuid.UUID(pinned) if pinned else type(mock_random).uuid4(mock_random)


def _install_pins() -> None:
    """Route moto's draws through ``_PINS`` (once; other threads keep drawing at random)."""
    if vars(mock_random).get("uuid4") is not _pinned_uuid4:
        vars(mock_random)["uuid4"] = _pinned_uuid4
    if getattr(s3_models.FakeMultipart.__init__, "_docagent_pinned", False):
        return
    original_init = s3_models.FakeMultipart.__init__

    def init(multipart: s3_models.FakeMultipart, *args: Any, **kwargs: Any) -> None:
        original_init(multipart, *args, **kwargs)
        if _PINS.upload_id:
            multipart.id = _PINS.upload_id

    init._docagent_pinned = True  # type: ignore[attr-defined]
    s3_models.FakeMultipart.__init__ = init  # type: ignore[method-assign,assignment]


@contextlib.contextmanager
def _pinned_ids(version_id: str | None, upload_id: str | None) -> Iterator[None]:
    """A change hands out the ids its record holds, when it is applied and when it is replayed.

    - The S3 object version it creates (manifests pin documents by VersionId): moto draws it from
      mock_random.uuid4.
    - The multipart upload it opens (SealJob joins a job's item parts with one; its UploadPartCopy and
      CompleteMultipartUpload requests, replayed after it, name that upload, as may a client still holding
      it): moto draws it from os.urandom in FakeMultipart.
    Only the applying thread sees them (non-journaled requests draw at random meanwhile).
    """
    _install_pins()
    _PINS.version_id, _PINS.upload_id = version_id, upload_id
    try:
        yield
    finally:
        _PINS.version_id = _PINS.upload_id = None


class PortTakenError(OSError):
    """The local cloud's port is held by another program."""


class JournaledMotoServer(ThreadedMotoServer):
    """moto's threaded server with the journal in front, bound before ``start`` returns (a taken port is
    an error at once, not a thread that dies while ``start`` waits for it)."""

    def __init__(
        self,
        journal: Journal | None,
        ip_address: str,
        port: int,
        app: WsgiApp | None = None,
        count: Callable[[WsgiApp], WsgiApp] | None = None,
    ) -> None:
        super().__init__(ip_address=ip_address, port=port, verbose=False)
        # ``app`` serves requests (moto's dispatcher by default) and replays the journal, uncounted;
        # ``count`` wraps what clients reach (docagent cost counts their requests).
        self.app: WsgiApp = app or DomainDispatcherApplication(create_backend_app)
        served = JournalingApp(self.app, journal) if journal is not None else self.app
        self.served: Callable[..., Any] = count(served) if count is not None else served
        self.connections = keep_alive.Connections()

    def start(self) -> None:
        self.bind()
        self.serve()

    def bind(self) -> None:
        """Listen on the port (connections wait in the backlog until ``serve``). Clients keep their
        connections between requests (keep_alive.py)."""
        keep_alive.install()
        try:
            server: BaseWSGIServer = make_server(
                self._ip_address,
                self._port,
                self.served,
                True,
                request_handler=keep_alive.KeepAliveRequestHandler,
            )
        except OSError as error:
            where = f"{self._ip_address}:{self._port}"
            raise PortTakenError(f"port {self._port} is taken ({where}: {error.strerror})") from None
        vars(server)["docagent_connections"] = self.connections
        self._server = server

    def serve(self) -> None:
        assert self._server is not None, "bind() first"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        self._server_ready_event.set()

    def stop(self) -> None:
        """Stop accepting, then end the kept connections: idle ones now, busy ones after their answer."""
        if self._thread is not None:
            super().stop()
        self.connections.close_idle()


def wipe(state_dir: Path, extra: Iterable[Path] = ()) -> None:
    """Forget everything (``local up --fresh``)."""
    shutil.rmtree(state_folder(state_dir), ignore_errors=True)
    for path in extra:
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


def save_settings(state_dir: Path, settings: dict[str, Any]) -> None:
    """Local settings (time scale, ...): written whole to a temporary file, then renamed over the old."""
    folder = state_folder(state_dir)
    folder.mkdir(parents=True, exist_ok=True)
    temporary = folder / f".{SETTINGS_NAME}.{os.getpid()}"
    with temporary.open("w") as file:
        file.write(json.dumps({**settings, "saved_at": time.time()}))
        file.flush()
        os.fsync(file.fileno())
    temporary.replace(folder / SETTINGS_NAME)


def load_settings(state_dir: Path) -> dict[str, Any]:
    path = state_folder(state_dir) / SETTINGS_NAME
    if not path.exists():
        return {}
    loaded = json.loads(path.read_text())
    return loaded if isinstance(loaded, dict) else {}
