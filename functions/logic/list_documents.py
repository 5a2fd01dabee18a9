"""ListDocuments and SealJob: a job's listing spread over durable steps, then joined for the Map.

ListDocuments (``action: list``) continues the listing from the last part's continuation marker
(ListObjectVersions KeyMarker/VersionIdMarker), lists at most ``MAX_PAGES_PER_STEP`` pages, and writes one
part of the items, ``jobs/{job}/items/part-NNNNN.jsonl`` (JSON Lines, one ManifestEntry a line), then its
durable record ``jobs/{job}/listing/part-NNNNN.json``. A part is complete once it holds
``ITEMS_PART_MIN_BYTES`` (S3's minimum multipart part size, 5 MiB) or the listing ended; a step that reaches
its page bound first records the part as open, and the next step continues it (reading back at most the bytes
the record names). A part whose record says complete is reused, never listed again: a retry, a crash or a
redrive resumes at the first part not complete. The ``documents`` form (an explicit key list, bounded by the
256 KiB execution input) is one part of one HeadObject per key.

SealJob (``action: seal``) joins the parts into ``jobs/{job}/items/items.jsonl`` with a multipart upload of
UploadPartCopy (S3 copies the bytes; none pass through Lambda); a job of one part uses the part itself. Then
it writes manifest.json (a summary: counts, part keys, versions), last: its presence means the job is
prepared, and a repeat returns the same PreparedJob.
"""

from __future__ import annotations

import hashlib
import re
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from functions import aws, budget, s3_json, storage
from functions.definition.job_spec import short_version
from functions.errors import InvalidJobRequest, NoDocuments
from functions.observability import logger
from functions.payloads.common import utc_now
from functions.payloads.job import (
    JobInfo,
    JobManifest,
    JobOptions,
    JobVersions,
    ListingCursor,
    ListingEvent,
    ListingPart,
    ManifestEntry,
    PreparedJob,
    StoredRequest,
)
from functions.settings import get_settings

if TYPE_CHECKING:
    from mypy_boto3_s3.type_defs import CompletedPartTypeDef

    from functions.settings import Settings

# ListObjectVersions returns at most 1,000 versions a page (as of 2026-11, AWS docs "ListObjectVersions":
# MaxKeys; the setting LISTING_PAGE_SIZE). A step lists at most MAX_PAGES_PER_STEP pages: 100,000 versions at
# 1,000 a page, a few seconds.
MAX_PAGES_PER_STEP = 100
_READ_WORKERS = 16

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
_MAX_ID_LENGTH = 180
_HASH_LENGTH = 16
_HASHED = re.compile(rf"-h[0-9a-f]{{{_HASH_LENGTH}}}$")


def document_id_for(relative_key: str) -> str:
    """The document id of a key, from the key alone (no other key is needed, so a paged listing can name
    every document): the key relative to the prefix when it is already safe (``[A-Za-z0-9._-]``, not
    starting with '.' or '-', at most 180 characters, not ending like a hashed id); otherwise the key with
    unsafe characters replaced by '_', cut to fit, plus ``-h`` and 16 hex digits of the key's sha256. Two
    keys get the same id only if they are equal or their hashes' first 64 bits collide."""
    candidate = _UNSAFE.sub("_", relative_key)
    if (
        candidate == relative_key
        and candidate
        and candidate[0] not in ".-"
        and len(candidate) <= _MAX_ID_LENGTH
        and not _HASHED.search(candidate)
    ):
        return candidate
    digest = hashlib.sha256(relative_key.encode()).hexdigest()[:_HASH_LENGTH]
    if not candidate or candidate[0] in ".-":
        candidate = f"_{candidate}"
    return f"{candidate[: _MAX_ID_LENGTH - _HASH_LENGTH - 2]}-h{digest}"


def listed_names(keys: list[str]) -> list[str]:
    """The names a ``documents`` list gives its keys: the base name, or the whole key where two keys of the
    list share a base name (the list is in the execution input, so it is known in full)."""
    bases = [key.rsplit("/", 1)[-1] or key for key in keys]
    shared = {base for base in bases if bases.count(base) > 1}
    return [key if base in shared else base for key, base in zip(keys, bases, strict=True)]


