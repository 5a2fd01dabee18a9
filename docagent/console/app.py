"""The console's web application: a threaded HTTP server of the standard library on 127.0.0.1, pages rendered
by Jinja2 (autoescaped: job ids, fields and documents are untrusted text), a little JavaScript.

Every page reads through docagent/console/views.py (the operator's reader); every action is the operator's
command function (redrive, approve/reject, review) called with the job named by the URL, then a redirect
(POST, redirect, GET: a reload shows the page again and sends nothing). Actions are refused without the
server's form token (a page of another site cannot post to the console) and run one at a time per job.

A request whose ``Host`` is not one the console serves (``127.0.0.1:PORT``, ``localhost:PORT`` and those the
operator names) is refused with 421 before anything is read or done: a page of another site whose name is made
to resolve to 127.0.0.1 (DNS rebinding) gets no page, no token, no action. The status line after an action is
kept by the server and named in the redirect by an id: text in a URL is never shown as the console's own
(docs/security.md).
"""

from __future__ import annotations

import json
import mimetypes
import re
import secrets
import threading
import urllib.parse
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from pydantic import ValidationError

from docagent.console import pages, split_form, views
from docagent.operations import approval, review
from docagent.operations.context import EXIT_NOT_FOUND, OperatorContext, OperatorError, as_refusal
from docagent.operations.records import JobRecords, check_job_id
from docagent.operations.redrive_job import redrive_job
from docagent.served_hosts import served_hosts
from functions import storage
from functions.reviews import ChosenEvidence

HOST = "127.0.0.1"  # never another interface: the console acts with the operator's credentials
MAX_FORM_BYTES = 64 * 1024
SEGMENT = r"([A-Za-z0-9_][A-Za-z0-9._-]{0,199})"
# a packet's section (functions/reading/sections.py SECTION_ID_PATTERN)
SECTION = r"(s[0-9]{4}-[0-9]{4}(?:-r1)?)"
BODY_TIMEOUT_SECONDS = 10.0
BACK = re.compile(r"(/[A-Za-z0-9_][A-Za-z0-9._-]{0,199})*(\?[A-Za-z0-9._~=&%-]*)?")  # /job/JOB's pages
KEPT_STATUSES = 256  # the status lines a console keeps for its redirects (the oldest go first)


