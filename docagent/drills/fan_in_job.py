"""A synthetic finished job, written straight into a bucket: what the report's and the verification's fan-in
read (docs/design.md, "Report by fan-in"), without running a document through the model.

For N documents: the manifest in parts (items/part-NNNNN.jsonl, their listing records, manifest.json pinning
a published definition), one stored result per document that has one, one journalled model call per
extracted or review result, and the Distributed Map's ResultWriter output (manifest.json and result files of
at most ``entries_per_file`` entries each, in the shape the local cloud writes). The documents are a fixed
mix, by index: extracted, review, rejected (two reasons), children that failed (with and without a stored
result), a child output without a row (the result is read), a pending child and a document nobody recorded.
Used by ``docagent bench --fan-in`` and by tests/unit/test_report_fan_in.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from functions import s3_json, storage
from functions.checks.fields import row_columns
from functions.definition.job_spec import DefinitionBundle
from functions.payloads.document import DocumentOutcome, DocumentResult
from functions.payloads.job import JobInfo, JobManifest, JobVersions, ListingPart, ManifestEntry
from functions.payloads.model_calls import ModelCallRecord
from functions.payloads.report import MapRunInfo

CURRENCIES = ("EUR", "USD", "GBP")
WRITERS = 16
BATCH = 512


@dataclass(frozen=True)
class SyntheticJob:
    job_id: str
    documents: int
    parts: int
    map_run: MapRunInfo
    objects_written: int
    bytes_written: int


def kind_of(index: int) -> str:
    """What happened to the document at ``index`` (a fixed mix, the same at every size)."""
    for modulus, remainder, kind in (
        (1000, 17, "unrecorded"),
        (1000, 11, "pending"),
        (500, 9, "no_row"),
        (200, 3, "failed_without_result"),
        (200, 5, "failed_with_result"),
        (50, 7, "rejected"),
        (50, 13, "review"),
    ):
        if index % modulus == remainder:
            return kind
    return "extracted"


def _entry(job_id: str, index: int) -> ManifestEntry:
    name = f"doc-{index:07d}.pdf"
    key = storage.uploaded_key(storage.incoming_prefix(job_id), name)
    return ManifestEntry(document_id=name, key=key, index=index, size=1000 + index % 97)


def _result(job_id: str, entry: ManifestEntry, kind: str, versions: JobVersions) -> DocumentResult:
    index = entry.index
    common: dict[str, Any] = {
        "job_id": job_id,
        "document_id": entry.document_id,
        "key": entry.key,
        "index": index,
        "versions": versions,
        "processed_at": "2026-12-04T00:00:00Z",
        "model_cost_usd": round(0.0012 + (index % 7) * 0.0001, 6),
    }
    if kind == "rejected":
        error = "DocumentEmpty" if index % 100 == 7 else "DocumentTooLarge"
        return DocumentResult(status="rejected", error=error, reason=f"{error} at {index}", **common)
    fields = {
        "invoice_number": f"INV-{index:07d}",
        "customer_id": f"C{index % 97:03d}",
        "amount": f"{index % 1000}.{index % 100:02d}",
        "currency": CURRENCIES[index % 3],
    }
    status = "review" if kind == "review" else "extracted"
    return DocumentResult(
        status=status, class_name="invoice", fields=fields, model_call_id=f"call-{index:07d}", **common
    )


def _call(job_id: str, result: DocumentResult) -> ModelCallRecord:
    assert result.model_call_id is not None
    return ModelCallRecord(
        call_id=result.model_call_id,
        job_id=job_id,
        document_id=result.document_id,
        class_name=result.class_name,
        provider="synthetic",
        model_id=result.versions.model_id,
        prompt_version=result.versions.prompt_version,
        prompt_sha256=result.versions.prompt_sha256,
        input_tokens=1500,
        output_tokens=300,
        outcome="ok",
        fields=result.fields,
        retry_count=0,
        started_at="2026-12-04T00:00:00Z",
        finished_at="2026-12-04T00:00:01Z",
        duration_ms=1000,
    )


Put = Callable[[str, bytes], object]


class _Writer:
    """Objects written by ``put`` (key, body; by default PutObject through a pool of threads), counted."""

    def __init__(self, s3: Any, bucket: str, put: Put | None) -> None:
        self.s3, self.bucket, self.put = s3, bucket, put
        self.objects = self.bytes = 0
        self.batch: list[tuple[str, bytes]] = []

    def add(self, items: Iterator[tuple[str, bytes]]) -> None:
        """Objects written soon (in batches of BATCH through the pool; at once with ``put``)."""
        self.batch.extend(items)
        if self.put is not None or len(self.batch) >= BATCH:
            self.flush()

    def flush(self) -> None:
        batch, self.batch = self.batch, []
        self.put_all(iter(batch))

    def put_all(self, items: Iterator[tuple[str, bytes]]) -> None:
        if self.put is not None:
            for key, body in items:
                self.put(key, body)
                self.objects += 1
                self.bytes += len(body)
            return

        def put(item: tuple[str, bytes]) -> int:
            self.s3.put_object(Bucket=self.bucket, Key=item[0], Body=item[1])
            return len(item[1])

        with ThreadPoolExecutor(max_workers=WRITERS) as pool:
            for size in pool.map(put, items):
                self.objects += 1
                self.bytes += size


def _write_manifest(
    writer: _Writer,
    job_id: str,
    bucket: str,
    documents: int,
    *,
    versions: JobVersions,
    part_size: int,
) -> list[str]:
    """The items in parts, their listing records and manifest.json; returns the parts' keys."""
    parts: list[str] = []
    for number, start in enumerate(range(0, documents, part_size)):
        chunk = [_entry(job_id, index) for index in range(start, min(start + part_size, documents))]
        body = "".join(entry.model_dump_json() + "\n" for entry in chunk).encode()
        key = storage.items_part_key(job_id, number)
        last = start + part_size >= documents
        record = ListingPart(
            part=number,
            first_index=start,
            count=len(chunk),
            bytes=len(body),
            pages=1,
            complete=True,
            last=last,
        )
        writer.put_all(
            iter([(key, body), (storage.listing_part_key(job_id, number), s3_json.to_json_bytes(record))])
        )
        parts.append(key)
    manifest = JobManifest(
        job=JobInfo(
            job_id=job_id,
            source_bucket=bucket,
            prefix=storage.incoming_prefix(job_id),
            request_sha256="0" * 64,
        ),
        versions=versions,
        parts=parts,
        document_count=documents,
        items_key=parts[0] if len(parts) == 1 else storage.items_key(job_id),
    )
    writer.put_all(iter([(storage.manifest_key(job_id), s3_json.to_json_bytes(manifest))]))
    return parts


