"""The ticket system seam: a TicketClient protocol and two adapters.

Both adapters are idempotent on the caller's idempotency key where the system allows it, so a retried
``create`` returns the ticket made by the first attempt instead of opening a second one (docs/semantics.md
P3). The HTTP adapter also classifies every failure, because that decides whether a retry may create:

- ``TicketApiUnavailable``: nothing was created (connection refused, 429/503 past the client's own retries);
- ``TicketOutcomeUnknown``: the create request went out and no usable answer came back (dropped connection,
  timeout, a 5xx other than 503): the ticket may exist, so the caller reconciles by reference first;
- ``TicketApiInvalidResponse``: an answer that is not a ticket;
- ``TicketConflict``: 409, the key was used with another body.
"""

from __future__ import annotations

import http.client
import json
import random
import threading
import time
import urllib.parse
import uuid
from collections.abc import Callable
from typing import Any, Protocol

from botocore.exceptions import BotoCoreError, ClientError
from pydantic import ValidationError

from functions import aws, storage
from functions.errors import (
    ConfigurationError,
    TicketApiInvalidResponse,
    TicketApiUnavailable,
    TicketConflict,
    TicketError,
    TicketOutcomeUnknown,
)
from functions.models import TicketPayload, TicketRecord, utc_now
from functions.settings import Settings

OnSent = Callable[[], None]
"""Called once the create request has left (the ``after_ticket_request`` fault point)."""


def ticket_idempotency_key(job_id: str) -> str:
    return f"docagent-ticket-{job_id}"


class TicketClient(Protocol):
    name: str

    def create(
        self, idempotency_key: str, payload: TicketPayload, *, on_sent: OnSent | None = None
    ) -> TicketRecord:
        """Create the ticket, or return the one already created with this key (``created`` False)."""
        ...

    def find_by_reference(self, reference: str) -> list[TicketRecord]:
        """Every ticket carrying this reference, oldest first."""
        ...


class LedgerTicketClient:
    """The built-in ticket system: one S3 object per idempotency key, written with ``If-None-Match: *``, and
    an index entry per ticket under its reference (written first: a crash between the two leaves an entry
    without a ticket, which a lookup skips, never a ticket the lookup cannot find)."""

    name = "ledger"

    def __init__(self, bucket: str) -> None:
        self._bucket = bucket

    def create(
        self, idempotency_key: str, payload: TicketPayload, *, on_sent: OnSent | None = None
    ) -> TicketRecord:
        record = TicketRecord(
            ticket_id=f"TKT-{uuid.uuid4().hex[:12].upper()}",
            reference=payload.reference,
            idempotency_key=idempotency_key,
            title=payload.title,
            body=payload.body,
            created_at=utc_now(),
        )
        key = storage.ledger_key(idempotency_key)
        aws.s3_client().put_object(
            Bucket=self._bucket, Key=storage.ledger_index_key(payload.reference, idempotency_key), Body=b""
        )
        refused: ClientError | None = None
        try:
            aws.s3_client().put_object(
                Bucket=self._bucket,
                Key=key,
                Body=storage.to_json_bytes(record),
                ContentType="application/json",
                IfNoneMatch="*",
            )
        except ClientError as error:
            refused = error
        if on_sent is not None:
            on_sent()
        if refused is None:
            return record.model_copy(update={"created": True})
        code = refused.response.get("Error", {}).get("Code", "")
        if code not in {"PreconditionFailed", "ConditionalRequestConflict", "412", "409"}:
            raise TicketError(f"ledger write failed: {code}") from refused
        existing = storage.get_json_or_none(key, bucket=self._bucket)
        if existing is None:
            raise TicketOutcomeUnknown(f"ledger entry {key} is being written concurrently") from refused
        return TicketRecord.model_validate(existing)

    def find_by_reference(self, reference: str) -> list[TicketRecord]:
        """The reference's tickets through its index: one listing of its entries and a read per ticket."""
        tickets = []
        for entry in storage.list_objects(storage.ledger_reference_prefix(reference), bucket=self._bucket):
            key = storage.ledger_key(storage.idempotency_key_of_index_key(entry["Key"]))
            data = storage.get_json_or_none(key, bucket=self._bucket)
            if data is None:
                continue  # the creator stopped between the index entry and the ticket
            record = TicketRecord.model_validate(data)
            if record.reference == reference:
                tickets.append(record)
        return sorted(tickets, key=lambda ticket: ticket.created_at)


