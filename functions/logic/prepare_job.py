"""prepare_job: validate the request, check its source location, write request.json, start the listing.

The listing itself is ListDocuments, a loop of bounded durable steps, then SealJob writes the manifest and the
items the Map reads (functions/logic/list_documents.py). No document is read: each is pinned by its VersionId
(versioned bucket) or its ETag; ProcessDocument reads exactly that version and hashes what it reads.

Durable step ``prepare`` keyed by the job id, with payload validation on the request's sha256: the same job id
with the same request returns the same StartedJob without rewriting anything; with another request it is
refused (JobConflict). The stored request.json is compared too, so the refusal outlives the idempotency TTL.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.utilities.idempotency.exceptions import IdempotencyValidationError
from botocore.exceptions import ClientError
from pydantic import ValidationError

from functions import budget, s3_json, storage
from functions.definition.job_spec import DefinitionPointer
from functions.durability import durable
from functions.errors import InvalidJobRequest, JobConflict
from functions.logic.list_documents import document_id_for, pinned_versions
from functions.observability import logger
from functions.payloads.common import utc_now
from functions.payloads.job import JobRequest, ListingCursor, PrepareJobEvent, StartedJob, StoredRequest
from functions.settings import Settings, get_settings

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

__all__ = [
    "check_source_location",
    "configured_sources",
    "document_id_for",
    "outside_sources",
    "pinned_versions",
    "prepare_job",
    "request_sha256",
    "resolve_definition",
]


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


def configured_sources(source_locations: str, job_bucket: str) -> list[tuple[str, str]]:
    """SOURCE_LOCATIONS as (bucket, prefix); a job-bucket prefix gets the job bucket's name, and an empty
    setting means the job bucket's incoming root."""
    located = []
    for entry in (part.strip() for part in (source_locations or storage.INCOMING_ROOT).split(",")):
        if entry.startswith("s3://"):
            bucket, _, prefix = entry[len("s3://") :].partition("/")
            located.append((bucket, prefix))
        elif entry:
            located.append((job_bucket, entry))
    return located


def outside_sources(bucket: str, wanted: list[str], sources: list[tuple[str, str]]) -> list[str]:
    """The keys (or prefixes) of ``wanted`` in ``bucket`` that no configured source location holds. The CLI's
    ``docagent start`` refuses with the same check before anything starts."""
    allowed = [prefix for source_bucket, prefix in sources if source_bucket == bucket]
    return [key for key in wanted if not any(key.startswith(prefix) for prefix in allowed)]


def check_source_location(request: JobRequest, settings: Settings) -> None:
    """Documents come only from the configured source locations (SOURCE_LOCATIONS), never from the records,
    map-run results or action ledger the product writes: anything else is refused, naming the location and the
    setting that would allow it."""
    bucket = request.bucket or settings.bucket_name
    sources = configured_sources(settings.source_locations, settings.bucket_name)
    configured = ", ".join(f"s3://{b}/{p}" for b, p in sources)
    fix = (
        f"documents come only from the configured source locations ({configured}); to use it, add it to "
        "source_locations in cdk.json (that grants the functions read access to it) and deploy"
    )
    wanted = [request.prefix] if request.prefix is not None else list(request.documents or [])
    outside = outside_sources(bucket, wanted, sources)
    if outside:
        shown = ", ".join(f"s3://{bucket}/{key}" for key in outside[:3])
        more = f" and {len(outside) - 3} more" if len(outside) > 3 else ""
        raise InvalidJobRequest(f"job {request.job_id}: {shown}{more} is outside the source locations: {fix}")


def _check_listable(request: JobRequest, settings: Settings) -> None:
    """A prefix whose bucket cannot be listed is refused before anything is written (one one-key listing)."""
    if request.prefix is None:
        return
    bucket = request.bucket or settings.bucket_name
    try:
        s3_json.list_versions_page(request.prefix, bucket=bucket, max_keys=1)
    except ClientError as error:
        code = error.response.get("Error", {}).get("Code", "")
        if code in {"NoSuchBucket", "AccessDenied"}:
            raise InvalidJobRequest(f"cannot list s3://{bucket}/{request.prefix}: {code}") from None
        raise


def resolve_definition(request: JobRequest, settings: Settings) -> tuple[str, str]:
    """The definition a new job pins: the request's (else DEFAULT_DEFINITION) at its current version, by name
    and content hash. None named, or an unpublished one, is InvalidJobRequest (nothing starts)."""
    name = request.definition or settings.default_definition or None
    if name is None:
        raise InvalidJobRequest(
            f"job {request.job_id} names no job definition and the deployment has no default: start it with "
            "`--definition NAME` (a published definition) or set default_definition in cdk.json"
        )
    raw = s3_json.get_json_or_none(storage.definition_current_key(name))
    if raw is None:
        origin = "the request's" if request.definition else "the deployment's default (DEFAULT_DEFINITION)"
        raise InvalidJobRequest(
            f"job {request.job_id}: definition {name!r} ({origin}) is not published: run "
            f"`docagent definition publish PATH` with its folder, then start the job again"
        )
    pointer = DefinitionPointer.model_validate(raw)
    return pointer.name, pointer.sha256


def _check_batch_inference(request: JobRequest, name: str, sha256: str) -> None:
    """Batch inference batches the extraction of a one-class definition (docs/batch.md): a request for it
    with a definition of several classes (a classification first) is refused before anything starts."""
    if request.options.inference != "batch":
        return
    bundle = s3_json.get_definition(name, sha256)
    if bundle is not None and len(bundle.classes) > 1:
        raise InvalidJobRequest(
            f"job {request.job_id}: inference 'batch' runs the extraction of a one-class definition as a "
            f"batch job; {name} has {len(bundle.classes)} classes ({', '.join(sorted(bundle.classes))}), "
            "classified first: start it with inference 'on_demand' (or 'auto', which runs it on-demand)"
        )


def _prepare(request: JobRequest, sha: str, settings: Settings) -> StartedJob:
    """Store the request (once: the same job id with another request is JobConflict) and start the listing."""
    job_id = request.job_id
    stored = s3_json.get_json_or_none(storage.request_key(job_id))
    if stored is not None and stored.get("request_sha256") != sha:
        raise JobConflict(f"job {job_id} already exists with a different request")
    if stored is None:
        _check_listable(request, settings)
        definition, definition_sha256 = resolve_definition(request, settings)
        _check_batch_inference(request, definition, definition_sha256)
        record = StoredRequest(
            request=request,
            request_sha256=sha,
            received_at=utc_now(),
            definition=definition,
            definition_sha256=definition_sha256,
        )
        s3_json.put_json(storage.request_key(job_id), record)
    logger.info("job request stored; listing starts", extra={"job_id": job_id})
    return StartedJob(
        job_id=job_id,
        bucket=settings.bucket_name,
        options=budget.with_default(request.options, settings.default_max_cost_usd),
        listing=ListingCursor(),
    )


def prepare_job(event: dict[str, Any], context: LambdaContext) -> StartedJob:
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
            result_model=StartedJob,
            context=context,
        )
    except IdempotencyValidationError:
        raise JobConflict(f"job {request.job_id} already ran with a different request") from None