def _version(raw: str | None) -> str | None:
    return None if raw in (None, "", "null") else raw  # "null": the bucket is not versioned


def _line(entry: ManifestEntry) -> bytes:
    return entry.model_dump_json().encode() + b"\n"


def _stored_request(job_id: str) -> StoredRequest:
    data = s3_json.get_json_or_none(storage.request_key(job_id))
    if data is None:
        raise InvalidJobRequest(f"job {job_id} has no request.json: PrepareJob did not run")
    return StoredRequest.model_validate(data)


def _get_part(job_id: str, part: int) -> ListingPart | None:
    data = s3_json.get_json_or_none(storage.listing_part_key(job_id, part))
    return None if data is None else ListingPart.model_validate(data)


def _cursor(record: ListingPart) -> ListingCursor:
    return ListingCursor(
        part=record.part + 1 if record.complete else record.part,
        documents=record.first_index + record.count,
        done=record.last,
    )


def _start(job_id: str, part: int, record: ListingPart | None, bucket: str) -> tuple[ListingPart, bytes]:
    """Where part ``part`` starts: its open ``record`` and the bytes written so far, else the end of the part
    before it (which must be complete and not the last)."""
    if record is not None:
        body = b""
        if record.bytes:
            response = aws.s3_client().get_object(
                Bucket=bucket,
                Key=storage.items_part_key(job_id, part),
                Range=f"bytes=0-{record.bytes - 1}",
            )
            body = response["Body"].read()
        return record, body
    if part == 0:
        return ListingPart(part=0, first_index=0, count=0, bytes=0, pages=0, complete=False, last=False), b""
    before = _get_part(job_id, part - 1)
    if before is None or not before.complete or before.last:
        raise InvalidJobRequest(f"job {job_id}: listing part {part} does not follow a complete part")
    fresh = ListingPart(
        part=part,
        first_index=before.first_index + before.count,
        count=0,
        bytes=0,
        pages=0,
        complete=False,
        last=False,
        next_key_marker=before.next_key_marker,
        next_version_id_marker=before.next_version_id_marker,
    )
    return fresh, b""


def _list_pages(
    request_prefix: str, bucket: str, start: ListingPart, body: bytes, settings: Settings
) -> tuple[ListingPart, bytes]:
    """Continue the listing from ``start`` until the part holds the minimum part size, the listing ends, or
    the step has listed MAX_PAGES_PER_STEP pages."""
    chunks = [body]
    size, index = len(body), start.first_index + start.count
    key_marker, version_marker = start.next_key_marker, start.next_version_id_marker
    pages, ended = 0, False
    while pages < MAX_PAGES_PER_STEP and size < settings.items_part_min_bytes and not ended:
        page = s3_json.list_versions_page(
            request_prefix,
            bucket=bucket,
            key_marker=key_marker,
            version_id_marker=version_marker,
            max_keys=settings.listing_page_size,
        )
        pages += 1
        for version in page.versions:
            key = version["Key"]
            if not version.get("IsLatest") or key.endswith("/"):
                continue  # an older version, or a "folder" marker
            if index >= settings.max_documents:
                raise InvalidJobRequest(f"more than MAX_DOCUMENTS={settings.max_documents} documents")
            line = _line(
                ManifestEntry(
                    document_id=document_id_for(key[len(request_prefix) :]),
                    key=key,
                    index=index,
                    size=int(version.get("Size", 0)),
                    version_id=_version(version.get("VersionId")),
                    etag=version.get("ETag"),
                )
            )
            chunks.append(line)
            size, index = size + len(line), index + 1
        key_marker, version_marker = page.next_key_marker, page.next_version_id_marker
        ended = key_marker is None
    complete = ended or size >= settings.items_part_min_bytes
    record = start.model_copy(
        update={
            "count": index - start.first_index,
            "bytes": size,
            "pages": start.pages + pages,
            "complete": complete,
            "last": ended,
            "next_key_marker": key_marker,
            "next_version_id_marker": version_marker,
        }
    )
    return record, b"".join(chunks)


