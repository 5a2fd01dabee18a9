"""process_document: one document of a job through its pinned definition (functions/definition/job_spec.py):
read and validated, classified when the definition has several classes (a durable model step), its fields
extracted (a durable model step), its class's checks run (each lookup a durable step), and exactly one stored
DocumentResult: extracted (accepted), review or rejected.

A bad document is a *result* (rejected, with its reason), never a failure of the Map child: the function
returns normally so other documents are unaffected. Only infrastructure problems (and crashes) fail the
invocation, and the retry then resumes from the durable steps: a finished model call is never made again.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, TypeVar

from botocore.exceptions import ClientError
from pydantic import BaseModel

from functions import aws, s3_json, storage
from functions.batch_inference.output_records import BatchReplies
from functions.checks import references
from functions.checks.fields import row_columns
from functions.checks.outcomes import decide, run_checks
from functions.definition.job_spec import UNKNOWN_CLASS_ERROR, DefinitionBundle, LookupCheck, short_version
from functions.durability import durable
from functions.durability.faults import fault_point
from functions.errors import (
    DocumentChanged,
    DocumentMissing,
    DocumentRejected,
    DocumentTooLarge,
    ExtractionFailed,
    InvalidJobRequest,
)
from functions.evidence.grounded_decision import evidence_of, grounded_decision
from functions.inference import ModelProvider, get_model_provider
from functions.inference.call_specs import classify_spec, extract_spec, unknown_class_reason
from functions.inference.calls import CallSpec, call_once, clear_journal
from functions.inference.cascade import cascaded, check_models_allowed, escalate_spec, first_model, models_of
from functions.inference.evidence import split
from functions.inference.prompts import CLASS_KEY
from functions.logic.window_extraction import Windows, extract_windows, windows_of
from functions.observability import logger
from functions.payloads.common import SourceFormat, utc_now
from functions.payloads.document import DocumentOutcome, DocumentResult, ProcessDocumentEvent, WindowCall
from functions.payloads.job import JobManifest, JobVersions, ManifestEntry
from functions.payloads.model_calls import ExtractionRecord, LookupRecord
from functions.payloads.ocr import OcrSummary
from functions.reading import page_texts, pdf_pages, sections
from functions.reading.documents import DocumentInput, block_name, document_input
from functions.reading.ocr.step import document_cost_usd, grounding_texts
from functions.reading.pdf_layers import ReadMode
from functions.settings import get_settings
from functions.spans import span

ResultT = TypeVar("ResultT", bound=BaseModel)

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext
    from mypy_boto3_s3.type_defs import GetObjectOutputTypeDef

# The outcome of a document of a job that pins no definition (or a definition version that is not published).
DEFINITION_MISSING_ERROR = "DefinitionMissing"


@functools.lru_cache(maxsize=32)
def _cached_manifest(bucket: str, job_id: str) -> JobManifest:
    """Manifests never change once written, so a warm container reads each job's manifest once."""
    manifest = s3_json.get_manifest(job_id)
    if manifest is None:
        raise InvalidJobRequest(f"job {job_id} has no manifest; was it prepared?")
    return manifest


def load_manifest(job_id: str) -> JobManifest:
    return _cached_manifest(get_settings().bucket_name, job_id)


@functools.lru_cache(maxsize=32)
def _cached_definition(bucket: str, name: str, sha256: str) -> DefinitionBundle | None:
    return s3_json.get_definition(name, sha256)


def load_definition(versions: JobVersions) -> DefinitionBundle | None:
    """The definition bundle the job pinned (a published version never changes, so a warm container reads it
    once), or None: the job pins none, or that version is not published."""
    if versions.definition is None or versions.definition_sha256 is None:
        return None
    bundle = _cached_definition(get_settings().bucket_name, versions.definition, versions.definition_sha256)
    if bundle is None:
        _cached_definition.cache_clear()  # not cached: it may be published yet
    return bundle


def definition_missing_reason(versions: JobVersions) -> str:
    if versions.definition is None or versions.definition_sha256 is None:
        return "the job pins no job definition (prepared before definitions existed?): start it again"
    return (
        f"definition {versions.definition} version {short_version(versions.definition_sha256)} is not "
        "published in the job bucket (docagent definition publish)"
    )


