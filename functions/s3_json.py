"""The job bucket's objects read and written as JSON (and bytes), and listed: the generic calls (put_json,
put_json_once, get_json, list_objects, ...) and the job's typed objects (results, manifests, model calls, the
model breaker, definitions). The keys are functions/storage.py's, the one place that builds them.
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from botocore.exceptions import ClientError, PaginationError
from pydantic import BaseModel

from functions import aws, storage
from functions.definition.job_spec import DefinitionBundle
from functions.payloads.document import DocumentResult
from functions.payloads.job import JobManifest, ManifestEntry
from functions.payloads.model_calls import ModelAttemptRecord, ModelBreaker, ModelCallRecord
from functions.settings import get_settings

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_s3.type_defs import ListObjectsV2RequestTypeDef, ObjectTypeDef, ObjectVersionTypeDef

NOT_FOUND_CODES = frozenset({"NoSuchKey", "404", "NotFound"})


class ObjectNotFound(LookupError):  # noqa: N818 (reads better at call sites than ObjectNotFoundError)
    """The S3 object does not exist."""


# ---------------------------------------------------------------------------------------- generic JSON

# What S3 answers a conditional write (IfNoneMatch) that another writer won.
PUT_ONCE_LOST = frozenset({"PreconditionFailed", "ConditionalRequestConflict"})


def bucket_name(bucket: str | None = None) -> str:
    """``bucket``, else the job bucket."""
    return bucket or get_settings().bucket_name


_bucket = bucket_name


def is_not_found(error: ClientError) -> bool:
    return error.response.get("Error", {}).get("Code", "") in NOT_FOUND_CODES


def to_json_bytes(data: BaseModel | Any) -> bytes:
    if isinstance(data, BaseModel):
        return data.model_dump_json().encode()
    return json.dumps(data, separators=(",", ":"), sort_keys=True).encode()


def put_json(
    key: str, data: BaseModel | Any, *, bucket: str | None = None, client: S3Client | None = None
) -> None:
    (client or aws.s3_client()).put_object(
        Bucket=_bucket(bucket), Key=key, Body=to_json_bytes(data), ContentType="application/json"
    )


def put_json_once(key: str, data: BaseModel | Any, *, bucket: str | None = None, client: Any = None) -> bool:
    """Write ``key`` unless it exists (PutObject IfNoneMatch "*"); False when it existed: two writers of the
    same key, one wins, and the other reads what it wrote."""
    try:
        (client or aws.s3_client()).put_object(
            Bucket=_bucket(bucket),
            Key=key,
            Body=to_json_bytes(data),
            ContentType="application/json",
            IfNoneMatch="*",
        )
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") in PUT_ONCE_LOST:
            return False
        raise
    return True


def put_bytes(key: str, data: bytes, *, content_type: str, bucket: str | None = None) -> None:
    aws.s3_client().put_object(Bucket=_bucket(bucket), Key=key, Body=data, ContentType=content_type)


def get_bytes(key: str, *, bucket: str | None = None) -> bytes:
    """The object's bytes; ObjectNotFound if it does not exist."""
    try:
        response = aws.s3_client().get_object(Bucket=_bucket(bucket), Key=key)
    except ClientError as error:
        if is_not_found(error):
            raise ObjectNotFound(key) from error
        raise
    return response["Body"].read()


def get_json(key: str, *, bucket: str | None = None, client: S3Client | None = None) -> Any:
    """The parsed object; ObjectNotFound if it does not exist (``client``: the operator's own)."""
    try:
        response = (client or aws.s3_client()).get_object(Bucket=_bucket(bucket), Key=key)
    except ClientError as error:
        if is_not_found(error):
            raise ObjectNotFound(key) from error
        raise
    return json.loads(response["Body"].read())


def get_json_or_none(key: str, *, bucket: str | None = None, client: S3Client | None = None) -> Any:
    try:
        return get_json(key, bucket=bucket, client=client)
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


def list_objects(
    prefix: str,
    *,
    bucket: str | None = None,
    client: S3Client | None = None,
    start_after: str | None = None,
) -> Iterator[ObjectTypeDef]:
    """Every object under the prefix (after ``start_after``, a key: exclusive), in key order, across all
    pages; a caller that stops iterating stops the listing."""
    # Pages followed here, not by the SDK's paginator: ``get_paginator`` builds a paginator class and reads
    # its paging model each call, and the journal lists a document's calls before each model call (about 3 %
    # of the ProcessDocument workers' CPU under cProfile, 2026-12-07). The same requests: ContinuationToken
    # from NextContinuationToken while IsTruncated (S3's paginators-1.json in botocore 1.44.8, read
    # 2026-12-07); a token repeated is an error, as the paginator makes it.
    s3 = client or aws.s3_client()
    params: ListObjectsV2RequestTypeDef = {"Bucket": _bucket(bucket), "Prefix": prefix}
    if start_after is not None:
        params["StartAfter"] = start_after
    while True:
        page = s3.list_objects_v2(**params)
        yield from page.get("Contents", [])
        token = page.get("NextContinuationToken")
        if not page.get("IsTruncated") or not token:
            return
        if token == params.get("ContinuationToken"):
            raise PaginationError(message=f"the same continuation token twice listing {prefix}")
        params["ContinuationToken"] = token


@dataclass(frozen=True)
class VersionsPage:
    """One ListObjectVersions page: its versions (delete markers left out; ``IsLatest`` marks the current
    one; VersionId "null" in a bucket without versioning), keys decoded, and where the next page starts
    (None: this was the last)."""

    versions: list[ObjectVersionTypeDef]
    next_key_marker: str | None
    next_version_id_marker: str | None


