"""The report by fan-in (docs/design.md, "Report by fan-in"): three steps, each in bounded memory.

1. SummarizeResults (``summarize``): one streaming pass over the ResultWriter's result files (one entry held
   at a time), counting the Map Run and routing each row, or each failure, to its partition (one per manifest
   part) in objects of about ROUTED_FLUSH_BYTES; writes plan.json.
2. ReportPartitions, a Distributed Map, one child per partition (``partial``): the partition's entries and
   routed rows give its rows (rows_for, as the previous path: a stored result read for each document the
   result files do not cover), the review decisions applied, its counts, totals, cost, rejected rows and
   failures (a ReportPartial) and its table segments (CSV, JSON Lines).
3. BuildReport (``merge_report``): the partials added up, the segments joined into rows.csv and rows.jsonl
   (multipart, server-side copies where S3 allows), report.json written: for a job of at most
   INLINE_ROWS_MAX documents the same report as the previous path (build_report.build_report, still used when
   there is no plan: an execution started before these steps), plus its ``table``.

Each step is deterministic: a retry or a redrive writes the same objects and returns the same output.
"""

from __future__ import annotations

import bisect
import csv
import io
import json
from collections import Counter
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from itertools import islice
from typing import TYPE_CHECKING

from functions import aws, s3_json, s3_streams, spend, storage
from functions.checks.fields import row_columns
from functions.definition.action_specs import ExportAction
from functions.definition.job_spec import DefinitionBundle
from functions.durability.faults import fault_point, job_options
from functions.errors import InvalidJobRequest
from functions.logic.build_report import (
    counts_of,
    pinned_definition,
    read_results,
    result_entries,
    routed,
    rows_for,
)
from functions.observability import logger
from functions.payloads.common import FaultPointName
from functions.payloads.fan_in import (
    Partition,
    PartitionDone,
    PartitionEvent,
    ReportCounts,
    ReportPartial,
    ReportPlan,
    RoutedItem,
    SummarizeEvent,
)
from functions.payloads.job import JobManifest, ManifestEntry
from functions.payloads.report import (
    BuildReportEvent,
    ChildFailure,
    MapRunSummary,
    Report,
    ReportRow,
    ReportSummary,
    ReportTable,
)
from functions.reviews import apply_decisions

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

ROUTED_FLUSH_BYTES = 1024 * 1024  # a partition's routed rows are written when they reach this size
# Up to this many documents report.json carries the rows inline, as before the fan-in (the cap of
# max_documents before issue 44); above it the table (rows.jsonl, rows.csv) is the report's rows.
INLINE_ROWS_MAX = 100_000
RESULTS_READ_BATCH = 1000  # stored results held at once while a results.jsonl is written
_RESULT_READERS = 16
_FIRST_LINE_BYTES = 8192
ROW_COLUMNS = (
    "document_id",
    "index",
    "key",
    "status",
    "class_name",
    "error",
    "reason",
    "model_call_id",
    "model_cost_usd",
)


# ------------------------------------------------------------------------------------------- partitions


def _first_document_id(key: str) -> str | None:
    """The document id of a part's first entry (one ranged read, the whole part if its line is longer)."""
    s3 = aws.s3_client()
    bucket = s3_json.bucket_name()
    body = s3.get_object(Bucket=bucket, Key=key, Range=f"bytes=0-{_FIRST_LINE_BYTES - 1}")["Body"].read()
    if b"\n" not in body and len(body) == _FIRST_LINE_BYTES:
        body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
    line = body.split(b"\n", 1)[0]
    return ManifestEntry.model_validate_json(line).document_id if line.strip() else None


def partitions_of(job_id: str, manifest: JobManifest) -> list[Partition]:
    """One partition per manifest part (its listing record gives its first index and count: P small reads),
    or one for a manifest with inline entries; each with its range of result names for the orphan check,
    bounded by the parts' first documents (P ranged reads)."""
    if manifest.entries or not manifest.parts:
        return [Partition(partition=0, key=None, first_index=0, count=len(manifest.entries))]
    partitions: list[Partition] = []
    first = 0
    for number, key in enumerate(manifest.parts):
        record = s3_json.get_json_or_none(storage.listing_part_key(job_id, number))
        count = (
            int(record["count"]) if isinstance(record, dict) and isinstance(record.get("count"), int) else -1
        )
        if count < 0 or storage.items_part_key(job_id, number) != key:
            count = len(s3_json.parse_items(s3_json.get_bytes(key)))
        partitions.append(Partition(partition=number, key=key, first_index=first, count=count))
        first += count
    names = [f"{document_id}.json" for p in partitions[1:] if (document_id := _first_document_id(str(p.key)))]
    bounds = sorted(set(names))
    edges: list[str | None] = [None, *bounds]
    for position, partition in enumerate(partitions):
        if position < len(edges):
            partition.list_after = edges[position]
            partition.list_until = edges[position + 1] if position + 1 < len(edges) else None
        else:  # fewer distinct bounds than partitions: an empty range
            partition.list_after = partition.list_until = bounds[-1]
    return partitions


