"""The built-in ledger: an http action's recipient for deployments without an external system to call
(destination value ``ledger``). One S3 object per idempotency key, written with ``If-None-Match: *``, and an
index entry per record under its reference (written first: a crash between the two leaves an entry without a
record, which a lookup skips, never a record the lookup cannot find)."""

from __future__ import annotations

import uuid

from botocore.exceptions import ClientError

from functions import aws, s3_json, storage
from functions.actions.http_call import OnSent, Payload
from functions.actions.payloads import RemoteRecord
from functions.errors import ActionError, ActionOutcomeUnknown
from functions.payloads.common import utc_now

_REFUSED_CODES = frozenset({"PreconditionFailed", "ConditionalRequestConflict", "412", "409"})


class LedgerClient:
    name = "ledger"

    def __init__(self, bucket: str) -> None:
        self._bucket = bucket

    def create(
        self, idempotency_key: str, payload: Payload, *, on_sent: OnSent | None = None
    ) -> RemoteRecord:
        reference = str(payload.get("reference") or "")
        record = RemoteRecord(
            id=f"REC-{uuid.uuid4().hex[:12].upper()}",
            reference=reference,
            idempotency_key=idempotency_key,
            created_at=utc_now(),
        )
        key = storage.ledger_key(idempotency_key)
        aws.s3_client().put_object(
            Bucket=self._bucket, Key=storage.ledger_index_key(reference, idempotency_key), Body=b""
        )
        refused: ClientError | None = None
        try:
            aws.s3_client().put_object(
                Bucket=self._bucket,
                Key=key,
                Body=s3_json.to_json_bytes({**record.model_dump(mode="json"), "payload": payload}),
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
        if code not in _REFUSED_CODES:
            raise ActionError(f"ledger write failed: {code}") from refused
        existing = s3_json.get_json_or_none(key, bucket=self._bucket)
        if existing is None:
            raise ActionOutcomeUnknown(f"ledger entry {key} is being written concurrently") from refused
        return _parse(existing)

    def find_by_reference(self, reference: str) -> list[RemoteRecord]:
        """The reference's records through its index: one listing of its entries and a read per record."""
        records = []
        for entry in s3_json.list_objects(storage.ledger_reference_prefix(reference), bucket=self._bucket):
            key = storage.ledger_key(storage.idempotency_key_of_index_key(entry["Key"]))
            data = s3_json.get_json_or_none(key, bucket=self._bucket)
            if data is None:
                continue  # the creator stopped between the index entry and the record
            record = _parse(data)
            if record.reference == reference:
                records.append(record)
        return sorted(records, key=lambda record: record.created_at)


def _parse(data: object) -> RemoteRecord:
    fields = dict(data) if isinstance(data, dict) else {}
    fields.pop("payload", None)
    return RemoteRecord.model_validate(fields)
