"""What the endpoint's HTTP handler does per request that nobody reads, left undone (every byte the same).

A sampled profile of the endpoint (py-spy, blocking, native, on S3 and DynamoDB calls; 2026-12-08) put a
fifth of its serving threads in werkzeug's and http.server's own work around each request, before and after
the application; of it, these pieces make what nobody uses, or make again what was made a moment ago.

- **The access log line**: werkzeug's ``log_request`` decodes the path (``uri_to_iri``), escapes it, styles
  it and formats a local time for every answer, then hands the line to the ``werkzeug`` logger, which the
  local cloud sets to CRITICAL (server.py): ~5 % of the serving threads' samples. ``log_request`` builds it
  only when the logger would write it (werkzeug sets an unset logger to INFO on its first line, so an unset
  one writes it).
- **The Date header**: http.server formats the current second for every answer (``email.utils.formatdate``);
  ``date_time_string`` keeps the second's text and makes it again when the second changes.
- **moto's header names**: moto's handler keeps the spelling of S3 metadata headers with an underscore
  (``x-amz-meta-my_key``, which werkzeug drops), converting every header's name to its WSGI key twice to find
  them; a request without an underscore in any header's name has none, and gets the empty table moto gives.
- **moto's view of the headers**: moto's ``EnvironHeaders`` converts each header's name back to its WSGI
  key to look it up in that table, at every walk over the headers (``dict(request.headers)`` for every
  request, and more); with an empty table every name is werkzeug's, which is walked as werkzeug walks it.
- **The request's headers**: http.client hands the header block to the ``email`` package's feed parser (a
  parser of mail, with folded lines and defects), ~3 %. A block of plain ``Name: value`` lines, which is
  what every SDK sends, is split here into the same message (the same ``(name, value)`` pairs, in order);
  any other block (a folded line, a line without a colon, a ``From `` line, a bare CR) goes to http.client's
  parser as before. Only this handler's messages (``LocalMessage``) take the shortcut.

tests/localcloud/test_lean_serving.py compares each with what it replaces.
"""

from __future__ import annotations

import email.message
import email.parser
import email.utils
import http.client
import logging
import re
import time
from collections.abc import Iterator
from typing import Any, BinaryIO

from moto.core import request
from moto.core.request import PRESERVED_HEADER_NAMES_ENVIRON_KEY
from werkzeug.datastructures import EnvironHeaders
from werkzeug.serving import WSGIRequestHandler

_WERKZEUG_LOGGER = logging.getLogger("werkzeug")
# A header line email.feedparser reads as one plain header: a name of printable characters but the colon
# (its headerRE), a colon, a value without a CR, LF or NUL, the line's end. Not "From " (a mailbox's
# separator line); not beginning with a space or tab (a folded line).
_PLAIN_HEADER = re.compile(r"([\041-\071\073-\176]+):([^\r\n\0]*)\r?\n\Z")


class LocalMessage(http.client.HTTPMessage):
    """The request headers of the local cloud's handler (``parse_headers`` parses them itself)."""


_parse_headers_of_http_client = http.client.parse_headers


def parse_headers(fp: BinaryIO, _class: type[http.client.HTTPMessage] = http.client.HTTPMessage) -> Any:
    """http.client's ``parse_headers``, with a plain block of a ``LocalMessage`` split here (the module's
    doc); the lines are read by http.client's own reader (its limits and errors)."""
    if _class is not LocalMessage:
        return _parse_headers_of_http_client(fp, _class)
    lines = [line.decode("iso-8859-1") for line in http.client._read_headers(fp)]  # type: ignore[attr-defined]
    message = LocalMessage()
    if lines and lines[-1] not in ("\r\n", "\n"):
        return _parsed_by_email(lines)  # the stream ended inside the block
    for line in lines[:-1]:
        plain = _PLAIN_HEADER.match(line)
        if plain is None or line.startswith("From "):
            return _parsed_by_email(lines)
        # compat32's header_source_parse: the value after the colon, its leading blanks off
        message.set_raw(plain.group(1), plain.group(2).lstrip(" \t"))
    message.set_payload("")  # the blank line ended the block: what the feed parser leaves as the body
    return message


def _parsed_by_email(lines: list[str]) -> Any:
    return email.parser.Parser(_class=LocalMessage).parsestr("".join(lines))


_moto_headers_iter = request.EnvironHeaders.__iter__


def headers_iter(self: request.EnvironHeaders) -> Iterator[tuple[str, str]]:
    """moto's ``EnvironHeaders.__iter__``: werkzeug's names, but a preserved one (the module's doc)."""
    if not self.environ.get(PRESERVED_HEADER_NAMES_ENVIRON_KEY):
        return EnvironHeaders.__iter__(self)
    return _moto_headers_iter(self)


def install() -> None:
    """http.server's ``parse_request`` reads headers through ``http.client.parse_headers``; every other
    message class is parsed by the original. moto's requests walk their headers through ``headers_iter``."""
    http.client.parse_headers = parse_headers  # type: ignore[assignment]
    request.EnvironHeaders.__iter__ = headers_iter  # type: ignore[method-assign]


class LeanHandler:
    """Mixed into the endpoint's request handler (keep_alive.py) before werkzeug's."""

    MessageClass: type = LocalMessage
    _date: tuple[int, str] = (-1, "")
    headers: email.message.Message

    def make_environ(self) -> dict[str, Any]:
        if any("_" in name for name in self.headers):  # its names
            return super().make_environ()  # type: ignore[misc,no-any-return]  # moto's handler's
        environ = WSGIRequestHandler.make_environ(self)  # type: ignore[arg-type]
        environ[PRESERVED_HEADER_NAMES_ENVIRON_KEY] = {}
        return environ

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        logger = _WERKZEUG_LOGGER
        if logger.level != logging.NOTSET and not logger.isEnabledFor(logging.INFO):
            return  # werkzeug's line would be dropped by its logger
        super().log_request(code, size)  # type: ignore[misc]

    def date_time_string(self, timestamp: float | None = None) -> str:
        if timestamp is not None:
            return email.utils.formatdate(timestamp, usegmt=True)
        now = time.time()
        second, text = LeanHandler._date
        if int(now) != second:
            text = email.utils.formatdate(now, usegmt=True)
            LeanHandler._date = (int(now), text)  # one tuple: a reader sees this second's pair or the last
        return text
