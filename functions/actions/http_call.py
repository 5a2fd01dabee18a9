"""The http action's client: POST a JSON payload to a URL with an ``Idempotency-Key`` header, and find what an
earlier attempt did by reference (``GET url?reference=R``).

It classifies every failure, because that decides whether a retry may act twice:

- ``ActionTargetUnavailable``: nothing was done (connection refused, 429/503 past the client's own retries);
- ``ActionOutcomeUnknown``: the request went out and no usable answer came back (dropped connection, timeout,
  a 5xx other than 503): the record may exist, so the caller reconciles by reference first;
- ``ActionInvalidResponse``: an answer that is not a record;
- ``ActionConflict``: 409, the key was used with another body.
"""

from __future__ import annotations

import http.client
import json
import random
import time
import urllib.parse
from collections.abc import Callable
from typing import Any, Protocol

from pydantic import JsonValue, ValidationError

from functions.actions.payloads import RemoteRecord
from functions.errors import (
    ActionConflict,
    ActionError,
    ActionInvalidResponse,
    ActionOutcomeUnknown,
    ActionTargetUnavailable,
)
from functions.payloads.common import utc_now

OnSent = Callable[[], None]
"""Called once the request has left (the ``after_action_request`` fault point)."""
TokenSource = Callable[[], str]
Payload = dict[str, JsonValue]


class Recipient(Protocol):
    """Where an http action's record goes: an HTTP endpoint (HttpClient) or the built-in ledger."""

    name: str

    def create(
        self, idempotency_key: str, payload: Payload, *, on_sent: OnSent | None = None
    ) -> RemoteRecord:
        """Create the record, or return the one already created with this key (``created`` False).
        ``payload["reference"]`` is the record's reference."""
        ...

    def find_by_reference(self, reference: str) -> list[RemoteRecord]:
        """Every record carrying this reference, oldest first."""
        ...


class _NotDeliveredError(Exception):
    """The request never fully left: the API cannot have acted on it."""


class _NoAnswerError(Exception):
    """The request left, but no complete answer came back."""


def _describe(error: BaseException) -> str:
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _snippet(data: bytes) -> str:
    text = data[:160].decode("utf-8", errors="replace").replace("\n", " ")
    return repr(text + ("..." if len(data) > 160 else ""))


