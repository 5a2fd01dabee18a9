"""The S3 layout of docs/design.md, as functions. Nothing else in the code builds an S3 key."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError
from pydantic import BaseModel

from functions import aws
from functions.models import DocumentResult, JobManifest, ModelCallRecord
from functions.settings import get_settings

if TYPE_CHECKING:
    from mypy_boto3_s3.type_defs import ObjectTypeDef

LEDGER_PREFIX = "ticket-ledger/"
_NOT_FOUND_CODES = frozenset({"NoSuchKey", "404", "NotFound"})


class ObjectNotFound(LookupError):  # noqa: N818 (reads better at call sites than ObjectNotFoundError)
    """The S3 object does not exist."""


# ------------------------------------------------------------------------------------------------- keys


def job_prefix(job_id: str) -> str:
    return f"jobs/{job_id}/"


def request_key(job_id: str) -> str:
    return f"{job_prefix(job_id)}request.json"


def manifest_key(job_id: str) -> str:
    return f"{job_prefix(job_id)}manifest.json"


def items_key(job_id: str) -> str:
    return f"{job_prefix(job_id)}items.json"


def results_prefix(job_id: str) -> str:
    return f"{job_prefix(job_id)}results/"


def result_key(job_id: str, document_id: str) -> str:
    return f"{results_prefix(job_id)}{document_id}.json"


def model_calls_prefix(job_id: str, document_id: str) -> str:
    return f"{job_prefix(job_id)}model-calls/{document_id}/"


def model_call_key(job_id: str, document_id: str, call_id: str) -> str:
    return f"{model_calls_prefix(job_id, document_id)}{call_id}.json"


def report_key(job_id: str) -> str:
    return f"{job_prefix(job_id)}report.json"


def ticket_key(job_id: str) -> str:
    return f"{job_prefix(job_id)}ticket.json"


def ticket_attempt_key(job_id: str) -> str:
    return f"{job_prefix(job_id)}ticket-attempt.json"


def approval_key(job_id: str) -> str:
    return f"{job_prefix(job_id)}approval.json"


def ledger_key(idempotency_key: str) -> str:
    return f"{LEDGER_PREFIX}{idempotency_key}.json"


# ---------------------------------------------------------------------------------------- generic JSON


def _bucket(bucket: str | None) -> str:
    return bucket or get_settings().bucket_name


def is_not_found(error: ClientError) -> bool:
    return error.response.get("Error", {}).get("Code", "") in _NOT_FOUND_CODES


def to_json_bytes(data: BaseModel | Any) -> bytes:
    if isinstance(data, BaseModel):
        return data.model_dump_json().encode()
    return json.dumps(data, separators=(",", ":"), sort_keys=True).encode()


def put_json(key: str, data: BaseModel | Any, *, bucket: str | None = None) -> None:
    aws.s3_client().put_object(
        Bucket=_bucket(bucket), Key=key, Body=to_json_bytes(data), ContentType="application/json"
    )


def get_json(key: str, *, bucket: str | None = None) -> Any:
    """The parsed object; ObjectNotFound if it does not exist."""
    try:
        response = aws.s3_client().get_object(Bucket=_bucket(bucket), Key=key)
    except ClientError as error:
        if is_not_found(error):
            raise ObjectNotFound(key) from error
        raise
    return json.loads(response["Body"].read())


def get_json_or_none(key: str, *, bucket: str | None = None) -> Any:
    try:
        return get_json(key, bucket=bucket)
    except ObjectNotFound:
        return None


def exists(key: str, *, bucket: str | None = None) -> bool:
    try:
        aws.s3_client().head_object(Bucket=_bucket(bucket), Key=key)
    except ClientError as error:
        if is_not_found(error):
            return False
        raise
    return True


def list_objects(prefix: str, *, bucket: str | None = None) -> Iterator[ObjectTypeDef]:
    """Every object under the prefix, in key order, across all pages."""
    paginator = aws.s3_client().get_paginator("list_objects_v2")
    for page in paginator.paginate(Bucket=_bucket(bucket), Prefix=prefix):
        yield from page.get("Contents", [])


# ------------------------------------------------------------------------------------------ job objects


def get_manifest(job_id: str) -> JobManifest | None:
    data = get_json_or_none(manifest_key(job_id))
    return None if data is None else JobManifest.model_validate(data)


def put_result(result: DocumentResult) -> str:
    key = result_key(result.job_id, result.document_id)
    put_json(key, result)
    return key


def get_result(job_id: str, document_id: str) -> DocumentResult | None:
    data = get_json_or_none(result_key(job_id, document_id))
    return None if data is None else DocumentResult.model_validate(data)


def result_exists(job_id: str, document_id: str) -> bool:
    return exists(result_key(job_id, document_id))


def list_result_ids(job_id: str) -> list[str]:
    """Document ids that have a result object."""
    prefix = results_prefix(job_id)
    ids = []
    for obj in list_objects(prefix):
        name = obj["Key"][len(prefix) :]
        if name.endswith(".json") and "/" not in name:
            ids.append(name[: -len(".json")])
    return ids


def put_model_call(record: ModelCallRecord) -> str:
    key = model_call_key(record.job_id, record.document_id, record.call_id)
    put_json(key, record)
    return key


def list_model_calls(job_id: str, document_id: str) -> list[ModelCallRecord]:
    """The journal of one document: every model call really made, oldest first."""
    return [
        ModelCallRecord.model_validate(get_json(obj["Key"]))
        for obj in list_objects(model_calls_prefix(job_id, document_id))
    ]
