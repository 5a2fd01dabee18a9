"""process_document: one document through validation, the model (durable), the customer lookup (durable), and
into exactly one stored DocumentResult.

A bad document is a *result* (rejected, with its reason), never a failure of the Map child: the function
returns normally so other documents are unaffected. Only infrastructure problems (and crashes) fail the
invocation, and the retry then resumes from the durable steps: a finished model call is never made again.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

from boto3.dynamodb.types import TypeDeserializer
from botocore.exceptions import ClientError

from functions import aws, durable, storage
from functions.documents import DocumentInput, block_name, detect_format
from functions.errors import (
    DocumentChanged,
    DocumentMissing,
    DocumentRejected,
    DocumentTooLarge,
    DocumentTooLong,
    DocumentUnreadable,
    ExtractionFailed,
    InvalidJobRequest,
    ModelAccessDenied,
    ModelCallRefused,
    ModelError,
    ModelNotAvailable,
    ModelRequestInvalid,
    UnknownCustomer,
)
from functions.faults import fault_point
from functions.model import ModelProvider, get_model_provider, load_prompt
from functions.model.base import Prompt
from functions.model.telemetry import genai_attributes, record_model_call
from functions.models import (
    MAX_CONVERSE_DOCUMENT_BYTES,
    CustomerLookup,
    CustomerRecord,
    DocumentFormat,
    DocumentOutcome,
    DocumentResult,
    ExtractionRecord,
    JobManifest,
    ManifestEntry,
    ModelAttemptRecord,
    ModelBreaker,
    ModelCallOutcome,
    ModelCallRecord,
    ProcessDocumentEvent,
    utc_now,
)
from functions.observability import logger
from functions.settings import Settings, get_settings
from functions.spans import span

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext
    from mypy_boto3_s3.type_defs import GetObjectOutputTypeDef

_deserializer = TypeDeserializer()


@functools.lru_cache(maxsize=32)
def _cached_manifest(bucket: str, job_id: str) -> JobManifest:
    """Manifests never change once written, so a warm container reads each job's manifest once."""
    manifest = storage.get_manifest(job_id)
    if manifest is None:
        raise InvalidJobRequest(f"job {job_id} has no manifest; was it prepared?")
    return manifest


def load_manifest(job_id: str) -> JobManifest:
    return _cached_manifest(get_settings().bucket_name, job_id)


def outcome_of(result: DocumentResult) -> DocumentOutcome:
    return DocumentOutcome(
        document_id=result.document_id,
        status=result.status,
        result_key=storage.result_key(result.job_id, result.document_id),
        error=result.error,
        row=result.report_row(),
    )


# ------------------------------------------------------------------------------------ document checks


@dataclass(frozen=True)
class ReadDocument:
    document: DocumentInput
    sha256: str


def _get_pinned(bucket: str, entry: ManifestEntry) -> GetObjectOutputTypeDef:
    """Exactly the version the manifest pinned: by VersionId, else only while the ETag still matches."""
    where = f"s3://{bucket}/{entry.key}"
    if entry.size is None and entry.version_id is None and entry.etag is None and entry.sha256 is None:
        raise DocumentMissing(f"{where} did not exist when the job was prepared")
    try:
        if entry.version_id is not None:
            return aws.s3_client().get_object(Bucket=bucket, Key=entry.key, VersionId=entry.version_id)
        if entry.etag is not None:
            return aws.s3_client().get_object(Bucket=bucket, Key=entry.key, IfMatch=entry.etag)
        return aws.s3_client().get_object(Bucket=bucket, Key=entry.key)
    except ClientError as error:
        code = error.response.get("Error", {}).get("Code", "")
        if code in {"PreconditionFailed", "412"}:
            raise DocumentChanged(f"{where} changed since the job was prepared (ETag differs)") from None
        if storage.is_not_found(error) or code == "NoSuchVersion":
            pinned = f" (version {entry.version_id})" if entry.version_id else ""
            raise DocumentMissing(f"{where}{pinned} does not exist") from None
        raise


def read_document(bucket: str, entry: ManifestEntry, max_bytes: int) -> ReadDocument:
    """The pinned bytes as the model receives them (format from content, neutral name) and their sha256, or a
    DocumentRejected subclass naming what is wrong. The limit: MAX_DOCUMENT_BYTES, never above Converse's."""
    response = _get_pinned(bucket, entry)
    size = int(response["ContentLength"])
    if size > min(max_bytes, MAX_CONVERSE_DOCUMENT_BYTES):
        response["Body"].close()
        if size > MAX_CONVERSE_DOCUMENT_BYTES:
            limit = f"Converse's limit of {MAX_CONVERSE_DOCUMENT_BYTES} bytes per document"
        else:
            limit = f"the limit of {max_bytes} bytes (MAX_DOCUMENT_BYTES)"
        raise DocumentTooLarge(f"{size} bytes is over {limit}")
    data = response["Body"].read()
    digest = hashlib.sha256(data).hexdigest()
    if entry.sha256 is not None and digest != entry.sha256:
        raise DocumentChanged(f"sha256 of s3://{bucket}/{entry.key} differs from the manifest's")
    return ReadDocument(
        document=DocumentInput(data=data, format=detect_format(data), name=block_name(entry.index)),
        sha256=digest,
    )