class HttpClient:
    """An http action's endpoint ``url``.

    ``POST url`` (the JSON payload, header ``Idempotency-Key``) answers 201 (created) or 200 (the record this
    key already made), 409 when the key was used with another body; ``GET url?reference=...`` answers a JSON
    list, or an object holding one list. A record is an object with ``id`` and ``reference``. With a token,
    every request carries ``Authorization: Bearer <token>``; the token is never logged or put in an error.

    The client retries what cannot have acted (connection refused, 429, 503) up to ``max_attempts`` with
    jittered backoff, never past ``deadline`` (a ``time.monotonic()`` value, e.g. the Lambda invocation's
    deadline less a margin).
    """

    name = "http"

    def __init__(
        self,
        url: str,
        *,
        token: TokenSource | None = None,
        timeout_seconds: float = 10.0,
        max_attempts: int = 3,
        backoff_seconds: float = 0.25,
        deadline: float | None = None,
    ) -> None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in {"https", "http"} or not parts.hostname:
            raise ValueError("an http action's URL must be http(s)")
        self._https = parts.scheme == "https"
        self._netloc = parts.netloc
        self._path = parts.path or "/"
        self._url = f"{parts.scheme}://{parts.netloc}{parts.path}"
        self._token = token
        self._timeout = timeout_seconds
        self._max_attempts = max(1, max_attempts)
        self._backoff = backoff_seconds
        self._deadline = deadline

    # -- transport ---------------------------------------------------------------------------------

    def _time_left(self) -> float:
        return float("inf") if self._deadline is None else self._deadline - time.monotonic()

    def _exchange(
        self, method: str, path: str, body: bytes | None, headers: dict[str, str], on_sent: OnSent | None
    ) -> tuple[int, bytes]:
        timeout = min(self._timeout, self._time_left())
        if timeout <= 0.05:
            raise _NotDeliveredError("no time left before the invocation's deadline")
        connection_class = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        connection = connection_class(self._netloc, timeout=timeout)
        try:
            try:
                connection.request(method, path, body=body, headers=headers)
            except (OSError, http.client.HTTPException) as error:
                raise _NotDeliveredError(_describe(error)) from None
            if on_sent is not None:
                on_sent()
            try:
                response = connection.getresponse()
                return response.status, response.read()
            except (OSError, http.client.HTTPException) as error:
                raise _NoAnswerError(_describe(error)) from None
        finally:
            connection.close()

    def _call(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        *,
        key: str = "",
        on_sent: OnSent | None = None,
    ) -> tuple[int, bytes]:
        """Send, retrying only what cannot have acted: a POST never repeats a send with an unknown outcome."""
        creating = method == "POST"
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        if key:
            headers["Idempotency-Key"] = key
        if self._token is not None:
            headers["Authorization"] = f"Bearer {self._token()}"
        where = f"{method} {self._url}"
        problem, attempts = "", 0
        for attempt in range(1, self._max_attempts + 1):
            if attempt > 1:
                pause = self._backoff * 2 ** (attempt - 2) * (0.5 + random.random() / 2)
                if pause >= self._time_left() - 0.5:
                    break
                time.sleep(pause)
            attempts = attempt
            try:
                status, data = self._exchange(method, path, body, headers, on_sent)
            except _NotDeliveredError as error:
                problem = f"not delivered ({error})"
                continue
            except _NoAnswerError as error:
                if creating:
                    raise ActionOutcomeUnknown(f"{where}: sent, but no answer came back ({error})") from None
                problem = f"no answer ({error})"
                continue
            if status in {429, 503}:
                problem = f"answered {status}"
                continue
            if status >= 500:
                if creating:
                    raise ActionOutcomeUnknown(f"{where}: answered {status} {_snippet(data)}") from None
                problem = f"answered {status}"
                continue
            return status, data
        raise ActionTargetUnavailable(f"{where}: unavailable after {attempts} attempt(s): {problem}")

    # -- answers -----------------------------------------------------------------------------------

    @staticmethod
    def _json(data: bytes, where: str) -> Any:
        try:
            return json.loads(data)
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise ActionInvalidResponse(f"{where} answered non-JSON: {_snippet(data)}") from None

    @staticmethod
    def _record(data: Any, where: str, idempotency_key: str = "") -> RemoteRecord:
        if not isinstance(data, dict):
            raise ActionInvalidResponse(f"{where} answered JSON {type(data).__name__}, not a record")
        record_id = data.get("id")
        reference = data.get("reference")
        if not isinstance(record_id, (str, int)) or not str(record_id) or not isinstance(reference, str):
            raise ActionInvalidResponse(f"{where} answered a record without an id or a reference")
        try:
            return RemoteRecord(
                id=str(record_id),
                reference=reference,
                idempotency_key=str(data.get("idempotency_key") or idempotency_key),
                created_at=str(data.get("created_at") or utc_now()),
            )
        except ValidationError as error:
            raise ActionInvalidResponse(f"{where} answered an unexpected record: {error}") from None

    def create(
        self, idempotency_key: str, payload: Payload, *, on_sent: OnSent | None = None
    ) -> RemoteRecord:
        where = f"POST {self._url}"
        body = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()
        status, data = self._call("POST", self._path, body, key=idempotency_key, on_sent=on_sent)
        if status == 409:
            raise ActionConflict(f"{where}: idempotency key {idempotency_key} was used with another body")
        if status >= 400:
            raise ActionError(f"{where}: refused with {status} {_snippet(data)}")
        if status not in {200, 201}:
            raise ActionInvalidResponse(f"{where} answered {status}, expected 200 or 201")
        record = self._record(self._json(data, where), where, idempotency_key)
        reference = payload.get("reference")
        if record.reference != reference:
            raise ActionInvalidResponse(
                f"{where} answered a record for reference {record.reference!r}, not {reference!r}"
            )
        return record.model_copy(update={"created": status == 201})

    def find_by_reference(self, reference: str) -> list[RemoteRecord]:
        path = f"{self._path}?{urllib.parse.urlencode({'reference': reference})}"
        where = f"GET {self._url}"
        status, data = self._call("GET", path)
        if status >= 400:
            raise ActionError(f"{where}: refused with {status} {_snippet(data)}")
        if status != 200:
            raise ActionInvalidResponse(f"{where} answered {status}, expected 200")
        found = self._json(data, where)
        items = found
        if isinstance(found, dict):
            lists = [value for value in found.values() if isinstance(value, list)]
            items = lists[0] if len(lists) == 1 else None
        if not isinstance(items, list):
            raise ActionInvalidResponse(f"{where} answered neither a list nor an object holding one list")
        records = [self._record(item, where) for item in items]
        return sorted(
            (record for record in records if record.reference == reference), key=lambda r: r.created_at
        )
