"""A job's batch input records: one JSON Lines file of one record per document, in the folder of its part's
batch job (functions/batch_inference/plan.py), written by the children of WriteBatchRecords (docs/batch.md).
The record is the Converse request the on-demand path would send (functions/inference/converse.py
``converse_body``), the document's bytes in base64 as Converse's JSON carries them."""

from __future__ import annotations

import base64
import json
from typing import Any

from functions import s3_json, storage
from functions.batch_inference.output_records import record_id
from functions.batch_inference.payloads import RecordWritten, WriteRecordEvent
from functions.batch_inference.plan import plan_of
from functions.errors import DocumentRejected
from functions.inference.call_specs import extract_spec
from functions.inference.converse import converse_body
from functions.logic.process_document import load_definition, load_manifest, read_document
from functions.logic.window_extraction import windows_of
from functions.reading.documents import DocumentInput
from functions.settings import get_settings


def model_input(document: DocumentInput, system: str, user: str) -> dict[str, Any]:
    """The Converse body of the call as JSON: each document or image block's bytes in base64."""
    settings = get_settings()
    body = converse_body(document, system, user, settings.model_max_tokens, settings.model_temperature)
    for block in body["messages"][0]["content"]:
        for kind in ("document", "image"):
            if kind in block:
                raw = block[kind]["source"]["bytes"]
                block[kind]["source"] = {"bytes": base64.b64encode(raw).decode("ascii")}
    return body


def write_record(event: WriteRecordEvent) -> RecordWritten:
    """The document's input record (the extraction of its one class), written once; none for a document the
    review rejects before any model call (missing, changed, too large, no definition)."""
    entry, settings = event.document, get_settings()
    batch_plan = plan_of(event.job_id)
    if batch_plan is None:  # PlanBatchJobs runs before WriteBatchRecords: no plan, no batch job to write for
        return RecordWritten(document_id=entry.document_id, record_id=None)
    key = storage.batch_input_key(event.job_id, batch_plan.part_of(entry.index), entry.document_id)
    if s3_json.exists(key):
        return RecordWritten(document_id=entry.document_id, record_id=record_id(entry.document_id), key=key)
    manifest = load_manifest(event.job_id)
    bundle = load_definition(manifest.versions)
    if bundle is None or len(bundle.classes) != 1:
        return RecordWritten(document_id=entry.document_id, record_id=None)
    try:
        pinned = read_document(
            manifest.job.source_bucket,
            entry,
            settings.max_document_bytes,
            bundle.definition.read,
            bundle.definition.max_pages,
        )
        # a long PDF is read on demand, window by window (docs/design.md, "Page windows"): no batch record
        windowed = windows_of(
            pinned.document, pinned.sha256, manifest.versions.model_id, bundle.definition.window_pages
        )
    except DocumentRejected:
        return RecordWritten(document_id=entry.document_id, record_id=None)
    if windowed:
        return RecordWritten(document_id=entry.document_id, record_id=None)
    spec = extract_spec(bundle, next(iter(bundle.classes)), manifest.versions, pinned.document)
    line = {
        "recordId": record_id(entry.document_id),
        "modelInput": model_input(pinned.document, spec.system, spec.user),
    }
    s3_json.put_bytes(key, (json.dumps(line) + "\n").encode("utf-8"), content_type="application/jsonl")
    return RecordWritten(document_id=entry.document_id, record_id=line["recordId"], key=key)