def _head(bucket: str, key: str) -> tuple[int | None, str | None, str | None]:
    try:
        response = aws.s3_client().head_object(Bucket=bucket, Key=key)
    except ClientError as error:
        if s3_json.is_not_found(error):
            return None, None, None
        raise
    return int(response["ContentLength"]), _version(response.get("VersionId")), response.get("ETag")


def _documents_part(keys: list[str], bucket: str, settings: Settings) -> tuple[ListingPart, bytes]:
    """The one part of a ``documents`` request: one HeadObject per key (the list is bounded by the 256 KiB
    execution input); a missing key is an entry with nulls, rejected DocumentMissing by its child."""
    if len(keys) > settings.max_documents:
        raise InvalidJobRequest(f"more than MAX_DOCUMENTS={settings.max_documents} documents")
    aws.s3_client()  # create the shared client before the threads do (client creation is not thread-safe)
    with ThreadPoolExecutor(max_workers=min(_READ_WORKERS, max(1, len(keys)))) as pool:
        heads = list(pool.map(lambda key: _head(bucket, key), keys))
    lines = [
        _line(
            ManifestEntry(
                document_id=document_id_for(name), key=key, index=index, size=size, version_id=vid, etag=etag
            )
        )
        for index, (key, name, (size, vid, etag)) in enumerate(
            zip(keys, listed_names(keys), heads, strict=True)
        )
    ]
    body = b"".join(lines)
    record = ListingPart(
        part=0, first_index=0, count=len(keys), bytes=len(body), pages=0, complete=True, last=True
    )
    return record, body


def list_step(event: ListingEvent, settings: Settings) -> ListingCursor:
    """One ListDocuments step: write (or continue, or reuse) part ``event.listing.part``."""
    job_id, part = event.job_id, event.listing.part
    stored = _stored_request(job_id)
    existing = _get_part(job_id, part)
    if existing is not None and existing.complete:
        logger.info("listing part already written; reusing it", extra={"job_id": job_id, "part": part})
        return _cursor(existing)
    request = stored.request
    bucket = request.bucket or settings.bucket_name
    try:
        if request.documents is not None:
            record, body = _documents_part(list(request.documents), bucket, settings)
        else:
            start, written = _start(job_id, part, existing, settings.bucket_name)
            record, body = _list_pages(request.prefix or "", bucket, start, written, settings)
    except ClientError as error:
        code = error.response.get("Error", {}).get("Code", "")
        if code in {"NoSuchBucket", "AccessDenied"}:
            raise InvalidJobRequest(f"cannot list s3://{bucket}/{request.prefix or ''}: {code}") from None
        raise
    except InvalidJobRequest as error:
        raise InvalidJobRequest(f"job {job_id}: {error}") from None
    if record.last and record.first_index + record.count == 0:
        raise NoDocuments(f"job {job_id}: the request selects no documents")
    # The part first, then its record: a record names only bytes that are there.
    aws.s3_client().put_object(
        Bucket=settings.bucket_name,
        Key=storage.items_part_key(job_id, part),
        Body=body,
        ContentType="application/jsonl",
    )
    s3_json.put_json(storage.listing_part_key(job_id, part), record)
    logger.info(
        "listing part written",
        extra={"job_id": job_id, "part": part, "documents": record.count, "complete": record.complete},
    )
    return _cursor(record)


def _join(job_id: str, parts: list[str], bucket: str) -> str:
    """The parts as one object, copied server-side: every part but the last holds at least S3's minimum part
    size (as of 2026-11, AWS docs "Amazon S3 multipart upload limits": 5 MiB to 5 GiB a part, no minimum for
    the last one, at most 10,000 parts). A join that completed before (a retry) is reused."""
    key = storage.items_key(job_id)
    if s3_json.exists(key):
        return key
    s3 = aws.s3_client()
    created = s3.create_multipart_upload(Bucket=bucket, Key=key, ContentType="application/jsonl")
    upload_id = created["UploadId"]
    try:
        completed: list[CompletedPartTypeDef] = []
        for number, part_key in enumerate(parts, start=1):
            copied = s3.upload_part_copy(
                Bucket=bucket,
                Key=key,
                UploadId=upload_id,
                PartNumber=number,
                CopySource={"Bucket": bucket, "Key": part_key},
            )
            completed.append({"PartNumber": number, "ETag": copied["CopyPartResult"]["ETag"]})
        s3.complete_multipart_upload(
            Bucket=bucket, Key=key, UploadId=upload_id, MultipartUpload={"Parts": completed}
        )
    except Exception:
        s3.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id)
        raise
    return key


