"""The per-batch strategy's Lambda handler: a Distributed Map child with an ItemBatcher reviews its batch of
documents and stores their results together at the end, so the batch is the unit of durability.

Deployed to the local cloud by the experiment (docagent/drills/experiment/cloud.py) next to the product's own
functions, with the same code asset, environment and role as ProcessDocument; the product's PrepareJob,
BuildReport, CreateTicket and VerifyJob run around it unchanged. Per document it does the product's work
with the product's code (read, offline model call, customer lookup, one DocumentResult), but nothing is
durable before the batch ends: no idempotency record, no journal reused. Each model call is still recorded
under ``model-calls/`` so the experiment can count repeated calls; nothing here reads those records back.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from functions import storage
from functions.errors import DocumentRejected
from functions.faults import fault_point
from functions.logic.list_documents import pinned_prompt
from functions.logic.process_document import (
    call_outcome,
    finished_call,
    journal_call,
    load_manifest,
    lookup_customer,
    read_document,
)
from functions.model import get_model_provider
from functions.models import DocumentResult, ProcessDocumentEvent, utc_now
from functions.settings import get_settings


def _review(event: ProcessDocumentEvent, context: Any) -> DocumentResult:
    settings = get_settings()
    manifest = load_manifest(event.job_id)
    entry = event.document
    fields: dict[str, Any] = {
        "job_id": event.job_id,
        "document_id": entry.document_id,
        "key": entry.key,
        "index": entry.index,
        "versions": manifest.versions,
        "processed_at": utc_now(),
    }
    try:
        document = read_document(manifest.job.source_bucket, entry, settings.max_document_bytes).document
    except DocumentRejected as rejection:
        return DocumentResult.model_validate(
            {**fields, "status": "rejected", "error": rejection.error_name, "reason": rejection.reason}
        )
    prompt = pinned_prompt(manifest.versions, settings)
    provider = get_model_provider(settings, manifest.versions.model_id)
    call_id, started_at, started = f"batch-{uuid.uuid4().hex[:12]}", utc_now(), time.monotonic()
    record = finished_call(provider, document, prompt, call_id)
    journal_call(
        event,
        provider,
        prompt,
        record,
        call_outcome(record),
        started_at=started_at,
        duration_ms=int((time.monotonic() - started) * 1000),
    )
    facts, reason = record.facts, record.reason
    # The product's fault point, at the same place: after the model call, before the result is stored.
    fault_point(
        "before_store_result",
        event.options,
        event.retry_count,
        redrive_count=event.redrive_count,
        document_index=entry.index,
        context=context,
    )
    if facts is None:
        return DocumentResult.model_validate(
            {**fields, "status": "rejected", "error": record.error, "reason": reason}
        )
    lookup = lookup_customer(facts.customer_id, settings)
    if not lookup.found or lookup.customer is None:
        return DocumentResult.model_validate(
            {
                **fields,
                "status": "rejected",
                "facts": facts,
                "error": "UnknownCustomer",
                "reason": f"customer {facts.customer_id} is not in the customers table",
            }
        )
    return DocumentResult.model_validate(
        {**fields, "status": "extracted", "facts": facts, "customer": lookup.customer}
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
        storage.put_result(result)
    return {"documents": len(results), "first_index": results[0].index if results else None}
