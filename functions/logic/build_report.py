"""build_report: one row per manifest document, from the Distributed Map's result files (each succeeded
child's output carries its document's report row), plus child-failure details for documents that have none.

Work per invocation: the manifest, the ResultWriter's manifest.json and result files (1 + F reads, F the
number of result files), one read per document the result files do not cover (children that did not
succeed, at most the tolerated failures; none in a clean run), one write.
Deterministic, so a repeat writes the same report and returns the same output."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from functions import s3_json, s3_streams, spend, storage
from functions.checks.fields import row_columns
from functions.definition.job_spec import DefinitionBundle, Totals
from functions.durability.faults import fault_point, job_options
from functions.errors import InvalidJobRequest
from functions.observability import logger
from functions.payloads.common import DocumentStatus, FaultPointName
from functions.payloads.document import DocumentOutcome, DocumentResult
from functions.payloads.fan_in import ReportCounts
from functions.payloads.job import JobVersions, ManifestEntry
from functions.payloads.report import (
    BuildReportEvent,
    ChildFailure,
    MapRunInfo,
    MapRunSummary,
    Report,
    ReportRow,
    ReportSummary,
    SectionRow,
)
from functions.reviews import apply_decisions

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

_READ_WORKERS = 16


def _parsed(raw: Any) -> Any:
    """A result-file field: JSON in a string (as Step Functions writes it) or already parsed."""
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except json.JSONDecodeError:
            return None
    return raw


def document_refs_of(entry: dict[str, Any]) -> list[tuple[str, int | None]]:
    """The documents of a result-file entry, from the child's input (one document, or a batch's Items): each
    document id with its manifest index (None when the input does not carry it)."""
    raw = _parsed(entry.get("Input"))
    if not isinstance(raw, dict):
        return []
    items = raw.get("Items")
    children: list[Any] = items if isinstance(items, list) else [raw]
    refs: list[tuple[str, int | None]] = []
    for child in children:
        document = child.get("document") if isinstance(child, dict) else None
        if isinstance(document, dict) and isinstance(document.get("document_id"), str):
            index = document.get("index")
            refs.append((str(document["document_id"]), index if isinstance(index, int) else None))
    return refs


def _outcomes_of(entry: dict[str, Any]) -> list[DocumentOutcome]:
    """The DocumentOutcomes in a succeeded child's output (one, or a batch's list); malformed ones skipped."""
    raw = _parsed(entry.get("Output"))
    if isinstance(raw, dict) and isinstance(raw.get("outcomes"), list):
        raw = raw["outcomes"]
    outcomes = []
    for item in raw if isinstance(raw, list) else [raw]:
        try:
            outcomes.append(DocumentOutcome.model_validate(item))
        except ValidationError:
            continue
    return outcomes


@dataclass
class MapRunRead:
    """What the ResultWriter's files say: counts, each succeeded document's report row, each failure."""

    summary: MapRunSummary
    rows: dict[str, ReportRow] = field(default_factory=dict)
    failures: dict[str, ChildFailure] = field(default_factory=dict)


def read_map_run(map_run: MapRunInfo) -> MapRunRead:
    """Counts, rows and failures from ResultWriter output (manifest.json, then the files it lists).

    Reads 1 + F objects, F the number of result files (AWS starts a new file every 5 GB): never one per
    document.
    Every part may be absent (then the documents it would have covered are read one by one by the caller);
    absence is tolerated and logged.
    """
    read = MapRunRead(MapRunSummary(map_run_arn=map_run.MapRunArn))
    for status, entry in result_entries(map_run, read.summary, whole_files=True):
        for row, failure, _ in routed(status, entry, read.summary):
            if row is not None:
                read.rows[row.document_id] = row
            elif failure is not None:
                read.failures[failure.document_id] = failure
    return read


ResultEntry = tuple[str, dict[str, Any]]


def result_entries(
    map_run: MapRunInfo, summary: MapRunSummary, *, whole_files: bool
) -> Iterator[ResultEntry]:
    """Each entry of the ResultWriter's result files with its file's status (manifest.json first, then the
    files it lists, SUCCEEDED, FAILED, PENDING). ``whole_files``: each file parsed at once (the previous
    path), else streamed one entry at a time (the fan-in). Sets the summary's writer fields; a missing part
    is logged and skipped (the documents it would have covered are read one by one later)."""
    details = map_run.ResultWriterDetails
    if details is None:
        return
    manifest = s3_json.get_json_or_none(details.Key, bucket=details.Bucket)
    if not isinstance(manifest, dict):
        logger.warning("map run manifest not found", extra={"key": details.Key})
        return
    summary.result_files_read = True
    summary.result_writer_bucket, summary.result_writer_key = details.Bucket, details.Key
    bucket = str(manifest.get("DestinationBucket") or details.Bucket)
    files = manifest.get("ResultFiles") or {}
    for status in ("SUCCEEDED", "FAILED", "PENDING"):
        for file_info in files.get(status) or []:
            key = file_info.get("Key") if isinstance(file_info, dict) else None
            entries: Iterable[Any] | None
            if whole_files:
                parsed = s3_json.get_json_or_none(key, bucket=bucket) if key else None
                entries = parsed if isinstance(parsed, list) else None
            else:
                exists = bool(key) and s3_json.exists(str(key), bucket=bucket)
                entries = s3_streams.iter_json_values(str(key), bucket=bucket) if exists else None
            if entries is None:
                logger.warning("map run result file missing or unreadable", extra={"key": key})
                continue
            for entry in entries:
                if isinstance(entry, dict):
                    yield status, entry


Routed = tuple[ReportRow | None, ChildFailure | None, int | None]


def routed(status: str, entry: dict[str, Any], summary: MapRunSummary) -> Iterator[Routed]:
    """What one result-file entry says (counted in the summary): a succeeded child's rows (those naming their
    own document), or a failure per document of a child that did not succeed; each with its manifest index
    (None: a failed child's input without one)."""
    if status == "SUCCEEDED":
        summary.succeeded += 1
        for outcome in _outcomes_of(entry):
            if outcome.row is not None and outcome.row.document_id == outcome.document_id:
                yield outcome.row, None, outcome.row.index
        return
    summary.failed += status == "FAILED"
    summary.pending += status == "PENDING"
    for document_id, index in document_refs_of(entry):
        yield None, failure_of(status, entry, document_id), index


def failure_of(status: str, entry: dict[str, Any], document_id: str) -> ChildFailure:
    return ChildFailure(
        document_id=document_id,
        status=str(entry.get("Status") or status),
        error=entry.get("Error"),
        cause=entry.get("Cause"),
        execution_arn=entry.get("ExecutionArn"),
    )


def read_results(job_id: str, document_ids: list[str]) -> dict[str, DocumentResult | None]:
    """Stored results of the documents the result files do not cover (children that did not succeed, outputs
    of older code, a Map without ResultWriter): normally none."""
    if not document_ids:
        return {}
    with ThreadPoolExecutor(max_workers=min(_READ_WORKERS, len(document_ids))) as pool:
        found = pool.map(lambda document_id: s3_json.get_result(job_id, document_id), document_ids)
        return dict(zip(document_ids, found, strict=True))


def pinned_definition(versions: JobVersions) -> DefinitionBundle | None:
    if versions.definition is None or versions.definition_sha256 is None:
        return None
    return s3_json.get_definition(versions.definition, versions.definition_sha256)


def counted_parts(row: ReportRow, counts: list[DocumentStatus]) -> list[ReportRow | SectionRow]:
    """What of a row a total with these ``counts`` sums: the row itself when its status counts; a packet's
    sections whose own status counts, while its case outcome (if any) counts too (a case in review holds back
    every section of its packet). A failed row counts nowhere."""
    if row.sections is None:
        return [row] if row.status in counts else []
    if row.case is not None and row.case.status not in counts:
        return []
    return [section for section in row.sections if section.status in counts]


def add_totals(sums: dict[str, dict[str, Decimal]], totals: list[Totals], rows: list[ReportRow]) -> None:
    """Adds the rows to each of the definition's totals: its ``sum`` field over the rows (a packet's: its
    sections) whose outcome the total counts (``counted_parts``), by the value of its ``by`` field ("" without
    one). A value that is not a number adds nothing."""
    for total in totals:
        groups = sums.setdefault(total.name, {})
        for row in rows:
            for part in counted_parts(row, total.counts):
                value = part.fields.get(total.sum)
                group = "" if total.by is None else part.fields.get(total.by)
                if value is None or group is None:
                    continue
                try:
                    number = Decimal(value)
                except InvalidOperation:
                    continue
                if number.is_finite():
                    groups[group] = groups.get(group, Decimal(0)) + number


def totals_text(sums: dict[str, dict[str, Decimal]]) -> dict[str, dict[str, str]]:
    return {
        name: {group: str(total) for group, total in sorted(groups.items())} for name, groups in sums.items()
    }


def rows_for(
    entries: Iterable[ManifestEntry],
    *,
    rows: dict[str, ReportRow],
    results: dict[str, DocumentResult | None],
    failures: dict[str, ChildFailure],
    bundle: DefinitionBundle | None,
) -> tuple[list[ReportRow], list[ChildFailure]]:
    """One row per entry, in the entries' order: the row from the result files, else one rebuilt from the
    stored result, else a failed row with the child's failure (or NoResult); and the failures."""
    out: list[ReportRow] = []
    failed: list[ChildFailure] = []
    for entry in entries:
        result = results.get(entry.document_id)
        row = rows.get(entry.document_id)
        if row is None and result is not None:
            row = result.report_row(row_columns(bundle, result.class_name) if bundle is not None else [])
        if row is not None:
            out.append(row)
            continue
        failure = failures.get(entry.document_id) or ChildFailure(
            document_id=entry.document_id,
            status="NO_RESULT",
            error="NoResult",
            cause="no result was stored and the map run recorded no failure for this document",
        )
        failed.append(failure)
        out.append(
            ReportRow(
                document_id=entry.document_id,
                index=entry.index,
                key=entry.key,
                status="failed",
                error=failure.error,
                reason=failure.cause,
            )
        )
    return out, failed


def counts_of(
    rows: list[ReportRow], failed: list[ChildFailure], bundle: DefinitionBundle | None
) -> ReportCounts:
    rejected = [row for row in rows if row.status == "rejected"]
    sums: dict[str, dict[str, Decimal]] = {}
    add_totals(sums, bundle.definition.totals if bundle is not None else [], rows)
    costs = [spend.to_nano(row.model_cost_usd) for row in rows if row.model_cost_usd is not None]
    return ReportCounts(
        documents=len(rows),
        extracted=sum(row.status == "extracted" for row in rows),
        review=sum(row.status == "review" for row in rows),
        rejected=len(rejected),
        failed=len(failed),
        sections=sum(len(row.sections or []) for row in rows),
        rejection_reasons=dict(Counter(str(row.error) for row in rejected)),
        totals=totals_text(sums),
        cost_nano=sum(costs) if costs else None,
    )


def build_report(event: BuildReportEvent, context: LambdaContext | None = None) -> ReportSummary:
    job_id = event.job_id
    logger.append_keys(job_id=job_id)
    options = job_options(job_id, event.options)

    def fault(name: FaultPointName) -> None:
        fault_point(
            name,
            options,
            event.retry_count,
            job_id=job_id,
            redrive_count=event.redrive_count,
            context=context,
        )

    fault("before_report")
    manifest = s3_json.get_manifest(job_id)
    if manifest is None:
        raise InvalidJobRequest(f"job {job_id} has no manifest; was it prepared?")

    entries = s3_json.manifest_entries(manifest)
    bundle = pinned_definition(manifest.versions)
    read = read_map_run(event.map_run)
    uncovered = [entry.document_id for entry in entries if entry.document_id not in read.rows]
    results = read_results(job_id, uncovered)
    logger.info(
        "map run read", extra={"rows_from_result_files": len(read.rows), "results_read": len(results)}
    )

    rows, failed = rows_for(entries, rows=read.rows, results=results, failures=read.failures, bundle=bundle)

    if event.options.wait_for_review:  # the job waited for its review queue: the decisions count
        rows = apply_decisions(job_id, rows, bundle)
    counts = counts_of(rows, failed, bundle)  # the fan-in's partials count the same way (report_fan_in.py)
    report = Report(
        job_id=job_id,
        versions=manifest.versions,
        documents=len(entries),
        extracted=counts.extracted,
        review=counts.review,
        rejected=counts.rejected,
        failed=counts.failed,
        sections=counts.sections,
        rejection_reasons=dict(sorted(counts.rejection_reasons.items())),
        totals=counts.totals,
        model_cost_usd=None if counts.cost_nano is None else spend.to_usd(counts.cost_nano),
        rows=rows,
        rejected_documents=[row for row in rows if row.status == "rejected"],
        failed_documents=failed,
        map_run=read.summary,
    )
    key = storage.report_key(job_id)
    s3_json.put_json(key, report)
    fault("after_report")
    logger.info(
        "report written",
        extra={
            "documents": report.documents,
            "extracted": report.extracted,
            "review": report.review,
            "rejected": report.rejected,
            "failed": report.failed,
        },
    )
    return ReportSummary.of(key, report)