def _child(
    arn: str,
    job_id: str,
    entry: ManifestEntry,
    kind: str,
    *,
    result: DocumentResult | None,
    columns: list[str],
) -> tuple[str, dict[str, Any]]:
    """The document's child as the ResultWriter records it: its status and entry."""
    child: dict[str, Any] = {
        "ExecutionArn": f"{arn.replace(':mapRun:', ':execution:')}:{entry.index}",
        "Input": json.dumps({"job_id": job_id, "document": entry.model_dump(mode="json")}),
        "InputDetails": {"Included": True},
    }
    if kind == "pending":
        return "PENDING", {**child, "Status": "PENDING"}
    if kind.startswith("failed"):
        cause = f"ProcessDocument failed at {entry.index}"
        return "FAILED", {**child, "Status": "FAILED", "Error": "States.TaskFailed", "Cause": cause}
    assert result is not None
    outcome = DocumentOutcome(
        document_id=entry.document_id,
        status=result.status,
        result_key=storage.result_key(job_id, entry.document_id),
        error=result.error,
        row=None if kind == "no_row" else result.report_row(columns),
    )
    return "SUCCEEDED", {**child, "Status": "SUCCEEDED", "Output": outcome.model_dump_json()}


def write_fan_in_job(
    s3: Any,
    bucket: str,
    job_id: str,
    documents: int,
    *,
    bundle: DefinitionBundle,
    versions: JobVersions,
    part_size: int = 20_000,
    entries_per_file: int = 50_000,
    clean: bool = False,
    progress: Callable[[str], None] | None = None,
    put: Put | None = None,
) -> SyntheticJob:
    """The job (``clean``: every document extracted, a job that verifies; else the mix of kind_of), written
    in one pass over the documents: what is held is one part and one result file's entries.
    ``put``: how an object is written (the bench writes into its in-process local cloud's store)."""
    writer = _Writer(s3, bucket, put)
    say = progress or (lambda _: None)
    parts = _write_manifest(writer, job_id, bucket, documents, versions=versions, part_size=part_size)
    say(f"manifest: {len(parts)} parts")

    columns = row_columns(bundle, "invoice")
    arn = f"arn:aws:states:us-east-1:123456789012:mapRun:DocumentReview/documents:{job_id}-run"
    files: dict[str, list[dict[str, Any]]] = {"FAILED": [], "PENDING": [], "SUCCEEDED": []}
    pending: dict[str, list[str]] = {status: [] for status in files}

    def flush(status: str) -> None:
        if not pending[status]:
            return
        body = ("[" + ",".join(pending[status]) + "]").encode()
        key = storage.map_run_result_file_key(arn, status, len(files[status]))
        writer.put_all(iter([(key, body)]))
        files[status].append({"Key": key, "Size": len(body)})
        pending[status].clear()

    def stored(result: DocumentResult) -> Iterator[tuple[str, bytes]]:
        yield storage.result_key(job_id, result.document_id), s3_json.to_json_bytes(result)
        if result.model_call_id is not None:
            key = storage.model_call_key(job_id, result.document_id, result.model_call_id)
            yield key, s3_json.to_json_bytes(_call(job_id, result))

    results = 0
    for index in range(documents):
        entry, kind = _entry(job_id, index), "extracted" if clean else kind_of(index)
        result = None
        if kind not in ("unrecorded", "pending", "failed_without_result"):
            result = _result(job_id, entry, kind, versions)
            writer.add(stored(result))
            results += 1
        if kind == "unrecorded":
            continue
        status, child = _child(arn, job_id, entry, kind, result=result, columns=columns)
        pending[status].append(json.dumps(child))
        if len(pending[status]) >= entries_per_file:
            flush(status)
    for status in files:
        flush(status)
    writer.flush()
    say(f"results: {results}")
    manifest_key = storage.map_run_manifest_key(arn)
    result_manifest = {"DestinationBucket": bucket, "MapRunArn": arn, "ResultFiles": files}
    writer.put_all(iter([(manifest_key, json.dumps(result_manifest).encode())]))
    say(f"result files: {sum(len(group) for group in files.values())}")
    map_run = MapRunInfo.model_validate(
        {"MapRunArn": arn, "ResultWriterDetails": {"Bucket": bucket, "Key": manifest_key}}
    )
    return SyntheticJob(job_id, documents, len(parts), map_run, writer.objects, writer.bytes)
