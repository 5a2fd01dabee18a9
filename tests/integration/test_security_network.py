"""The console and a schema's ``$ref`` against real sockets on 127.0.0.1 (issue #39, docs/security.md): the
console answers only the names it serves, and ``definition validate`` never fetches a ``$ref``."""

from __future__ import annotations

import http.server
import json
import shutil
import socket
import threading
import time
import urllib.parse
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from docagent.cli import main
from docagent.console.app import ConsoleServer, Handler, ReviewConsole, serve, served_hosts
from docagent.kit.loader import DefinitionInvalid, read_bundle
from docagent.localcloud.bedrock.model_faults import model_faults_of
from docagent.localcloud.server import LocalCloud
from tests.support import host_request

CLAIMS = Path(__file__).resolve().parents[2] / "examples" / "claims"
SCHEMA = "classes/claim-form.schema.json"


# ------------------------------------------------------------------------------------------------ console


class _Recording(ReviewConsole):
    """The console, its approve recorded instead of sent (what is asserted is that it is never called)."""

    approved: list[str]

    def approve(self, job_id: str, form: dict[str, str]) -> str:
        self.approved.append(job_id)
        return f"job {job_id} approved"


@pytest.fixture
def console() -> Iterator[tuple[ConsoleServer, _Recording]]:
    app = _Recording(ctx=None, reviewer="rita")  # type: ignore[arg-type] (no page read here needs it)
    app.approved = []
    server = serve(app, 0, ["review.internal"])
    try:
        yield server, app
    finally:
        server.shutdown()
        server.server_close()


def _request(server: ConsoleServer, method: str, path: str, host: str, body: str = "", **headers: str) -> Any:
    return host_request(server.server_address[1], method, path, host, body, **headers)


def test_the_console_answers_only_the_names_it_serves(console: tuple[ConsoleServer, _Recording]) -> None:
    server, _ = console
    port = server.server_address[1]
    assert server.hosts == served_hosts(port, ["review.internal"])
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}", f"review.internal:{port}"):
        status, _, _ = _request(server, "GET", "/static/console.css", host)
        assert status == 200, host
    for host in (
        f"evil.example:{port}",
        "127.0.0.1",
        f"127.0.0.1:{port + 1}",
        f"review.internal.evil:{port}",
        "",
    ):
        status, _, body = _request(server, "GET", "/static/console.css", host)
        assert status == 421 and "not a host this console serves" in body, host


def test_a_rebound_post_with_the_right_token_and_origin_does_nothing(
    console: tuple[ConsoleServer, _Recording],
) -> None:
    server, app = console
    port = server.server_address[1]
    evil = f"evil.example:{port}"
    form = urllib.parse.urlencode({"token": app.token})
    status, _, _ = _request(server, "POST", "/job/j1/approve", evil, form, Origin=f"http://{evil}")
    assert status == 421
    assert app.approved == []
    # The same post under the console's own name acts: the refusal above was the Host's alone.
    own = f"127.0.0.1:{port}"
    status, headers, _ = _request(server, "POST", "/job/j1/approve", own, form, Origin=f"http://{own}")
    assert status == 303 and app.approved == ["j1"]
    said_id = urllib.parse.parse_qs(urllib.parse.urlsplit(headers["Location"]).query)["said"][0]
    assert app.status(said_id) == {"text": "job j1 approved", "kind": "ok"}


@pytest.mark.parametrize(
    "back",
    [
        "/job/j1\r\nSet-Cookie: pwned=1",
        "/job/j1/document/a.pdf\nLocation: http://evil.example",
        "//evil.example/job/j1",
        "http://evil.example/job/j1",
        "/job/j10",  # another job's page
        "/job/j1//evil.example",
        "/job/j1/\u202eexe.txt",
    ],
)
def test_a_back_that_is_not_a_page_of_the_job_is_refused_before_acting(
    console: tuple[ConsoleServer, _Recording], back: str
) -> None:
    server, app = console
    own = f"127.0.0.1:{server.server_address[1]}"
    form = urllib.parse.urlencode({"token": app.token, "back": back})
    status, headers, body = _request(server, "POST", "/job/j1/approve", own, form)
    assert status == 400 and "back is not a page of this job" in body
    assert "Set-Cookie" not in headers and "Location" not in headers and app.approved == []
    # a page of the job is where the action goes back to
    form = urllib.parse.urlencode({"token": app.token, "back": "/job/j1/document/a.pdf?tab=fields"})
    status, headers, _ = _request(server, "POST", "/job/j1/approve", own, form)
    assert status == 303 and headers["Location"].startswith("/job/j1/document/a.pdf?tab=fields&said=")


@pytest.mark.parametrize(("length", "status"), [("-1", 400), ("abc", 400), ("1e3", 400), ("99999999", 413)])
def test_a_bad_content_length_is_refused_at_once(
    console: tuple[ConsoleServer, _Recording], length: str, status: int, capsys: pytest.CaptureFixture[str]
) -> None:
    server, app = console
    own = f"127.0.0.1:{server.server_address[1]}"
    form = urllib.parse.urlencode({"token": app.token})
    started = time.monotonic()
    answered, _, _ = _request(server, "POST", "/job/j1/approve", own, form, **{"Content-Length": length})
    assert answered == status and time.monotonic() - started < 5 and app.approved == []
    assert "Traceback" not in capsys.readouterr().err