# ----------------------------------------------------------------------------------------------- HTTP


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


TokenSource = Callable[[], str]


class HttpTicketClient:
    """A ticket API.

    ``POST {base}/tickets`` (JSON ``{"reference", "title", "body"}``, header ``Idempotency-Key``) answers 201
    (created) or 200 (the ticket this key already made), 409 when the key was used with another body;
    ``GET {base}/tickets?reference=...`` answers a JSON list, or ``{"tickets": [...]}``. A ticket is an object
    with ``id`` (or ``ticket_id``) and ``reference``. With a token, every request carries
    ``Authorization: Bearer <token>``; the token is never logged or put in an error message.

    The client retries what cannot have created anything (connection refused, 429, 503) up to
    ``max_attempts`` with jittered backoff, never past ``deadline`` (a ``time.monotonic()`` value, e.g. the
    Lambda invocation's deadline less a margin).
    """

    name = "http"

    def __init__(
        self,
        base_url: str,
        *,
        token: TokenSource | None = None,
        timeout_seconds: float = 10.0,
        max_attempts: int = 3,
        backoff_seconds: float = 0.25,
        deadline: float | None = None,
    ) -> None:
        parts = urllib.parse.urlsplit(base_url)
        if parts.scheme not in {"https", "http"} or not parts.hostname:
            raise ValueError("ticket API URL must be http(s)")
        self._https = parts.scheme == "https"
        self._netloc = parts.netloc
        self._base_path = parts.path.rstrip("/")
        self._base = f"{parts.scheme}://{parts.netloc}{self._base_path}"
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
        where = f"ticket API {method} {self._base}{path.removeprefix(self._base_path)}"
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
                    raise TicketOutcomeUnknown(f"{where}: sent, but no answer came back ({error})") from None
                problem = f"no answer ({error})"
                continue
            if status in {429, 503}:
                problem = f"answered {status}"
                continue
            if status >= 500:
                if creating:
                    raise TicketOutcomeUnknown(f"{where}: answered {status} {_snippet(data)}") from None
                problem = f"answered {status}"
                continue
            return status, data
        raise TicketApiUnavailable(f"{where}: unavailable after {attempts} attempt(s): {problem}")

    # -- answers -----------------------------------------------------------------------------------

    @staticmethod
    def _json(data: bytes, where: str) -> Any:
        try:
            return json.loads(data)
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise TicketApiInvalidResponse(f"{where} answered non-JSON: {_snippet(data)}") from None

    @staticmethod
    def _record(data: Any, where: str, idempotency_key: str = "") -> TicketRecord:
        if not isinstance(data, dict):
            raise TicketApiInvalidResponse(f"{where} answered JSON {type(data).__name__}, not a ticket")
        ticket_id = data.get("ticket_id") or data.get("id")
        reference = data.get("reference")
        if not isinstance(ticket_id, (str, int)) or not str(ticket_id) or not isinstance(reference, str):
            raise TicketApiInvalidResponse(f"{where} answered a ticket without an id or a reference")
        try:
            return TicketRecord(
                ticket_id=str(ticket_id),
                reference=reference,
                idempotency_key=str(data.get("idempotency_key") or idempotency_key),
                title=str(data.get("title") or ""),
                body=str(data.get("body") or ""),
                created_at=str(data.get("created_at") or utc_now()),
            )
        except ValidationError as error:
            raise TicketApiInvalidResponse(f"{where} answered an unexpected ticket: {error}") from None

    def create(
        self, idempotency_key: str, payload: TicketPayload, *, on_sent: OnSent | None = None
    ) -> TicketRecord:
        path = f"{self._base_path}/tickets"
        where = f"ticket API POST {self._base}/tickets"
        status, data = self._call(
            "POST", path, payload.model_dump_json().encode(), key=idempotency_key, on_sent=on_sent
        )
        if status == 409:
            raise TicketConflict(f"{where}: idempotency key {idempotency_key} was used with another body")
        if status >= 400:
            raise TicketError(f"{where}: refused with {status} {_snippet(data)}")
        if status not in {200, 201}:
            raise TicketApiInvalidResponse(f"{where} answered {status}, expected 200 or 201")
        record = self._record(self._json(data, where), where, idempotency_key)
        if record.reference != payload.reference:
            raise TicketApiInvalidResponse(
                f"{where} answered a ticket for reference {record.reference!r}, not {payload.reference!r}"
            )
        return record.model_copy(update={"created": status == 201})

    def find_by_reference(self, reference: str) -> list[TicketRecord]:
        path = f"{self._base_path}/tickets?{urllib.parse.urlencode({'reference': reference})}"
        where = f"ticket API GET {self._base}/tickets"
        status, data = self._call("GET", path)
        if status >= 400:
            raise TicketError(f"{where}: refused with {status} {_snippet(data)}")
        if status != 200:
            raise TicketApiInvalidResponse(f"{where} answered {status}, expected 200")
        found = self._json(data, where)
        items = found.get("tickets") if isinstance(found, dict) else found
        if not isinstance(items, list):
            raise TicketApiInvalidResponse(f"{where} answered neither a list nor {{'tickets': [...]}}")
        records = [self._record(item, where) for item in items]
        return sorted(
            (record for record in records if record.reference == reference), key=lambda r: r.created_at
        )