def partition_entries(manifest: JobManifest, partition: Partition) -> list[ManifestEntry]:
    if partition.key is None:
        return list(manifest.entries)
    return s3_json.parse_items(s3_json.get_bytes(partition.key))


# -------------------------------------------------------------------------------------------- summarize


class _Router:
    """Rows and failures routed to their partition by manifest index, written in objects of about
    ROUTED_FLUSH_BYTES (so at most P times that is held)."""

    def __init__(self, job_id: str, partitions: list[Partition]) -> None:
        self.job_id = job_id
        self.starts = [partition.first_index for partition in partitions]
        self.buffers: dict[int, bytearray] = {}
        self.sequence: Counter[int] = Counter()
        self.objects = 0

    def add(self, index: int, item: RoutedItem) -> None:
        partition = max(bisect.bisect_right(self.starts, index) - 1, 0)
        buffer = self.buffers.setdefault(partition, bytearray())
        buffer += item.model_dump_json(exclude_none=True).encode() + b"\n"
        if len(buffer) >= ROUTED_FLUSH_BYTES:
            self.flush(partition)

    def flush(self, partition: int) -> None:
        buffer = self.buffers.pop(partition, None)
        if not buffer:
            return
        key = storage.report_rows_key(self.job_id, partition, self.sequence[partition])
        s3_json.put_bytes(key, bytes(buffer), content_type="application/jsonl")
        self.sequence[partition] += 1
        self.objects += 1

    def close(self) -> None:
        for partition in sorted(self.buffers):
            self.flush(partition)


def summarize_results(event: SummarizeEvent, context: LambdaContext | None = None) -> ReportPlan:
    job_id = event.job_id
    logger.append_keys(job_id=job_id)
    manifest = s3_json.get_manifest(job_id)
    if manifest is None:
        raise InvalidJobRequest(f"job {job_id} has no manifest; was it prepared?")
    partitions = partitions_of(job_id, manifest)
    router = _Router(job_id, partitions)
    summary = MapRunSummary(map_run_arn=event.map_run.MapRunArn)
    for status, entry in result_entries(event.map_run, summary, whole_files=False):
        for row, failure, index in routed(status, entry, summary):
            if index is not None:  # a failed child's input always carries its documents' indexes
                router.add(index, RoutedItem(row=row, failure=failure))
    router.close()
    for partition in partitions:
        partition.routed = router.sequence[partition.partition]
    plan = ReportPlan(map_run=summary, partitions=partitions)
    s3_json.put_json(storage.report_plan_key(job_id), plan)
    logger.info("results summarized", extra={"partitions": len(partitions), "routed_objects": router.objects})
    return plan


# ---------------------------------------------------------------------------------------------- partial


def table_columns(bundle: DefinitionBundle | None) -> list[str]:
    """The table's CSV header: the row's own fields, then every field a row of the definition can carry
    (each class's columns, then the totals' fields it has), each once."""
    columns = list(ROW_COLUMNS)
    if bundle is not None:
        for class_name in [*sorted(bundle.classes), None]:
            columns += [name for name in row_columns(bundle, class_name) if name not in columns]
    return columns


def _csv_lines(rows: list[ReportRow], columns: list[str], *, header: bool) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    if header:
        writer.writerow(columns)
    for row in rows:
        own = row.model_dump(mode="json", exclude={"fields"})
        cells = {**{name: row.fields.get(name) for name in row.fields}, **own}
        writer.writerow(["" if cells.get(name) is None else str(cells[name]) for name in columns])
    return out.getvalue().encode()


def _read_routed(job_id: str, partition: Partition) -> tuple[dict[str, ReportRow], dict[str, ChildFailure]]:
    """The rows and failures SummarizeResults routed to the partition: exactly the objects its plan counts
    (an earlier attempt's further objects, if any, are not read)."""
    rows: dict[str, ReportRow] = {}
    failures: dict[str, ChildFailure] = {}
    for sequence in range(partition.routed):
        key = storage.report_rows_key(job_id, partition.partition, sequence)
        for line in s3_json.get_bytes(key).splitlines():
            item = RoutedItem.model_validate_json(line)
            if item.row is not None:
                rows[item.row.document_id] = item.row
            elif item.failure is not None:
                failures[item.failure.document_id] = item.failure
    return rows, failures