def list_versions_page(
    prefix: str,
    *,
    bucket: str | None = None,
    key_marker: str | None = None,
    version_id_marker: str | None = None,
    max_keys: int = 1000,
) -> VersionsPage:
    """One page of versions under the prefix, from a marker. EncodingType=url: a key may hold characters an
    XML 1.0 listing cannot carry (control characters), so S3 sends keys URL-encoded and they are decoded here
    (as of 2026-11, AWS docs "ListObjectVersions": EncodingType encodes Key, KeyMarker, NextKeyMarker,
    Prefix and Delimiter)."""
    params: dict[str, Any] = {"Bucket": _bucket(bucket), "Prefix": prefix, "MaxKeys": max_keys}
    params["EncodingType"] = "url"
    if key_marker is not None:
        params["KeyMarker"] = key_marker
        if version_id_marker is not None:
            params["VersionIdMarker"] = version_id_marker
    response = aws.s3_client().list_object_versions(**params)
    encoded = response.get("EncodingType") == "url"

    def decoded(value: str) -> str:
        return urllib.parse.unquote(value) if encoded else value

    versions = [{**version, "Key": decoded(version["Key"])} for version in response.get("Versions", [])]
    truncated = bool(response.get("IsTruncated"))
    next_key = response.get("NextKeyMarker") if truncated else None
    return VersionsPage(
        versions=cast("list[ObjectVersionTypeDef]", versions),
        next_key_marker=None if next_key is None else decoded(next_key),
        next_version_id_marker=response.get("NextVersionIdMarker") if truncated else None,
    )


# ------------------------------------------------------------------------------------------ job objects


def get_definition(name: str, sha256: str) -> DefinitionBundle | None:
    """A published version of a definition (None when it was never published)."""
    raw = get_json_or_none(storage.definition_key(name, sha256))
    return None if raw is None else DefinitionBundle.model_validate(raw)


def get_manifest(job_id: str) -> JobManifest | None:
    data = get_json_or_none(storage.manifest_key(job_id))
    return None if data is None else JobManifest.model_validate(data)


def parse_items(body: bytes) -> list[ManifestEntry]:
    """The entries of an items object: JSON Lines (one entry a line), or a JSON array (items.json of jobs
    prepared before the paged listing)."""
    text = body.decode()
    if text.lstrip().startswith("["):
        return [ManifestEntry.model_validate(item) for item in json.loads(text)]
    return [ManifestEntry.model_validate_json(line) for line in text.splitlines() if line.strip()]


def manifest_entries(
    manifest: JobManifest, *, bucket: str | None = None, client: S3Client | None = None
) -> list[ManifestEntry]:
    """Every entry of a job, in index order: inline in manifests from before the paged listing, else read
    from the manifest's parts (one GetObject per part: ~20,000 entries each at the 5 MiB part size)."""
    if manifest.entries or not manifest.parts:
        return list(manifest.entries)
    s3 = client or aws.s3_client()
    entries: list[ManifestEntry] = []
    for key in manifest.parts:
        entries.extend(parse_items(s3.get_object(Bucket=_bucket(bucket), Key=key)["Body"].read()))
    return entries


def put_result(result: DocumentResult) -> str:
    key = storage.result_key(result.job_id, result.document_id)
    put_json(key, result)
    return key


def get_result(job_id: str, document_id: str) -> DocumentResult | None:
    data = get_json_or_none(storage.result_key(job_id, document_id))
    return None if data is None else DocumentResult.model_validate(data)


def put_section_result(result: DocumentResult) -> str:
    assert result.section_id is not None, "a section's result names its section"
    key = storage.section_result_key(result.job_id, result.document_id, result.section_id)
    put_json(key, result)
    return key


def get_section_result(job_id: str, document_id: str, section_id: str) -> DocumentResult | None:
    data = get_json_or_none(storage.section_result_key(job_id, document_id, section_id))
    return None if data is None else DocumentResult.model_validate(data)


def list_result_ids(job_id: str) -> list[str]:
    """Document ids that have a result object."""
    return storage.result_ids_of(job_id, (obj["Key"] for obj in list_objects(storage.results_prefix(job_id))))


def put_model_call(record: ModelCallRecord) -> str:
    key = storage.model_call_key(record.job_id, record.document_id, record.call_id)
    put_json(key, record)
    return key


def put_model_attempt(record: ModelAttemptRecord) -> str:
    key = storage.model_attempt_key(record.job_id, record.document_id, record.call_id)
    put_json(key, record)
    return key


def get_model_breaker(job_id: str) -> ModelBreaker | None:
    data = get_json_or_none(storage.model_breaker_key(job_id))
    return None if data is None else ModelBreaker.model_validate(data)


def put_model_breaker(breaker: ModelBreaker) -> None:
    put_json(storage.model_breaker_key(breaker.job_id), breaker)


def list_model_calls(job_id: str, document_id: str) -> list[ModelCallRecord]:
    """The journal of one document: every model call really made, oldest first."""
    return [
        ModelCallRecord.model_validate(get_json(obj["Key"]))
        for obj in list_objects(storage.model_calls_prefix(job_id, document_id))
    ]


def list_review_items(job_id: str, *, bucket: str | None = None, client: S3Client | None = None) -> list[str]:
    """Review items (documents, and packets' sections as ``{document_id}#{section_id}``) that have a
    reviewer's decision (one listing of reviews/, ceil(R / 1000) pages)."""
    prefix = storage.reviews_prefix(job_id)
    keys = (obj["Key"] for obj in list_objects(prefix, bucket=bucket, client=client))
    return [item for key in keys if (item := storage.review_item_of_key(prefix, key)) is not None]
