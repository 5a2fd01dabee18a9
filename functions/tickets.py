"""The ticket system seam: a TicketClient protocol and two adapters.

Both adapters are idempotent on the caller's idempotency key, so a retried ``create`` after a crash returns
the ticket made by the first attempt instead of opening a second one (shared spec P3: the external system
must have its own idempotency key).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
import uuid
from typing import Any, Protocol

from botocore.exceptions import ClientError
from pydantic import ValidationError

from functions import aws, storage
from functions.errors import TicketError
from functions.models import TicketPayload, TicketRecord, utc_now
from functions.settings import Settings


def ticket_idempotency_key(job_id: str) -> str:
    return f"docagent-ticket-{job_id}"


class TicketClient(Protocol):
    name: str

    def create(self, idempotency_key: str, payload: TicketPayload) -> TicketRecord:
        """Create the ticket, or return the one already created with this key (``created`` False)."""
        ...

    def find_by_reference(self, reference: str) -> list[TicketRecord]:
        """Every ticket carrying this reference."""
        ...


class LedgerTicketClient:
    """The built-in ticket system: one S3 object per idempotency key, written with ``If-None-Match: *``."""

    name = "ledger"

    def __init__(self, bucket: str) -> None:
        self._bucket = bucket

    def create(self, idempotency_key: str, payload: TicketPayload) -> TicketRecord:
        record = TicketRecord(
            ticket_id=f"TKT-{uuid.uuid4().hex[:12].upper()}",
            reference=payload.reference,
            idempotency_key=idempotency_key,
            title=payload.title,
            body=payload.body,
            created_at=utc_now(),
        )
        key = storage.ledger_key(idempotency_key)
        try:
            aws.s3_client().put_object(
                Bucket=self._bucket,
                Key=key,
                Body=storage.to_json_bytes(record),
                ContentType="application/json",
                IfNoneMatch="*",
            )
        except ClientError as error:
            code = error.response.get("Error", {}).get("Code", "")
            if code not in {"PreconditionFailed", "ConditionalRequestConflict", "412", "409"}:
                raise TicketError(f"ledger write failed: {code}") from error
            existing = storage.get_json_or_none(key, bucket=self._bucket)
            if existing is None:
                raise TicketError(f"ledger entry {key} is being written concurrently; retry") from error
            return TicketRecord.model_validate(existing)
        return record.model_copy(update={"created": True})

    def find_by_reference(self, reference: str) -> list[TicketRecord]:
        tickets = []
        for obj in storage.list_objects(storage.LEDGER_PREFIX, bucket=self._bucket):
            record = TicketRecord.model_validate(storage.get_json(obj["Key"], bucket=self._bucket))
            if record.reference == reference:
                tickets.append(record)
        return tickets


class HttpTicketClient:
    """A ticket API.

    ``POST {base}/tickets`` with an ``Idempotency-Key`` header answers 201 (created) or 200 (existing);
    ``GET {base}/tickets?reference=...`` answers a JSON list, or ``{"tickets": [...]}``.
    """

    name = "http"

    def __init__(self, base_url: str, timeout_seconds: float = 10.0) -> None:
        if not base_url.startswith(("https://", "http://")):
            raise ValueError("ticket API URL must be http(s)")
        self._base = base_url.rstrip("/")
        self._timeout = timeout_seconds

    def _request(self, request: urllib.request.Request) -> tuple[int, Any]:
        try:
            with urllib.request.urlopen(request, timeout=self._timeout) as response:
                return int(response.status), json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            raise TicketError(
                f"ticket API {request.get_method()} {request.full_url} returned {error.code}"
            ) from None
        except (urllib.error.URLError, TimeoutError, json.JSONDecodeError) as error:
            raise TicketError(
                f"ticket API {request.get_method()} {request.full_url} failed: {error}"
            ) from None

    @staticmethod
    def _record(data: Any, idempotency_key: str = "") -> TicketRecord:
        if not isinstance(data, dict):
            raise TicketError("ticket API returned something other than a JSON object")
        try:
            return TicketRecord(
                ticket_id=str(data.get("ticket_id") or data["id"]),
                reference=str(data["reference"]),
                idempotency_key=str(data.get("idempotency_key") or idempotency_key),
                title=str(data.get("title", "")),
                body=str(data.get("body", "")),
                created_at=str(data.get("created_at") or utc_now()),
            )
        except (KeyError, ValidationError) as error:
            raise TicketError(f"ticket API returned an unexpected ticket: {error}") from None

    def create(self, idempotency_key: str, payload: TicketPayload) -> TicketRecord:
        request = urllib.request.Request(
            f"{self._base}/tickets",
            data=payload.model_dump_json().encode(),
            method="POST",
            headers={"Content-Type": "application/json", "Idempotency-Key": idempotency_key},
        )
        status, data = self._request(request)
        return self._record(data, idempotency_key).model_copy(update={"created": status == 201})

    def find_by_reference(self, reference: str) -> list[TicketRecord]:
        query = urllib.parse.urlencode({"reference": reference})
        request = urllib.request.Request(f"{self._base}/tickets?{query}", method="GET")
        _, data = self._request(request)
        items = data.get("tickets", []) if isinstance(data, dict) else data
        if not isinstance(items, list):
            raise TicketError("ticket API search returned neither a list nor {'tickets': [...]}")
        records = [self._record(item) for item in items]
        return [record for record in records if record.reference == reference]


def get_ticket_client(settings: Settings) -> TicketClient:
    if settings.ticket_adapter == "http":
        return HttpTicketClient(settings.ticket_api_url)
    return LedgerTicketClient(settings.bucket_name)