@dataclass
class ReviewConsole:
    """The application: the deployment it reads and acts on, who acts, the form token."""

    ctx: OperatorContext
    reviewer: str
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    _locks: dict[str, threading.Lock] = field(default_factory=dict)
    _guard: threading.Lock = field(default_factory=threading.Lock)
    _statuses: OrderedDict[str, tuple[str, str]] = field(default_factory=OrderedDict)
    page_cache: pages.PageCache = field(default_factory=pages.PageCache)  # each page rendered once

    def __post_init__(self) -> None:
        self.templates = Environment(
            loader=PackageLoader("docagent.console", "templates"),
            autoescape=select_autoescape(["html"]),
            trim_blocks=True,
            lstrip_blocks=True,
        )
        split_form.install(self.templates, self.ctx)  # a packet's re-split (docagent/console/split_form.py)

    def job_lock(self, job_id: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(job_id, threading.Lock())

    def keep_status(self, text: str, kind: str) -> str:
        """Keep an action's status line; the id names it in the redirect (``?said=ID``)."""
        said_id = secrets.token_urlsafe(9)
        with self._guard:
            self._statuses[said_id] = (text, kind)
            while len(self._statuses) > KEPT_STATUSES:
                self._statuses.popitem(last=False)
        return said_id

    def status(self, said_id: str | None) -> dict[str, str] | None:
        """The status line an id names, or None: an id this console did not give shows nothing."""
        with self._guard:
            kept = self._statuses.get(said_id or "")
        return {"text": kept[0], "kind": kept[1]} if kept else None

    def render(self, template: str, **values: Any) -> bytes:
        page = self.templates.get_template(template)
        return page.render(token=self.token, where=self.ctx.where, **values).encode()

    # -- actions: each is an operator command's function, bound to the job in the URL ---------------------

    def redrive(self, job_id: str, form: dict[str, str]) -> str:
        records = JobRecords(self.ctx, job_id)
        code, plan = redrive_job(records, dry_run=False, allow_version_drift=False)
        if plan["redriven"]:
            return f"job {job_id} redriven at {plan['redrive_date']}"
        if plan["already_redriven"]:
            return f"job {job_id} was already redriven: nothing sent again"
        raise OperatorError(plan.get("error") or f"job {job_id} cannot be redriven", code)

    def approve(self, job_id: str, form: dict[str, str]) -> str:
        decided = approval.decide(
            self.ctx,
            job_id,
            "approved",
            by=form.get("by") or self.reviewer,
            reason=form.get("reason") or None,
        )
        return f"job {job_id} approved by {decided['decided_by']}: its actions run next"

    def reject(self, job_id: str, form: dict[str, str]) -> str:
        if not (form.get("reason") or "").strip():
            raise OperatorError("a rejection needs a reason")
        decided = approval.decide(
            self.ctx, job_id, "rejected", by=form.get("by") or self.reviewer, reason=form["reason"]
        )
        return f"job {job_id} rejected by {decided['decided_by']}"

    def decide_document(self, job_id: str, item: str, form: dict[str, str]) -> str:
        """Decide a review item: a document, or a packet's section (``{document_id}#{section_id}``)."""
        verdict = form.get("verdict")
        if verdict not in {"accepted", "rejected"}:
            raise OperatorError("choose accept or reject")
        typed = {
            name.removeprefix("field:"): value for name, value in form.items() if name.startswith("field:")
        }
        decided = review.decide(
            JobRecords(self.ctx, job_id),
            item,
            "accepted" if verdict == "accepted" else "rejected",
            typed=typed,
            by=form.get("by") or self.reviewer,
            reason=form.get("reason") or None,
            evidence=chosen_evidence(form),
        )
        said = "recorded" if decided.written else "already recorded: nothing changed"
        queue = f"; {decided.queue.sentence()}" if decided.queue is not None else ""
        return f"{review.item_name(item)} {decided.decision.verdict} ({said}){queue}"


def checked_back(back: str | None, job_id: str) -> str | None:
    """Where an action's redirect goes: ``back`` when it is a page of this job (a path of segments of its
    own, at most a plain query: no scheme, host, ``//``, control or other characters), its page without one;
    None: refused."""
    page = f"/job/{job_id}"
    if not back:
        return page
    rest = back.removeprefix(page)
    if rest == back or not BACK.fullmatch(rest):
        return None
    return back


def chosen_evidence(form: dict[str, str]) -> dict[str, ChosenEvidence]:
    """The evidence the reviewer selected on the document's pages (``evidence:FIELD``: the page, the quote
    and its offsets as JSON, set by console.js), by field; an empty value: none chosen."""
    chosen: dict[str, ChosenEvidence] = {}
    for name, value in form.items():
        if not name.startswith("evidence:") or not value.strip():
            continue
        field_name = name.removeprefix("evidence:")
        try:
            chosen[field_name] = ChosenEvidence.model_validate_json(value)
        except ValidationError:
            raise OperatorError(f"the evidence chosen for {field_name} is not a page and its text") from None
    return chosen


def field_text(value: Any) -> str:
    """A field's value as the review form shows it: text as it is, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value)


class Handler(BaseHTTPRequestHandler):
    server: ConsoleServer
    protocol_version = "HTTP/1.1"
    # Every read of the socket (a request line, headers, a body) waits at most this long: a client that sends
    # less than it declared, or nothing, frees its thread (StreamRequestHandler sets it on the socket).
    timeout = BODY_TIMEOUT_SECONDS

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the console prints nothing per request."""

    # -- replies ----------------------------------------------------------------------------------------

    def reply(
        self, status: int, body: bytes, content_type: str = "text/html; charset=utf-8", **headers: str
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "same-origin")
        self.send_header("X-Frame-Options", "SAMEORIGIN")
        self.send_header(
            "Content-Security-Policy",
            headers.pop("csp", "default-src 'self'; frame-src 'self'; object-src 'none'; base-uri 'none'"),
        )
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def redirect(self, location: str) -> None:
        self.reply(HTTPStatus.SEE_OTHER, b"", Location=location)

    def refusal(self, error: Exception) -> None:
        refusal = as_refusal(error)
        status = HTTPStatus.NOT_FOUND if refusal.exit_code == EXIT_NOT_FOUND else HTTPStatus.BAD_REQUEST
        body = self.server.console.render("error.html", message=str(refusal), error_type=refusal.error_type)
        self.reply(status, body)

    # -- GET --------------------------------------------------------------------------------------------

    def host_refused(self) -> bool:
        """Refuse (421) a request for a name this console does not serve: before anything is read or done."""
        if (self.headers.get("Host") or "").lower() in self.server.hosts:
            return False
        self.reply(HTTPStatus.MISDIRECTED_REQUEST, b"refused: not a host this console serves", "text/plain")
        return True

    def do_GET(self) -> None:
        if self.host_refused():
            return
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        console = self.server.console
        try:
            for pattern, page in GET_ROUTES:
                matched = re.fullmatch(pattern, url.path)
                if matched:
                    page(self, console, query, *matched.groups())
                    return
            self.reply(
                HTTPStatus.NOT_FOUND,
                console.render("error.html", message="no such page", error_type="NotFound"),
            )
        except Exception as error:  # a refusal page, not a dropped connection
            self.refusal(error)

    def do_HEAD(self) -> None:
        self.do_GET()

    # -- POST -------------------------------------------------------------------------------------------

    def read_body(self) -> bytes | None:
        """The request's body, its ``Content-Length`` checked and read within ``timeout`` seconds (the
        socket's, StreamRequestHandler); None: refused (a reply sent, the connection closed), no traceback."""
        declared = self.headers.get("Content-Length") or "0"
        length = int(declared) if declared.isascii() and declared.isdigit() else -1
        if length < 0 or length > MAX_FORM_BYTES:
            self.close_connection = True  # its body is never read
            if length < 0:
                self.reply(HTTPStatus.BAD_REQUEST, b"refused: not a Content-Length", "text/plain")
            else:
                self.reply(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, b"form too large", "text/plain")
            return None
        try:
            body = self.rfile.read(length)
        except OSError:  # the timeout (TimeoutError) or a reset: what was not read is not a form
            body = b""
        if len(body) == length:
            return body
        self.close_connection = True
        self.reply(
            HTTPStatus.BAD_REQUEST, b"refused: the body is shorter than its Content-Length", "text/plain"
        )
        return None

    def do_POST(self) -> None:
        if self.host_refused():
            self.close_connection = True  # its body is never read
            return
        url = urllib.parse.urlsplit(self.path)
        console = self.server.console
        body = self.read_body()
        if body is None:
            return
        form = dict(urllib.parse.parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
        origin = self.headers.get("Origin")
        if not secrets.compare_digest(form.get("token", ""), console.token) or (
            origin is not None and origin != f"http://{self.headers.get('Host')}"
        ):
            self.reply(HTTPStatus.FORBIDDEN, b"refused: not a form of this console", "text/plain")
            return
        for pattern, action in POST_ROUTES:
            matched = re.fullmatch(pattern, url.path)
            if not matched:
                continue
            job_id = matched.group(1)
            back = checked_back(form.get("back"), job_id)
            if back is None:
                self.reply(HTTPStatus.BAD_REQUEST, b"refused: back is not a page of this job", "text/plain")
                return
            try:
                check_job_id(job_id)
                with console.job_lock(job_id):
                    said = action(console, form, *matched.groups())
                kind = "ok"
            except Exception as error:  # a refusal is said on the page
                said, kind = str(as_refusal(error)), "error"
            separator = "&" if "?" in back else "?"
            said_id = console.keep_status(said, kind)
            self.redirect(f"{back}{separator}{urllib.parse.urlencode({'said': said_id})}")
            return
        self.reply(HTTPStatus.NOT_FOUND, b"no such action", "text/plain")


# ------------------------------------------------------------------------------------------------ pages


def page_jobs(handler: Handler, console: ReviewConsole, query: dict[str, str]) -> None:
    rows = views.jobs(console.ctx)
    handler.reply(
        HTTPStatus.OK, console.render("jobs.html", jobs=rows, said=console.status(query.get("said")))
    )


def page_job(handler: Handler, console: ReviewConsole, query: dict[str, str], job_id: str) -> None:
    view = views.job(console.ctx, job_id)
    shown = view.documents
    outcome = query.get("outcome") or ""
    text = (query.get("q") or "").strip().lower()
    if outcome:
        shown = [row for row in shown if row.outcome == outcome]
    if text:
        shown = [row for row in shown if text in row.document_id.lower() or text in row.key_fields().lower()]
    body = console.render(
        "job.html",
        job=view,
        shown=shown,
        outcome=outcome,
        q=query.get("q") or "",
        said=console.status(query.get("said")),
    )
    handler.reply(HTTPStatus.OK, body)


def page_review(handler: Handler, console: ReviewConsole, query: dict[str, str], job_id: str) -> None:
    documents = views.review_queue(console.ctx, job_id)
    body = console.render(
        "review.html",
        job_id=job_id,
        documents=documents,
        item_path=views.item_path,
        said=console.status(query.get("said")),
    )
    handler.reply(HTTPStatus.OK, body)


def page_document(handler: Handler, console: ReviewConsole, query: dict[str, str], *where: str) -> None:
    """``/job/JOB/document/DOCUMENT`` and a packet's section's ``/job/JOB/document/DOCUMENT/section/S``."""
    job_id, document_id, *section = where
    section_id = section[0] if section else None
    view = views.document(console.ctx, job_id, document_id, section_id)
    if view is None:
        what = document_id if section_id is None else f"section {section_id} of {document_id}"
        raise OperatorError(f"job {job_id} has no document {what}", EXIT_NOT_FOUND)
    body = console.render(
        "document.html",
        doc=view,
        reviewer=console.reviewer,
        field_text=field_text,
        said=console.status(query.get("said")),
    )
    handler.reply(HTTPStatus.OK, body)


def page_file(
    handler: Handler, console: ReviewConsole, query: dict[str, str], job_id: str, document_id: str
) -> None:
    content = views.file_of(console.ctx, job_id, document_id)
    if content is None:
        raise OperatorError(f"job {job_id} has no PDF document {document_id}", EXIT_NOT_FOUND)
    # The document is untrusted: served only when it is a PDF, as a PDF (nosniff), never as a page.
    handler.reply(HTTPStatus.OK, content, "application/pdf", csp="default-src 'none'; object-src 'self'")


def page_image(handler: Handler, console: ReviewConsole, query: dict[str, str], *where: str) -> None:
    """``/job/JOB/document/DOCUMENT/page/N``: page N of a PDF or an image document (console/pages.py)."""
    job_id, document_id, page = where
    shown = pages.page_image(console.ctx, console.page_cache, job_id, document_id, int(page))
    # Decoded and encoded again (a PDF page rendered): served as an image only (nosniff), never a page.
    handler.reply(HTTPStatus.OK, shown.data, shown.content_type, csp="default-src 'none'")


def page_static(handler: Handler, console: ReviewConsole, query: dict[str, str], name: str) -> None:
    asset = resources.files("docagent.console").joinpath("static", name)
    if not asset.is_file():
        raise OperatorError(f"no static file {name}", EXIT_NOT_FOUND)
    content_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
    handler.reply(HTTPStatus.OK, asset.read_bytes(), content_type)


GET_ROUTES: list[tuple[str, Callable[..., None]]] = [
    (r"/", page_jobs),
    (rf"/job/{SEGMENT}", page_job),
    (rf"/job/{SEGMENT}/review", page_review),
    (rf"/job/{SEGMENT}/document/{SEGMENT}", page_document),
    (rf"/job/{SEGMENT}/document/{SEGMENT}/section/{SECTION}", page_document),
    (rf"/job/{SEGMENT}/document/{SEGMENT}/file", page_file),
    (rf"/job/{SEGMENT}/document/{SEGMENT}/page/([1-9][0-9]{{0,2}})", page_image),
    (r"/static/([a-z0-9-]+\.(?:css|js))", page_static),
]

POST_ROUTES: list[tuple[str, Callable[..., str]]] = [
    (rf"/job/{SEGMENT}/redrive", lambda console, form, job: console.redrive(job, form)),
    (rf"/job/{SEGMENT}/approve", lambda console, form, job: console.approve(job, form)),
    (rf"/job/{SEGMENT}/reject", lambda console, form, job: console.reject(job, form)),
    (
        rf"/job/{SEGMENT}/document/{SEGMENT}/review",
        lambda console, form, job, document: console.decide_document(job, document, form),
    ),
    (  # a packet's section, its own review item (functions/reading/sections.py)
        rf"/job/{SEGMENT}/document/{SEGMENT}/section/{SECTION}/review",
        lambda console, form, job, document, section: console.decide_document(
            job, storage.review_item(document, section), form
        ),
    ),
    (  # a packet re-split (docagent/console/split_form.py)
        rf"/job/{SEGMENT}/document/{SEGMENT}/split",
        lambda console, form, job, document: split_form.split_document(
            console.ctx, console.reviewer, job, document, form
        ),
    ),
]


class ConsoleServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, console: ReviewConsole, port: int, hosts: Iterable[str] = ()) -> None:
        super().__init__((HOST, port), Handler)
        self.console = console
        self.hosts = served_hosts(self.server_address[1], hosts)

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.server_address[1]}"


def serve(console: ReviewConsole, port: int, hosts: Iterable[str] = ()) -> ConsoleServer:
    """A started server (its own thread); ``shutdown()`` and ``server_close()`` stop it."""
    server = ConsoleServer(console, port, hosts)
    threading.Thread(target=server.serve_forever, name="docagent-console", daemon=True).start()
    return server