# ------------------------------------------------------------------------------------------ model step

_REFUSALS: dict[str, type[ModelCallRefused]] = {
    cls.__name__: cls for cls in (ModelAccessDenied, ModelNotAvailable, ModelRequestInvalid)
}


def _check_breaker(job_id: str, model_id: str) -> None:
    """Fail at once, without a model call, while the job's model breaker is open (docs/design.md)."""
    breaker = storage.get_model_breaker(job_id)
    if breaker is None or breaker.model_id != model_id or breaker.open_until <= utc_now():
        return
    refusal = _REFUSALS.get(breaker.error, ModelCallRefused)
    raise refusal(
        f"not called: the job's model breaker is open until {breaker.open_until} (opened by document "
        f"{breaker.document_id}): {breaker.message}"
    )


def _open_breaker(event: ProcessDocumentEvent, model_id: str, refusal: ModelCallRefused) -> None:
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    until = now + dt.timedelta(seconds=get_settings().model_breaker_seconds)
    storage.put_model_breaker(
        ModelBreaker(
            job_id=event.job_id,
            model_id=model_id,
            error=type(refusal).__name__,
            message=str(refusal),
            document_id=event.document.document_id,
            opened_at=now.isoformat().replace("+00:00", "Z"),
            open_until=until.isoformat().replace("+00:00", "Z"),
        )
    )
    logger.error("model breaker opened", extra={"error": type(refusal).__name__, "model_id": model_id})


def _journal_attempt(
    event: ProcessDocumentEvent,
    provider: ModelProvider,
    error: ModelError,
    *,
    call_id: str,
    started_at: str,
    duration_ms: int,
) -> None:
    """A call that did not finish is journalled too (model-attempts/): the journal holds every attempt."""
    storage.put_model_attempt(
        ModelAttemptRecord(
            call_id=call_id,
            job_id=event.job_id,
            document_id=event.document.document_id,
            provider=provider.system,
            model_id=provider.model_id,
            error=type(error).__name__,
            message=str(error),
            retryable=not isinstance(error, ModelCallRefused),
            retry_count=event.retry_count,
            redrive_count=event.redrive_count,
            started_at=started_at,
            finished_at=utc_now(),
            duration_ms=duration_ms,
        )
    )


def finished_call(
    provider: ModelProvider, document: DocumentInput, prompt: Prompt, call_id: str
) -> ExtractionRecord:
    """One model call that finished: its facts, the extraction's failure, or the model's refusal of the
    document itself (Bedrock's ValidationException about it: this document's rejection, not the job's
    failure). A call that did not finish (a ModelError) propagates."""
    try:
        response = provider.extract(document, prompt.text)
    except ExtractionFailed as failure:
        return ExtractionRecord(
            call_id=call_id,
            ok=False,
            error=failure.error_name,
            reason=failure.reason,
            model_id=failure.model_id or provider.model_id,
            input_tokens=failure.input_tokens,
            output_tokens=failure.output_tokens,
        )
    except (DocumentUnreadable, DocumentTooLong) as refused:
        return ExtractionRecord(
            call_id=call_id,
            ok=False,
            error=refused.error_name,
            reason=refused.reason,
            model_id=provider.model_id,
        )
    return ExtractionRecord(
        call_id=call_id,
        ok=True,
        facts=response.facts,
        model_id=response.model_id,
        input_tokens=response.input_tokens,
        output_tokens=response.output_tokens,
    )


def call_outcome(record: ExtractionRecord) -> ModelCallOutcome:
    """How a finished call is journalled: ok, or why it gave no facts."""
    if record.ok:
        return "ok"
    if record.error == DocumentTooLong.__name__:
        return "DocumentTooLong"
    return "DocumentUnreadable" if record.error == DocumentUnreadable.__name__ else "ExtractionFailed"


def journal_call(
    event: ProcessDocumentEvent,
    provider: ModelProvider,
    prompt: Prompt,
    record: ExtractionRecord,
    outcome: ModelCallOutcome,
    *,
    started_at: str,
    duration_ms: int,
) -> None:
    """A finished model call into the journal (model-calls/), with its output."""
    storage.put_model_call(
        ModelCallRecord(
            call_id=record.call_id,
            job_id=event.job_id,
            document_id=event.document.document_id,
            provider=provider.system,
            model_id=record.model_id,
            prompt_version=prompt.version,
            prompt_sha256=prompt.sha256,
            input_tokens=record.input_tokens,
            output_tokens=record.output_tokens,
            outcome=outcome,
            facts=record.facts,
            reason=record.reason,
            retry_count=event.retry_count,
            started_at=started_at,
            finished_at=utc_now(),
            duration_ms=duration_ms,
        )
    )