def outcome_of(result: DocumentResult, bundle: DefinitionBundle | None) -> DocumentOutcome:
    columns = row_columns(bundle, result.class_name) if bundle is not None else []
    return DocumentOutcome(
        document_id=result.document_id,
        status=result.status,
        result_key=storage.result_key(result.job_id, result.document_id),
        error=result.error,
        row=result.report_row(columns),
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
        if s3_json.is_not_found(error) or code == "NoSuchVersion":
            pinned = f" (version {entry.version_id})" if entry.version_id else ""
            raise DocumentMissing(f"{where}{pinned} does not exist") from None
        raise


def read_document(
    bucket: str, entry: ManifestEntry, max_bytes: int, read: ReadMode = "auto", max_pages: int | None = None
) -> ReadDocument:
    """The pinned bytes as the model receives them (format from content, neutral name) and their sha256, or a
    DocumentRejected subclass naming what is wrong. Read only up to MAX_DOCUMENT_BYTES; each block kind's
    Converse limit is checked once the format is known (functions/reading/block_limits.py)."""
    response = _get_pinned(bucket, entry)
    size = int(response["ContentLength"])
    if size > max_bytes:
        response["Body"].close()
        raise DocumentTooLarge(f"{size} bytes is over the limit of {max_bytes} bytes (MAX_DOCUMENT_BYTES)")
    data = response["Body"].read()
    digest = hashlib.sha256(data).hexdigest()
    if entry.sha256 is not None and digest != entry.sha256:
        raise DocumentChanged(f"sha256 of s3://{bucket}/{entry.key} differs from the manifest's")
    return ReadDocument(
        document=document_input(data, block_name(entry.index), read, max_pages),
        sha256=digest,
    )


# ------------------------------------------------------------------------------------------- the flow


def _store_result(result: DocumentResult, event: ProcessDocumentEvent, context: LambdaContext) -> None:
    index = event.document.index
    fault_point(
        "before_store_result",
        event.options,
        event.retry_count,
        job_id=event.job_id,
        redrive_count=event.redrive_count,
        document_index=index,
        context=context,
    )
    s3_json.put_result(result)
    fault_point(
        "after_store_result",
        event.options,
        event.retry_count,
        job_id=event.job_id,
        redrive_count=event.redrive_count,
        document_index=index,
        context=context,
    )
    logger.info("document result stored", extra={"status": result.status, "error": result.error})


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
        try:
            outcome = _process(event, context, provider)
        finally:
            pdf_pages.release()  # the PDF a packet's slices were cut from
            page_texts.release()  # its page texts and boxes as the grounding read them
        document_span.outcome = outcome.status
        return outcome


def _process(
    event: ProcessDocumentEvent, context: LambdaContext, provider: ModelProvider | None
) -> DocumentOutcome:
    entry = event.document
    existing = s3_json.get_result(event.job_id, entry.document_id)
    manifest = load_manifest(event.job_id)
    bundle = load_definition(manifest.versions)
    if existing is not None:
        logger.info("result already stored; returning it", extra={"status": existing.status})
        with span("store", job_id=event.job_id, step="store") as replayed:
            replayed.outcome = "replayed"
            replayed.set_attributes(status=existing.status, replayed=True)
        return outcome_of(existing, bundle)
    return DocumentRun(event, context, manifest, bundle).process(provider)


class DocumentRun:
    """A document's way through its definition; ``ran``: the durable steps whose body ran in this call."""

    def __init__(
        self,
        event: ProcessDocumentEvent,
        context: LambdaContext,
        manifest: JobManifest,
        bundle: DefinitionBundle | None,
    ) -> None:
        self.event, self.context, self.manifest, self.bundle = event, context, manifest, bundle
        self.ids = {"job_id": event.job_id, "document_id": event.document.document_id}
        self.ran: set[str] = set()
        self.digest: str | None = None
        self.detected: SourceFormat | None = None
        self.calls: list[ExtractionRecord] = []
        self.provider: ModelProvider | None = None  # a test's model for every call (else the settings')
        self.ocr: OcrSummary | None = None  # the pages read by OCR (functions/reading/ocr/step.py)

    def result(self, **fields: object) -> DocumentResult:
        entry = self.event.document
        return DocumentResult.model_validate(
            {
                "job_id": self.event.job_id,
                "document_id": entry.document_id,
                "key": entry.key,
                "index": entry.index,
                "versions": self.manifest.versions,
                "format": self.detected,
                "processed_at": utc_now(),
                "sha256": self.digest,
                "model_cost_usd": document_cost_usd(self.calls, self.ocr),
                "ocr": self.ocr,
                **fields,
            }
        )

    def store(self, **fields: object) -> DocumentOutcome:
        result = self.result(**fields)
        with span("store", job_id=self.event.job_id, step="store") as stored:
            stored.set_attributes(status=result.status, error=result.error)
            _store_result(result, self.event, self.context)
        return outcome_of(result, self.bundle)

    def time_left(self) -> float:
        """Seconds left in this invocation."""
        return self.context.get_remaining_time_in_millis() / 1000

    def step(self, name: str, fn: Callable[[], ResultT], result_model: type[ResultT]) -> ResultT:
        def body() -> ResultT:
            self.ran.add(name)
            return fn()

        return durable.run_step(name, ids=self.ids, fn=body, result_model=result_model, context=self.context)

    def model_step(
        self,
        spec: CallSpec,
        document: DocumentInput | Callable[[], DocumentInput],
        model: ModelProvider,
        step: str | None = None,
    ) -> ExtractionRecord:
        # a page window's own step: extract-w0021 (functions/reading/page_windows.py); a packet's section or
        # page window's: extract-s0001-0002 (functions/reading/sections.py). ``document`` may be made when the
        # step runs.
        name = step or spec.journal_name

        def call() -> ExtractionRecord:
            sent = document if isinstance(document, DocumentInput) else document()
            return call_once(self.event, spec, sent, model, self.context)

        with span(name, job_id=self.event.job_id, step=name) as step_span:
            record = self.step(name, call, ExtractionRecord)
            step_span.outcome = "ok" if record.ok else record.error or ExtractionFailed.__name__
            step_span.set_attributes(durable_record_reused=name not in self.ran)
        self.calls.append(record)
        return record

    def process(
        self, provider: ModelProvider | None, chosen: sections.Sections | None = None
    ) -> DocumentOutcome:
        settings, entry, versions = get_settings(), self.event.document, self.manifest.versions
        self.provider = provider
        if self.bundle is None:
            return self.store(
                status="rejected", error=DEFINITION_MISSING_ERROR, reason=definition_missing_reason(versions)
            )
        try:
            check_models_allowed(self.bundle, settings.models_allowed)  # before any call (ModelNotAllowed)
            pinned = read_document(
                self.manifest.job.source_bucket,
                entry,
                settings.max_document_bytes,
                self.bundle.definition.read,
                self.bundle.definition.max_pages,
            )
            # #41 page windows: a PDF longer than one call of the model reading first is read in windows
            reading = first_model(self.bundle, versions.model_id)  # #42: a definition's cheap model first
            windows = windows_of(pinned.document, pinned.sha256, reading, self.bundle.definition.window_pages)
        except DocumentRejected as rejection:
            return self.store(status="rejected", error=rejection.error_name, reason=rejection.reason)
        document, self.digest, self.detected = pinned.document, pinned.sha256, pinned.document.format
        model = provider or get_model_provider(
            settings,
            reading,
            time_left=lambda: self.context.get_remaining_time_in_millis() / 1000,
        )
        if self.event.options.inference != "on_demand":  # its batch job's output records answer first
            model = BatchReplies(model, self.event.job_id, entry.index, entry.document_id)
        class_name, classify_call_id = next(iter(self.bundle.classes)), None
        # ---- packets (job.json split: pages): functions/reading/sections.py --------------------------------
        if sections.splits(self.bundle, document):
            packet = sections.split_packet(self, document, model, chosen)
            if packet.outcome is not None:  # rejected, or a packet of several sections, each stored
                return packet.outcome
            class_name, classify_call_id = packet.class_name, packet.classify_call_id  # one section: as one
        # ---- end of packets --------------------------------------------------------------------------------
        elif len(self.bundle.classes) > 1:
            first = windows.first(document)  # a windowed PDF: classified by its first window
            classification = self.model_step(classify_spec(self.bundle, versions, first), first, model)
            classify_call_id = classification.call_id
            if not classification.ok or classification.fields is None:
                return self.store(
                    status="rejected",
                    error=classification.error or ExtractionFailed.__name__,
                    reason=classification.reason,
                    classify_call_id=classify_call_id,
                )
            named = classification.fields.get(CLASS_KEY)
            if not isinstance(named, str) or named not in self.bundle.classes:
                return self.store(
                    status="rejected",
                    error=UNKNOWN_CLASS_ERROR,
                    reason=unknown_class_reason(self.bundle, named),
                    classify_call_id=classify_call_id,
                )
            class_name = named
        # ---- a packet class (its split: pages): functions/reading/sections.py ------------------------------
        if sections.is_packet_class(self.bundle, class_name):
            packet = sections.split_packet(self, document, model, chosen)
            if packet.outcome is not None:  # rejected, or a packet of several sections, each stored
                return packet.outcome
            class_name, classify_call_id = packet.class_name, packet.classify_call_id  # one section: as one
        # ---- end of a packet class -------------------------------------------------------------------------
        return self.store(**self.extracted(class_name, classify_call_id, document, model, windows=windows))

    def extracted(
        self,
        class_name: str,
        classify_call_id: str | None,
        document: DocumentInput,
        model: ModelProvider,
        *,
        section_id: str | None = None,
        windows: Windows | None = None,
    ) -> dict[str, object]:
        """The result's fields of a document (or a packet's section) of ``class_name``: extracted (a
        durable model step, or one a page window of a long PDF), checked and grounded."""
        assert self.bundle is not None
        versions = self.manifest.versions
        texts = functools.cache(lambda: grounding_texts(self, document, section_id))  # read once
        pages = texts()
        printed = pages is not None and pages.printed  # a page read by OCR: every value quoted
        spec = replace(
            extract_spec(self.bundle, class_name, versions, document, has_page_texts=printed),
            section_id=section_id,
        )
        window_calls: list[WindowCall] = []
        cascade = None
        if windows:  # >>> #41 page windows: one durable step a window, merged by the class's schema
            windowed = extract_windows(
                self, spec, windows, model, bundle=self.bundle, pages=texts, time_left=self.time_left
            )
            extraction, window_calls = windowed.record, windowed.calls
        else:
            extraction = self.model_step(spec, document, model)
        models = models_of(self.bundle)
        if models is not None and not windows:  # #42 cheaper model first (functions/inference/cascade.py)
            strong = self.provider or get_model_provider(
                get_settings(),
                models[1],
                time_left=lambda: self.context.get_remaining_time_in_millis() / 1000,
            )
            extraction, cascade = cascaded(
                models,
                extraction,
                self.bundle.class_bundle(class_name),
                texts,
                lambda: self.model_step(escalate_spec(spec), document, strong),
            )
        ids = {
            "class_name": class_name,
            "model_call_id": extraction.call_id,
            "classify_call_id": classify_call_id,
            "cascade": cascade,
            "windows": window_calls,
        }
        if not extraction.ok or extraction.fields is None:
            error = extraction.error or ExtractionFailed.__name__
            return {"status": "rejected", "error": error, "reason": extraction.reason, **ids}
        class_bundle = self.bundle.class_bundle(class_name)
        fields, quotes = split(extraction.fields)
        checks, attached = run_checks(
            class_bundle.spec.checks, fields, dt.datetime.now(dt.UTC).date(), self.lookup
        )
        evidence = evidence_of(class_bundle, fields, quotes, texts(), checks)
        decision = grounded_decision(decide(checks), class_bundle, evidence)
        return {
            "status": decision.status,
            "error": decision.error,
            "reason": decision.reason,
            "fields": fields,
            "evidence": evidence,
            "attached": attached,
            "checks": checks,
            **ids,
        }

    def lookup(self, check: LookupCheck, key: str) -> LookupRecord:
        name = f"lookup-{check.name}"

        def look() -> LookupRecord:
            row = references.lookup(check.table, key)
            return LookupRecord(table=check.table, key=key, found=row is not None, row=row)

        with span(name, job_id=self.event.job_id, step=name) as lookup_span:
            # a read: no INPROGRESS record, the first answer stored wins (docs/design.md "Durable steps")
            record, reused = durable.run_read_step(name, ids=self.ids, fn=look, result_model=LookupRecord)
            if not reused:
                self.ran.add(name)
            lookup_span.outcome = "found" if record.found else check.error
            lookup_span.set_attributes(durable_record_reused=reused)
        return record


def clear_caches() -> None:
    _cached_manifest.cache_clear()
    _cached_definition.cache_clear()
    clear_journal()