def test_a_body_shorter_than_its_length_frees_the_thread(
    console: tuple[ConsoleServer, _Recording],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server, app = console
    monkeypatch.setattr(Handler, "timeout", 0.5)
    port = server.server_address[1]
    form = urllib.parse.urlencode({"token": app.token}).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=30) as client:
        length = len(form) + 100
        head = f"POST /job/j1/approve HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {length}\r\n"
        client.sendall(head.encode() + b"Content-Type: application/x-www-form-urlencoded\r\n\r\n" + form)
        started = time.monotonic()
        answer = ""  # the connection stays open: only the server's timeout ends it
        while "shorter than its Content-Length" not in answer and (chunk := client.recv(4096)):
            answer += chunk.decode()  # the head and the body may come in two reads
    assert answer.startswith("HTTP/1.1 400") and "shorter than its Content-Length" in answer
    assert time.monotonic() - started < 10 and app.approved == []
    assert "Traceback" not in capsys.readouterr().err


def test_a_status_line_is_the_consoles_own_never_a_urls(console: tuple[ConsoleServer, _Recording]) -> None:
    _, app = console
    assert app.status("Your account is locked: call +1 555 0100") is None
    assert app.status(None) is None
    kept = app.keep_status("job j approved", "ok")
    assert app.status(kept) == {"text": "job j approved", "kind": "ok"}
    for number in range(300):  # kept for the recent redirects only
        app.keep_status(f"line {number}", "ok")
    assert app.status(kept) is None


class _Counting(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self) -> None:
        _Counting.hits.append(self.path)
        body = b'{"type": "string"}'
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


@pytest.fixture
def listening() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Counting)
    _Counting.hits = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/x.json"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def claims(tmp_path: Path) -> Path:
    copy = tmp_path / "claims"
    shutil.copytree(CLAIMS, copy)
    return copy


def test_an_http_ref_is_refused_fast_and_nothing_is_fetched(
    claims: Path, listening: str, capsys: pytest.CaptureFixture[str]
) -> None:
    ref = listening
    path = claims / SCHEMA
    schema = json.loads(path.read_text())
    schema["properties"]["extra"] = {"$ref": ref}
    path.write_text(json.dumps(schema))
    started = time.monotonic()
    code = main(["definition", "validate", str(claims), "--json"])
    took = time.monotonic() - started
    answer = json.loads(capsys.readouterr().out)
    assert code == 2 and took < 2, took
    problems = [p for p in answer["problems"] if ref in p["message"]]
    assert len(problems) == 1, answer
    assert problems[0]["file"] == SCHEMA and problems[0]["where"] == "$.properties.extra.$ref"
    assert "outside the definition's folder" in problems[0]["message"] and problems[0]["fix"]
    assert _Counting.hits == []
    with pytest.raises(DefinitionInvalid):
        read_bundle(claims)
    assert _Counting.hits == []


# ------------------------------------------------------------------------------------------- local cloud


def test_the_local_cloud_answers_its_own_clients_and_no_web_page(cloud: LocalCloud, aws: Any) -> None:
    """Issue #49: a page of any site could list the buckets and read the documents; the local Bedrock
    forwards to the real account with ``--model bedrock``."""
    bucket = f"guarded-{uuid.uuid4().hex[:8]}"
    aws("s3").create_bucket(Bucket=bucket)  # the project's signed clients are served
    assert bucket in [found["Name"] for found in aws("s3").list_buckets()["Buckets"]]
    assert model_faults_of(cloud.endpoint)["faults"] is not None  # the local cloud's own routes, signed
    port, own = cloud.port, f"127.0.0.1:{cloud.port}"
    converse = "/model/anthropic.claude/converse"
    refused = [
        ("GET", "/", f"evil.example:{port}", {}),  # a rebound name
        ("GET", "/", own, {"Origin": "http://evil.example"}),
        ("GET", "/", own, {}),  # unsigned ListBuckets
        ("GET", f"/{bucket}", own, {"Sec-Fetch-Site": "cross-site"}),
        ("OPTIONS", "/", own, {"Origin": "http://evil.example", "Access-Control-Request-Method": "PUT"}),
        ("POST", converse, own, {"Content-Type": "application/json"}),  # the Bedrock pass-through, unsigned
        ("POST", converse, own, {"Origin": "http://evil.example", "Content-Type": "text/plain"}),
        ("DELETE", "/_docagent/bedrock/faults", own, {}),
    ]
    before = model_faults_of(cloud.endpoint)
    for method, path, host, headers in refused:
        status, answered, body = host_request(port, method, path, host, **headers)
        assert status in (403, 421) and bucket not in body, (method, path, host, headers, status)
        assert not any(name.lower().startswith("access-control") for name in answered), answered
    status, _, body = host_request(port, "GET", "/", own)
    assert status == 403 and "<Code>AccessDenied</Code>" in body
    assert model_faults_of(cloud.endpoint) == before