def pinned_versions(settings: Settings, stored: StoredRequest | None = None) -> JobVersions:
    """What the job is pinned to: the model, the code and its definition (PrepareJob resolved it: the prompts
    are the bundle's, shown as ``name@short sha``)."""
    if stored is None or stored.definition is None or stored.definition_sha256 is None:
        job = stored.request.job_id if stored is not None else "the job"
        raise InvalidJobRequest(
            f"{job} pins no job definition: it was prepared before definitions; start it again"
        )
    return JobVersions(
        model_id=settings.model_id,
        prompt_version=f"{stored.definition}@{short_version(stored.definition_sha256)}",
        prompt_sha256=stored.definition_sha256,
        code_version=settings.code_version,
        created_at=utc_now(),
        definition=stored.definition,
        definition_sha256=stored.definition_sha256,
    )


def prepared_job(manifest: JobManifest, stored: StoredRequest, bucket: str) -> PreparedJob:
    job_id = manifest.job.job_id
    return PreparedJob(
        job_id=job_id,
        bucket=bucket,
        manifest_key=storage.manifest_key(job_id),
        items_key=manifest.items_key or storage.legacy_items_key(job_id),
        document_count=manifest.count,
        options=run_options(stored, manifest.versions),
        versions=manifest.versions,
    )


def run_options(stored: StoredRequest, versions: JobVersions) -> JobOptions:
    """The options the job runs with: the request's, its budget defaulted, and ``wait_for_review`` decided
    (the request's, else its pinned definition's ``review.wait``: docs/design.md, "Review")."""
    options = budget.with_default(stored.request.options, get_settings().default_max_cost_usd)
    if options.wait_for_review is not None:
        return options
    bundle = None
    if versions.definition is not None and versions.definition_sha256 is not None:
        bundle = s3_json.get_definition(versions.definition, versions.definition_sha256)
    return options.model_copy(
        update={"wait_for_review": bundle is not None and bundle.definition.waits_for_review()}
    )


def seal(event: ListingEvent, settings: Settings) -> PreparedJob:
    """SealJob: join the parts, write manifest.json (last), return the PreparedJob the Map reads."""
    job_id = event.job_id
    if not event.listing.done:
        raise InvalidJobRequest(f"job {job_id}: the listing is not done")
    stored = _stored_request(job_id)
    manifest = s3_json.get_manifest(job_id)
    if manifest is not None and manifest.job.request_sha256 == stored.request_sha256:
        logger.info("job already sealed; reusing its manifest", extra={"job_id": job_id})
        if len(manifest.parts) > 1:
            _join(job_id, manifest.parts, settings.bucket_name)  # one HEAD: the join is there (else redone)
        return prepared_job(manifest, stored, settings.bucket_name)
    records = [_get_part(job_id, part) for part in range(event.listing.part)]
    if any(record is None or not record.complete for record in records):
        raise InvalidJobRequest(f"job {job_id}: a listing part is missing or open")
    parts = [storage.items_part_key(job_id, r.part) for r in records if r is not None and r.count]
    count = sum(record.count for record in records if record is not None)
    items = parts[0] if len(parts) == 1 else _join(job_id, parts, settings.bucket_name)
    request = stored.request
    manifest = JobManifest(
        job=JobInfo(
            job_id=job_id,
            source_bucket=request.bucket or settings.bucket_name,
            prefix=request.prefix,
            request_sha256=stored.request_sha256,
        ),
        versions=pinned_versions(settings, stored),
        parts=parts,
        document_count=count,
        items_key=items,
    )
    s3_json.put_json(storage.manifest_key(job_id), manifest)
    logger.info("job prepared", extra={"job_id": job_id, "document_count": count, "parts": len(parts)})
    return prepared_job(manifest, stored, settings.bucket_name)
