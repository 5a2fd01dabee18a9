"""prepare_job: validate the request, list the documents, pin versions, write request/manifest/items.

No document is read: each is pinned by its VersionId (versioned bucket) or its ETag, from the listing
(ListObjectVersions, 1,000 per call) or, for a ``documents`` request, one HEAD per listed key (bounded by the
256 KiB execution input); ProcessDocument reads exactly that version and hashes what it reads.

Durable step ``prepare`` keyed by the job id, with payload validation on the request's sha256: the same job id
with the same request returns the same PreparedJob without rewriting anything; with another request it is
refused (JobConflict). The stored request.json is compared too, so the refusal outlives the idempotency TTL.
"""

from __future__ import annotations

import hashlib
import json
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.utilities.idempotency.exceptions import IdempotencyValidationError
from botocore.exceptions import ClientError
from pydantic import ValidationError

from functions import aws, durable, storage
from functions.errors import ConfigurationError, InvalidJobRequest, JobConflict, NoDocuments
from functions.model import load_prompt
from functions.models import (
    JobInfo,
    JobManifest,
    JobOptions,
    JobRequest,
    JobVersions,
    ManifestEntry,
    PreparedJob,
    PrepareJobEvent,
    StoredRequest,
    utc_now,
)
from functions.observability import logger
from functions.settings import Settings, get_settings

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
_MAX_ID_LENGTH = 180
_READ_WORKERS = 16


def parse_event(event: dict[str, Any]) -> tuple[JobRequest, str]:
    """The request and the execution name; any malformation is InvalidJobRequest with pydantic's reasons."""
    try:
        parsed = PrepareJobEvent.model_validate(event)
        request = JobRequest.model_validate(parsed.request)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in issue['loc']) or 'request'}: {issue['msg']}"
            for issue in error.errors()
        )
        raise InvalidJobRequest(f"invalid job request: {problems}") from None
    return request, parsed.execution_name