def report_partition(event: PartitionEvent, context: LambdaContext | None = None) -> PartitionDone:
    job_id, partition = event.job_id, event.partition
    logger.append_keys(job_id=job_id, partition=partition.partition)
    manifest = s3_json.get_manifest(job_id)
    if manifest is None:
        raise InvalidJobRequest(f"job {job_id} has no manifest; was it prepared?")
    partial = compute_partial(
        job_id, manifest, partition, wait_for_review=bool(event.options.wait_for_review)
    )
    key = storage.report_partial_key(job_id, partition.partition)
    s3_json.put_json(key, partial)
    fault("after_report_partial", event, context)
    return PartitionDone(partition=partition.partition, key=key)


def fault(name: FaultPointName, event: PartitionEvent, context: LambdaContext | None) -> None:
    fault_point(
        name,
        job_options(event.job_id, event.options),
        event.retry_count,
        job_id=event.job_id,
        redrive_count=event.redrive_count,
        part=event.partition.partition,
        context=context,
    )


def exports_results(bundle: DefinitionBundle | None) -> bool:
    """Whether the definition exports the stored results as JSON Lines (an export action with ``jsonl``)."""
    return bundle is not None and any(
        isinstance(action, ExportAction) and "jsonl" in action.formats for action in bundle.definition.actions
    )


def result_lines(job_id: str, document_ids: Iterable[str]) -> Iterator[bytes]:
    """Each document's stored result as a canonical JSON line, in the order given (a document without one is
    left out), RESULTS_READ_BATCH read at a time by a few threads: the export's results.jsonl and its
    partitions' segments are these bytes."""

    def read(document_id: str) -> object:
        return s3_json.get_json_or_none(storage.result_key(job_id, document_id))

    ids = iter(document_ids)
    with ThreadPoolExecutor(max_workers=_RESULT_READERS) as pool:
        while batch := list(islice(ids, RESULTS_READ_BATCH)):
            found = [result for result in pool.map(read, batch) if result]
            yield "".join(json.dumps(r, sort_keys=True, separators=(",", ":")) + "\n" for r in found).encode()


def compute_partial(
    job_id: str, manifest: JobManifest, partition: Partition, *, wait_for_review: bool
) -> ReportPartial:
    """One partition's rows, counts and table segments (the segments written here)."""
    bundle = pinned_definition(manifest.versions)
    entries = partition_entries(manifest, partition)
    routed_rows, failures = _read_routed(job_id, partition)
    uncovered = [entry.document_id for entry in entries if entry.document_id not in routed_rows]
    results = read_results(job_id, uncovered)
    rows, failed = rows_for(entries, rows=routed_rows, results=results, failures=failures, bundle=bundle)
    if wait_for_review:
        rows = apply_decisions(job_id, rows, bundle)
    csv_body = _csv_lines(rows, table_columns(bundle), header=partition.partition == 0)
    jsonl_body = b"".join(row.model_dump_json().encode() + b"\n" for row in rows)
    s3_json.put_bytes(
        storage.report_segment_key(job_id, partition.partition, "csv"), csv_body, content_type="text/csv"
    )
    s3_json.put_bytes(
        storage.report_segment_key(job_id, partition.partition, "jsonl"),
        jsonl_body,
        content_type="application/jsonl",
    )
    results_bytes = None
    if exports_results(bundle):  # the export's results.jsonl, read here, by the partitions (docs/design.md)
        segment = storage.report_segment_key(job_id, partition.partition, "results.jsonl")
        with s3_streams.MultipartWriter(segment, content_type="application/jsonl") as out:
            for lines in result_lines(job_id, (row.document_id for row in rows)):
                out.write(lines)
            results_bytes = out.size
    return ReportPartial(
        partition=partition.partition,
        counts=counts_of(rows, failed, bundle),
        rejected_documents=[row for row in rows if row.status == "rejected"],
        failed_documents=failed,
        csv_bytes=len(csv_body),
        jsonl_bytes=len(jsonl_body),
        results_bytes=results_bytes,
    )


# ------------------------------------------------------------------------------------------------ merge


def add_counts(total: ReportCounts, part: ReportCounts) -> None:
    total.documents += part.documents
    total.extracted += part.extracted
    total.review += part.review
    total.rejected += part.rejected
    total.failed += part.failed
    total.sections += part.sections
    for reason, count in part.rejection_reasons.items():
        total.rejection_reasons[reason] = total.rejection_reasons.get(reason, 0) + count
    for name, groups in part.totals.items():
        merged = total.totals.setdefault(name, {})
        for group, value in groups.items():
            merged[group] = str(Decimal(merged.get(group, "0")) + Decimal(value))
    if part.cost_nano is not None:
        total.cost_nano = (total.cost_nano or 0) + part.cost_nano