# ------------------------------------------------------------------------------------------- the token

TOKEN_CACHE_SECONDS = 300.0
_token_lock = threading.Lock()
_token_cache: dict[str, tuple[float, str]] = {}


def api_token(secret_arn: str) -> str:
    """The ticket API token from Secrets Manager (a plain string, or JSON with a ``token`` field), cached per
    process for TOKEN_CACHE_SECONDS so a warm function reads it once. The value is never logged."""
    with _token_lock:
        cached = _token_cache.get(secret_arn)
        if cached is not None and time.monotonic() - cached[0] < TOKEN_CACHE_SECONDS:
            return cached[1]
    try:
        secret = aws.secretsmanager_client().get_secret_value(SecretId=secret_arn)
    except ClientError as error:
        code = error.response.get("Error", {}).get("Code", "")
        raise ConfigurationError(f"cannot read the ticket API token {secret_arn}: {code}") from None
    except BotoCoreError as error:
        raise TicketApiUnavailable(f"Secrets Manager unreachable for the ticket API token: {error}") from None
    text = str(secret.get("SecretString") or "").strip()
    token = text
    if text.startswith("{"):
        try:
            token = str(json.loads(text).get("token") or "").strip()
        except (json.JSONDecodeError, AttributeError):
            token = ""
    if not token:
        raise ConfigurationError(f"the ticket API token secret {secret_arn} is empty or has no 'token' field")
    with _token_lock:
        _token_cache[secret_arn] = (time.monotonic(), token)
    return token


def clear_token_cache() -> None:
    with _token_lock:
        _token_cache.clear()


def get_ticket_client(settings: Settings, *, deadline: float | None = None) -> TicketClient:
    if settings.ticket_adapter == "http":
        secret_arn = settings.ticket_api_secret_arn
        return HttpTicketClient(
            settings.ticket_api_url,
            token=(lambda: api_token(secret_arn)) if secret_arn else None,
            deadline=deadline,
        )
    return LedgerTicketClient(settings.bucket_name)