def request_sha256(request: JobRequest) -> str:
    canonical = json.dumps(request.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def document_id_for(relative_key: str) -> str:
    """A safe document id from a key: unsafe characters become '_', it never starts with '.' or '-'."""
    candidate = _UNSAFE.sub("_", relative_key)[:_MAX_ID_LENGTH]
    if not candidate or candidate[0] in ".-":
        candidate = f"_{candidate}"[:_MAX_ID_LENGTH]
    return candidate


def unique_document_ids(relative_keys: list[str]) -> list[str]:
    seen: set[str] = set()
    ids = []
    for relative in relative_keys:
        base = document_id_for(relative)
        candidate, suffix = base, 2
        while candidate in seen:
            candidate, suffix = f"{base}-{suffix}", suffix + 1
        seen.add(candidate)
        ids.append(candidate)
    return ids


def configured_sources(settings: Settings) -> list[tuple[str, str]]:
    """SOURCE_LOCATIONS as (bucket, prefix); a job-bucket prefix gets the job bucket's name, and an empty
    setting means the job bucket's incoming root."""
    located = []
    for entry in (part.strip() for part in (settings.source_locations or storage.INCOMING_ROOT).split(",")):
        if entry.startswith("s3://"):
            bucket, _, prefix = entry[len("s3://") :].partition("/")
            located.append((bucket, prefix))
        elif entry:
            located.append((settings.bucket_name, entry))
    return located


def check_source_location(request: JobRequest, settings: Settings) -> None:
    """Documents come only from the configured source locations (SOURCE_LOCATIONS), never from the records,
    map-run results or ticket ledger the product writes: anything else is refused, naming the location and the
    setting that would allow it."""
    bucket = request.bucket or settings.bucket_name
    allowed = [prefix for source_bucket, prefix in configured_sources(settings) if source_bucket == bucket]
    configured = ", ".join(f"s3://{b}/{p}" for b, p in configured_sources(settings))
    fix = (
        f"documents come only from the configured source locations ({configured}); to use it, add it to "
        "source_locations in cdk.json (that grants the functions read access to it) and deploy"
    )
    wanted = [request.prefix] if request.prefix is not None else list(request.documents or [])
    outside = [key for key in wanted if not any(key.startswith(prefix) for prefix in allowed)]
    if outside:
        shown = ", ".join(f"s3://{bucket}/{key}" for key in outside[:3])
        more = f" and {len(outside) - 3} more" if len(outside) > 3 else ""
        raise InvalidJobRequest(f"job {request.job_id}: {shown}{more} is outside the source locations: {fix}")


@dataclass(frozen=True)
class Listed:
    """A document as the listing (or a HEAD) saw it: the version or ETag it is pinned to, or missing."""

    key: str
    size: int | None = None
    version_id: str | None = None
    etag: str | None = None


def _version(raw: str | None) -> str | None:
    return None if raw in (None, "", "null") else raw  # "null": the bucket is not versioned


def _list_prefix(bucket: str, prefix: str, max_documents: int) -> list[Listed]:
    """The current version of every object under the prefix, in key order: ceil(V / 1000) ListObjectVersions
    calls, V the versions under the prefix (noncurrent ones included); no document is read."""
    listed: list[Listed] = []
    for version in storage.list_versions(prefix, bucket=bucket):
        if not version.get("IsLatest") or version["Key"].endswith("/"):
            continue  # an older version, or a "folder" marker
        listed.append(
            Listed(
                key=version["Key"],
                size=int(version.get("Size", 0)),
                version_id=_version(version.get("VersionId")),
                etag=version.get("ETag"),
            )
        )
        if len(listed) > max_documents:
            break
    return listed


def _head(bucket: str, key: str) -> Listed:
    """One listed document of a ``documents`` request (their number is bounded by the 256 KiB input)."""
    try:
        response = aws.s3_client().head_object(Bucket=bucket, Key=key)
    except ClientError as error:
        if storage.is_not_found(error):
            return Listed(key=key)
        raise
    return Listed(
        key=key,
        size=int(response["ContentLength"]),
        version_id=_version(response.get("VersionId")),
        etag=response.get("ETag"),
    )


def _list_documents(request: JobRequest, settings: Settings) -> tuple[list[Listed], list[str]]:
    """(documents, relative keys) in a stable order."""
    bucket = request.bucket or settings.bucket_name
    prefix = request.prefix or ""
    try:
        if request.documents is None:
            listed = _list_prefix(bucket, prefix, settings.max_documents)
            return listed, [document.key[len(prefix) :] for document in listed]
        keys = list(request.documents)
        if len(keys) > settings.max_documents:
            return [Listed(key=key) for key in keys], keys
        aws.s3_client()  # create the shared client before the threads do (client creation is not thread-safe)
        with ThreadPoolExecutor(max_workers=min(_READ_WORKERS, max(1, len(keys)))) as pool:
            listed = list(pool.map(lambda key: _head(bucket, key), keys))
        return listed, [key.rsplit("/", 1)[-1] or key for key in keys]
    except ClientError as error:
        code = error.response.get("Error", {}).get("Code", "")
        if code in {"NoSuchBucket", "AccessDenied"}:
            raise InvalidJobRequest(f"cannot list s3://{bucket}/{prefix}: {code}") from None
        raise


def build_entries(request: JobRequest, settings: Settings) -> list[ManifestEntry]:
    listed, relative = _list_documents(request, settings)
    if not listed:
        raise NoDocuments(f"job {request.job_id}: the request selects no documents")
    if len(listed) > settings.max_documents:
        raise InvalidJobRequest(
            f"job {request.job_id}: more than MAX_DOCUMENTS={settings.max_documents} documents"
        )
    return [
        ManifestEntry(
            document_id=document_id,
            key=document.key,
            index=index,
            size=document.size,
            version_id=document.version_id,
            etag=document.etag,
        )
        for index, (document_id, document) in enumerate(
            zip(unique_document_ids(relative), listed, strict=True)
        )
    ]


def pinned_versions(settings: Settings) -> JobVersions:
    try:
        prompt = load_prompt(settings.prompt_version)
    except ValueError as error:
        raise ConfigurationError(f"PROMPT_VERSION: {error}") from None
    return JobVersions(
        model_id=settings.model_id,
        prompt_version=prompt.version,
        prompt_sha256=prompt.sha256,
        code_version=settings.code_version,
        created_at=utc_now(),
    )


def _prepared(manifest: JobManifest, options: JobOptions, settings: Settings) -> PreparedJob:
    job_id = manifest.job.job_id
    return PreparedJob(
        job_id=job_id,
        bucket=settings.bucket_name,
        manifest_key=storage.manifest_key(job_id),
        items_key=storage.items_key(job_id),
        document_count=len(manifest.entries),
        options=options,
        versions=manifest.versions,
    )


def _prepare(request: JobRequest, sha: str, settings: Settings) -> PreparedJob:
    job_id = request.job_id
    stored = storage.get_json_or_none(storage.request_key(job_id))
    if stored is not None and stored.get("request_sha256") != sha:
        raise JobConflict(f"job {job_id} already exists with a different request")
    manifest = storage.get_manifest(job_id)
    if stored is not None and manifest is not None and manifest.job.request_sha256 == sha:
        logger.info("job already prepared; reusing its manifest", extra={"job_id": job_id})
        return _prepared(manifest, request.options, settings)

    entries = build_entries(request, settings)
    manifest = JobManifest(
        job=JobInfo(
            job_id=job_id,
            source_bucket=request.bucket or settings.bucket_name,
            prefix=request.prefix,
            request_sha256=sha,
        ),
        versions=pinned_versions(settings),
        entries=entries,
    )
    # manifest.json last: its presence means the job is completely prepared.
    storage.put_json(
        storage.request_key(job_id), StoredRequest(request=request, request_sha256=sha, received_at=utc_now())
    )
    storage.put_json(storage.items_key(job_id), [entry.model_dump(mode="json") for entry in entries])
    storage.put_json(storage.manifest_key(job_id), manifest)
    logger.info("job prepared", extra={"job_id": job_id, "document_count": len(entries)})
    return _prepared(manifest, request.options, settings)


def prepare_job(event: dict[str, Any], context: LambdaContext) -> PreparedJob:
    settings = get_settings()
    request, execution_name = parse_event(event)
    if execution_name != request.job_id:
        raise InvalidJobRequest(f"execution name {execution_name!r} must equal the job id {request.job_id!r}")
    request = request.model_copy(update={"bucket": request.bucket or settings.bucket_name})
    check_source_location(request, settings)
    sha = request_sha256(request)
    logger.append_keys(job_id=request.job_id)
    try:
        return durable.run_step(
            "prepare",
            ids={"job_id": request.job_id},
            key_field="job_id",
            validate={"request_sha256": sha},
            fn=lambda: _prepare(request, sha, settings),
            result_model=PreparedJob,
            context=context,
        )
    except IdempotencyValidationError:
        raise JobConflict(f"job {request.job_id} already ran with a different request") from None