def report_rows(report: Report) -> Iterator[ReportRow]:
    """Every row of the report, in index order, whatever the job's size: report.json's inline rows, or,
    above INLINE_ROWS_MAX (``table.inline`` false), the table's rows.jsonl streamed one row at a time."""
    if report.table is None or report.table.inline:
        yield from sorted(report.rows, key=lambda row: row.index)
        return
    for value in s3_streams.iter_json_values(report.table.jsonl_key):
        yield ReportRow.model_validate(value)


def read_plan(job_id: str) -> ReportPlan | None:
    data = s3_json.get_json_or_none(storage.report_plan_key(job_id))
    return None if data is None else ReportPlan.model_validate(data)


def _partial(
    job_id: str, manifest: JobManifest, partition: Partition, wait_for_review: bool
) -> ReportPartial:
    """The partition's partial as ReportPartitions wrote it; computed here if it is missing."""
    data = s3_json.get_json_or_none(storage.report_partial_key(job_id, partition.partition))
    if data is not None:
        return ReportPartial.model_validate(data)
    return compute_partial(job_id, manifest, partition, wait_for_review=wait_for_review)


def merge_report(
    event: BuildReportEvent, plan: ReportPlan, context: LambdaContext | None = None
) -> ReportSummary:
    job_id = event.job_id
    logger.append_keys(job_id=job_id)
    fault_point(
        "before_report",
        job_options(job_id, event.options),
        event.retry_count,
        job_id=job_id,
        redrive_count=event.redrive_count,
        context=context,
    )
    manifest = s3_json.get_manifest(job_id)
    if manifest is None:
        raise InvalidJobRequest(f"job {job_id} has no manifest; was it prepared?")
    wait = bool(event.options.wait_for_review)
    counts = ReportCounts()
    partials: list[ReportPartial] = []
    inline = manifest.count <= INLINE_ROWS_MAX
    for partition in plan.partitions:
        partial = _partial(job_id, manifest, partition, wait)
        add_counts(counts, partial.counts)
        # Above INLINE_ROWS_MAX only the counts are kept: the rows are the table's.
        if not inline:
            partial = partial.model_copy(update={"rejected_documents": [], "failed_documents": []})
        partials.append(partial)
    csv_key, jsonl_key = storage.report_table_key(job_id, "csv"), storage.report_table_key(job_id, "jsonl")
    segments = [p.partition for p in plan.partitions]
    s3_streams.join_objects(
        csv_key,
        [
            (storage.report_segment_key(job_id, n, "csv"), p.csv_bytes)
            for n, p in zip(segments, partials, strict=True)
        ],
        content_type="text/csv",
    )
    s3_streams.join_objects(
        jsonl_key,
        [
            (storage.report_segment_key(job_id, n, "jsonl"), p.jsonl_bytes)
            for n, p in zip(segments, partials, strict=True)
        ],
        content_type="application/jsonl",
    )
    results_key, results_bytes = None, None
    if partials and all(p.results_bytes is not None for p in partials):
        results_key = storage.report_results_key(job_id)
        results_bytes = s3_streams.join_objects(
            results_key,
            [
                (storage.report_segment_key(job_id, n, "results.jsonl"), p.results_bytes or 0)
                for n, p in zip(segments, partials, strict=True)
            ],
            content_type="application/jsonl",
        )
    rows = [ReportRow.model_validate(row) for row in s3_streams.iter_json_values(jsonl_key)] if inline else []
    report = Report(
        job_id=job_id,
        versions=manifest.versions,
        documents=counts.documents,
        extracted=counts.extracted,
        review=counts.review,
        rejected=counts.rejected,
        failed=counts.failed,
        sections=counts.sections,
        rejection_reasons=dict(sorted(counts.rejection_reasons.items())),
        totals={name: dict(sorted(groups.items())) for name, groups in counts.totals.items()},
        model_cost_usd=None if counts.cost_nano is None else spend.to_usd(counts.cost_nano),
        rows=rows,
        rejected_documents=[row for p in partials for row in p.rejected_documents] if inline else [],
        failed_documents=[failure for p in partials for failure in p.failed_documents] if inline else [],
        map_run=plan.map_run,
        table=ReportTable(
            csv_key=csv_key,
            jsonl_key=jsonl_key,
            rows=counts.documents,
            jsonl_segments=[p.jsonl_bytes for p in partials],
            inline=inline,
            results_key=results_key,
            results_bytes=results_bytes,
        ),
    )
    key = storage.report_key(job_id)
    assert report.table is not None
    s3_json.put_json(storage.report_table_index_key(job_id), report.table)
    s3_json.put_json(key, report)
    fault_point(
        "after_report",
        job_options(job_id, event.options),
        event.retry_count,
        job_id=job_id,
        redrive_count=event.redrive_count,
        context=context,
    )
    logger.info("report merged", extra={"partitions": len(partials), "documents": report.documents})
    return ReportSummary.of(key, report)
