"""The per-batch strategy's Lambda handler: a Distributed Map child with an ItemBatcher reviews its batch of
documents and stores their results together at the end, so the batch is the unit of durability.

Deployed to the local cloud by the experiment (docagent/drills/experiment/cloud.py) next to the product's own
functions, with the same code asset, environment and role as ProcessDocument; the product's PrepareJob,
BuildReport, CreateTicket and VerifyJob run around it unchanged. Per document it does the product's work
with the product's code (read, the pinned definition's model calls and checks, one DocumentResult), but
nothing is durable before the batch ends: no idempotency record, no journal reused. Each model call is still
recorded under ``model-calls/`` so the experiment can count repeated calls; nothing here reads them back.
"""

from __future__ import annotations

import datetime as dt
import time
import uuid
from typing import Any

from functions import s3_json
from functions.checks import references
from functions.checks.outcomes import decide, run_checks
from functions.definition.job_spec import UNKNOWN_CLASS_ERROR, LookupCheck
from functions.durability.faults import fault_point
from functions.errors import DocumentRejected
from functions.inference import ModelProvider, get_model_provider
from functions.inference.call_specs import classify_spec, extract_spec, unknown_class_reason
from functions.inference.calls import CallSpec, finished_call, journal_call
from functions.inference.evidence import split
from functions.inference.prompts import CLASS_KEY
from functions.logic.process_document import (
    DEFINITION_MISSING_ERROR,
    load_definition,
    load_manifest,
    read_document,
)
from functions.payloads.common import utc_now
from functions.payloads.document import DocumentResult, ProcessDocumentEvent
from functions.payloads.model_calls import ExtractionRecord, LookupRecord
from functions.reading.documents import DocumentInput
from functions.settings import get_settings


def _call(
    event: ProcessDocumentEvent, provider: ModelProvider, document: DocumentInput, spec: CallSpec
) -> ExtractionRecord:
    """One model call, journalled (so the experiment counts it), never reused."""
    call_id, started_at, started = f"batch-{uuid.uuid4().hex[:12]}", utc_now(), time.monotonic()
    record = finished_call(provider, document, spec, call_id)
    duration_ms = int((time.monotonic() - started) * 1000)
    journal_call(event, provider, spec, record, started_at=started_at, duration_ms=duration_ms)
    return record


def _lookup(check: LookupCheck, key: str) -> LookupRecord:
    row = references.lookup(check.table, key)
    return LookupRecord(table=check.table, key=key, found=row is not None, row=row)


def _review(event: ProcessDocumentEvent, context: Any) -> DocumentResult:
    settings = get_settings()
    manifest = load_manifest(event.job_id)
    versions, entry = manifest.versions, event.document
    fields: dict[str, Any] = {
        "job_id": event.job_id,
        "document_id": entry.document_id,
        "key": entry.key,
        "index": entry.index,
        "versions": versions,
        "processed_at": utc_now(),
    }
    bundle = load_definition(versions)
    if bundle is None:
        return DocumentResult.model_validate(
            {**fields, "status": "rejected", "error": DEFINITION_MISSING_ERROR, "reason": "no definition"}
        )
    try:
        document = read_document(manifest.job.source_bucket, entry, settings.max_document_bytes).document
    except DocumentRejected as rejection:
        return DocumentResult.model_validate(
            {**fields, "status": "rejected", "error": rejection.error_name, "reason": rejection.reason}
        )
    provider = get_model_provider(settings, versions.model_id)
    class_name: Any = next(iter(bundle.classes))
    if len(bundle.classes) > 1:
        classification = _call(event, provider, document, classify_spec(bundle, versions, document))
        class_name = (classification.fields or {}).get(CLASS_KEY)
        if not classification.ok or class_name not in bundle.classes:
            error = classification.error if not classification.ok else UNKNOWN_CLASS_ERROR
            reason = (
                classification.reason if not classification.ok else unknown_class_reason(bundle, class_name)
            )
            return DocumentResult.model_validate(
                {**fields, "status": "rejected", "error": error, "reason": reason}
            )
    record = _call(event, provider, document, extract_spec(bundle, class_name, versions, document))
    # The product's fault point, at the same place: after the model call, before the result is stored.
    fault_point(
        "before_store_result",
        event.options,
        event.retry_count,
        job_id=event.job_id,
        redrive_count=event.redrive_count,
        document_index=entry.index,
        context=context,
    )
    fields.update(class_name=class_name, model_call_id=record.call_id)
    if record.fields is None:
        return DocumentResult.model_validate(
            {**fields, "status": "rejected", "error": record.error, "reason": record.reason}
        )
    extracted, _ = split(record.fields)  # the model's quotes apart (the experiment grounds nothing)
    checks, attached = run_checks(
        bundle.class_bundle(class_name).spec.checks, extracted, dt.datetime.now(dt.UTC).date(), _lookup
    )
    decision = decide(checks)
    return DocumentResult.model_validate(
        {
            **fields,
            "status": decision.status,
            "error": decision.error,
            "reason": decision.reason,
            "fields": extracted,
            "attached": attached,
            "checks": checks,
        }
    )


def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """``{"items": [{"job_id", "options", "document"}, ...], "retry_count", "redrive_count"}``."""
    results = [
        _review(
            ProcessDocumentEvent.model_validate(
                {**item, "retry_count": event["retry_count"], "redrive_count": event["redrive_count"]}
            ),
            context,
        )
        for item in event["items"]
    ]
    for result in results:  # the batch's only durable write: every result, at the end
        s3_json.put_result(result)
    return {"documents": len(results), "first_index": results[0].index if results else None}