def _extract_once(
    event: ProcessDocumentEvent,
    manifest: JobManifest,
    document: DocumentInput,
    provider: ModelProvider,
    context: LambdaContext,
) -> ExtractionRecord:
    """The body of the durable ``extract`` step: one real model call, journalled before the step completes.

    If the journal already holds a finished call for this document (the process died after the call but before
    the step's record was saved), its output is reused: a finished model call is never made again.
    """
    entry = event.document
    journal = storage.list_model_calls(event.job_id, entry.document_id)
    if journal:
        logger.info("reusing the journalled model call", extra={"model_call_id": journal[-1].call_id})
        with span("model call", job_id=event.job_id, step="model_call") as replayed:
            replayed.outcome = "replayed"
            replayed.set_attributes(model_call_id=journal[-1].call_id, replayed=True)
        return journal[-1].to_extraction()
    versions = manifest.versions
    _check_breaker(event.job_id, provider.model_id)
    prompt = load_prompt(versions.prompt_version)
    if prompt.sha256 != versions.prompt_sha256:
        logger.warning(
            "prompt file changed since the job was prepared",
            extra={"pinned_sha256": versions.prompt_sha256, "current_sha256": prompt.sha256},
        )
    fault_point(
        "before_model_call",
        event.options,
        event.retry_count,
        redrive_count=event.redrive_count,
        document_index=entry.index,
        context=context,
    )

    now = time.time()
    stamp = f"{time.strftime('%Y%m%dT%H%M%S', time.gmtime(now))}{int(now * 1000) % 1000:03d}Z"
    call_id = f"{stamp}-{uuid.uuid4().hex[:8]}"
    started_at, started = utc_now(), time.monotonic()
    with span("model call", job_id=event.job_id, step="model_call") as call_span:
        try:
            record = finished_call(provider, document, prompt, call_id)
        except ModelError as error:
            duration_ms = int((time.monotonic() - started) * 1000)
            if error.call_made:
                _journal_attempt(
                    event, provider, error, call_id=call_id, started_at=started_at, duration_ms=duration_ms
                )
            logger.warning(
                "model call did not finish",
                extra={"model_call_id": call_id, "outcome": type(error).__name__, "duration_ms": duration_ms},
            )
            if isinstance(error, ModelCallRefused):
                _open_breaker(event, provider.model_id, error)
            raise  # the span ends as ERROR with the error's name
        duration_ms = int((time.monotonic() - started) * 1000)

        attributes = genai_attributes(
            system=provider.system,
            operation=provider.operation,
            model_id=record.model_id,
            input_tokens=record.input_tokens,
            output_tokens=record.output_tokens,
        )
        outcome = call_outcome(record)
        call_span.outcome = outcome
        call_span.set_attributes(
            **attributes,
            model_call_id=call_id,
            **{
                "gen_ai.provider.name": provider.system,
                "gen_ai.response.finish_reasons": [finish_reason(record)],
            },
        )
    record_model_call(attributes, outcome=outcome, duration_ms=duration_ms, call_id=call_id)
    journal_call(event, provider, prompt, record, outcome, started_at=started_at, duration_ms=duration_ms)
    fault_point(
        "after_model_call",
        event.options,
        event.retry_count,
        redrive_count=event.redrive_count,
        document_index=entry.index,
        context=context,
    )
    return record


def finish_reason(record: ExtractionRecord) -> str:
    """The OpenTelemetry ``gen_ai.response.finish_reasons`` entry: ``length`` for a reply cut off at the token
    limit, ``stop`` for a reply that ended on its own (valid or not: a bad reply is still a finished one)."""
    return "length" if record.reason and "cut off" in record.reason else "stop"


# --------------------------------------------------------------------------------- customer lookup step


def lookup_customer(customer_id: str, settings: Settings) -> CustomerLookup:
    response = aws.dynamodb_client().get_item(
        TableName=settings.reference_table_name, Key={"table": {"S": "customers"}, "key": {"S": customer_id}}
    )
    item = response.get("Item")
    if item is None:
        return CustomerLookup(customer_id=customer_id, found=False)
    data = {name: _deserializer.deserialize(value) for name, value in item.items()}
    return CustomerLookup(customer_id=customer_id, found=True, customer=CustomerRecord.model_validate(data))


# ------------------------------------------------------------------------------------------- the flow


def _store(result: DocumentResult, event: ProcessDocumentEvent, context: LambdaContext) -> DocumentOutcome:
    with span("store", job_id=event.job_id, step="store") as stored:
        stored.set_attributes(status=result.status, error=result.error)
        return _store_result(result, event, context)


def _store_result(
    result: DocumentResult, event: ProcessDocumentEvent, context: LambdaContext
) -> DocumentOutcome:
    index = event.document.index
    fault_point(
        "before_store_result",
        event.options,
        event.retry_count,
        redrive_count=event.redrive_count,
        document_index=index,
        context=context,
    )
    storage.put_result(result)
    fault_point(
        "after_store_result",
        event.options,
        event.retry_count,
        redrive_count=event.redrive_count,
        document_index=index,
        context=context,
    )
    logger.info("document result stored", extra={"status": result.status, "error": result.error})
    return outcome_of(result)


def process_document(
    event: ProcessDocumentEvent, context: LambdaContext, *, provider: ModelProvider | None = None
) -> DocumentOutcome:
    entry = event.document
    logger.append_keys(job_id=event.job_id, document_id=entry.document_id, retry_count=event.retry_count)
    with span(
        "document",
        job_id=event.job_id,
        step="document",
        document_id=entry.document_id,
        attempt=event.retry_count,
        redrive_count=event.redrive_count,
        attributes={"document_index": entry.index},
    ) as document_span:
        outcome = _process(event, context, provider)
        document_span.outcome = outcome.status
        return outcome


def _process(
    event: ProcessDocumentEvent, context: LambdaContext, provider: ModelProvider | None
) -> DocumentOutcome:
    settings = get_settings()
    entry = event.document
    existing = storage.get_result(event.job_id, entry.document_id)
    if existing is not None:
        logger.info("result already stored; returning it", extra={"status": existing.status})
        with span("store", job_id=event.job_id, step="store") as replayed:
            replayed.outcome = "replayed"
            replayed.set_attributes(status=existing.status, replayed=True)
        return outcome_of(existing)

    manifest = load_manifest(event.job_id)
    versions = manifest.versions

    digest: str | None = None
    detected: DocumentFormat | None = None

    def result(**fields: object) -> DocumentResult:
        return DocumentResult.model_validate(
            {
                "job_id": event.job_id,
                "document_id": entry.document_id,
                "key": entry.key,
                "index": entry.index,
                "versions": versions,
                "format": detected,
                "processed_at": utc_now(),
                "sha256": digest,
                **fields,
            }
        )

    try:
        pinned = read_document(manifest.job.source_bucket, entry, settings.max_document_bytes)
    except DocumentRejected as rejection:
        return _store(
            result(status="rejected", error=rejection.error_name, reason=rejection.reason), event, context
        )

    read, digest, detected = pinned.document, pinned.sha256, pinned.document.format
    ids = {"job_id": event.job_id, "document_id": entry.document_id}
    model = provider or get_model_provider(
        settings, versions.model_id, time_left=lambda: context.get_remaining_time_in_millis() / 1000
    )
    ran: set[str] = set()  # the durable steps whose body ran in this invocation (else: their record reused)

    def extract() -> ExtractionRecord:
        ran.add("extract")
        return _extract_once(event, manifest, read, model, context)

    with span("extract", job_id=event.job_id, step="extract") as extract_span:
        extraction = durable.run_step(
            "extract", ids=ids, fn=extract, result_model=ExtractionRecord, context=context
        )
        extract_span.outcome = "ok" if extraction.ok else extraction.error or "ExtractionFailed"
        extract_span.set_attributes(durable_record_reused="extract" not in ran)
    if not extraction.ok or extraction.facts is None:
        return _store(
            result(
                status="rejected",
                error=extraction.error or ExtractionFailed.__name__,
                reason=extraction.reason,
                model_call_id=extraction.call_id,
            ),
            event,
            context,
        )

    facts = extraction.facts

    def lookup_step() -> CustomerLookup:
        ran.add("customer_lookup")
        return lookup_customer(facts.customer_id, settings)

    with span("customer_lookup", job_id=event.job_id, step="customer_lookup") as lookup_span:
        lookup = durable.run_step(
            "customer_lookup", ids=ids, fn=lookup_step, result_model=CustomerLookup, context=context
        )
        lookup_span.outcome = "found" if lookup.found else "UnknownCustomer"
        lookup_span.set_attributes(durable_record_reused="customer_lookup" not in ran)
    if not lookup.found or lookup.customer is None:
        return _store(
            result(
                status="rejected",
                facts=facts,
                error=UnknownCustomer.__name__,
                reason=f"customer {facts.customer_id} is not in the customers table",
                model_call_id=extraction.call_id,
            ),
            event,
            context,
        )
    return _store(
        result(status="extracted", facts=facts, customer=lookup.customer, model_call_id=extraction.call_id),
        event,
        context,
    )


def clear_caches() -> None:
    _cached_manifest.cache_clear()
