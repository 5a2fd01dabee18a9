"""build_report: one row per manifest document from the stored results, plus child-failure details from the
Distributed Map's result files for documents that have no result. Deterministic, so a repeat writes the same
report and returns the same output."""

from __future__ import annotations

import json
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from functions import storage
from functions.errors import InvalidJobRequest
from functions.faults import fault_point, job_options
from functions.models import (
    BuildReportEvent,
    ChildFailure,
    DocumentResult,
    FaultPointName,
    MapRunInfo,
    MapRunSummary,
    Report,
    ReportRow,
    ReportSummary,
)
from functions.observability import logger

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

_READ_WORKERS = 16


def _document_id_of(entry: dict[str, Any]) -> str | None:
    """The document id of a result-file entry, from the child's input (a JSON string or an object)."""
    raw = entry.get("Input")
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError:
            return None
    if not isinstance(raw, dict):
        return None
    document = raw.get("document")
    if isinstance(document, dict) and isinstance(document.get("document_id"), str):
        return str(document["document_id"])
    return None


def read_map_run(map_run: MapRunInfo) -> tuple[MapRunSummary, dict[str, ChildFailure]]:
    """Counts and failures from ResultWriter output (manifest.json, then the files it lists).

    Every part may be absent (a local interpreter writes only manifest.json); absence is tolerated and logged.
    """
    summary = MapRunSummary(map_run_arn=map_run.MapRunArn)
    failures: dict[str, ChildFailure] = {}
    details = map_run.ResultWriterDetails
    if details is None:
        return summary, failures
    manifest = storage.get_json_or_none(details.Key, bucket=details.Bucket)
    if not isinstance(manifest, dict):
        logger.warning("map run manifest not found", extra={"key": details.Key})
        return summary, failures
    summary.result_files_read = True
    bucket = str(manifest.get("DestinationBucket") or details.Bucket)
    files = manifest.get("ResultFiles") or {}
    for status in ("SUCCEEDED", "FAILED", "PENDING"):
        for file_info in files.get(status) or []:
            key = file_info.get("Key") if isinstance(file_info, dict) else None
            entries = storage.get_json_or_none(key, bucket=bucket) if key else None
            if not isinstance(entries, list):
                logger.warning("map run result file missing or unreadable", extra={"key": key})
                continue
            for entry in entries:
                if not isinstance(entry, dict):
                    continue
                if status == "SUCCEEDED":
                    summary.succeeded += 1
                    continue
                summary.failed += status == "FAILED"
                summary.pending += status == "PENDING"
                document_id = _document_id_of(entry)
                if document_id is not None:
                    failures[document_id] = ChildFailure(
                        document_id=document_id,
                        status=str(entry.get("Status") or status),
                        error=entry.get("Error"),
                        cause=entry.get("Cause"),
                        execution_arn=entry.get("ExecutionArn"),
                    )
    return summary, failures


def _row(result: DocumentResult) -> ReportRow:
    facts = result.facts
    return ReportRow(
        document_id=result.document_id,
        index=result.index,
        key=result.key,
        status=result.status,
        error=result.error,
        reason=result.reason,
        customer_id=facts.customer_id if facts else None,
        invoice_number=facts.invoice_number if facts else None,
        amount=f"{facts.amount:.2f}" if facts else None,
        currency=facts.currency if facts else None,
        category=facts.category if facts else None,
    )


def build_report(event: BuildReportEvent, context: LambdaContext | None = None) -> ReportSummary:
    job_id = event.job_id
    logger.append_keys(job_id=job_id)
    options = job_options(job_id, event.options)

    def fault(name: FaultPointName) -> None:
        fault_point(name, options, event.retry_count, redrive_count=event.redrive_count, context=context)

    fault("before_report")
    manifest = storage.get_manifest(job_id)
    if manifest is None:
        raise InvalidJobRequest(f"job {job_id} has no manifest; was it prepared?")

    entries = manifest.entries
    with ThreadPoolExecutor(max_workers=max(1, min(_READ_WORKERS, len(entries)))) as pool:
        results = list(pool.map(lambda entry: storage.get_result(job_id, entry.document_id), entries))
    map_run, child_failures = read_map_run(event.map_run)

    rows: list[ReportRow] = []
    failed: list[ChildFailure] = []
    totals: dict[str, Decimal] = {}
    for entry, result in zip(entries, results, strict=True):
        if result is not None:
            rows.append(_row(result))
            if result.status == "extracted" and result.facts is not None:
                totals[result.facts.currency] = (
                    totals.get(result.facts.currency, Decimal(0)) + result.facts.amount
                )
            continue
        failure = child_failures.get(entry.document_id) or ChildFailure(
            document_id=entry.document_id,
            status="NO_RESULT",
            error="NoResult",
            cause="no result was stored and the map run recorded no failure for this document",
        )
        failed.append(failure)
        rows.append(
            ReportRow(
                document_id=entry.document_id,
                index=entry.index,
                key=entry.key,
                status="failed",
                error=failure.error,
                reason=failure.cause,
            )
        )

    rejected_rows = [row for row in rows if row.status == "rejected"]
    report = Report(
        job_id=job_id,
        versions=manifest.versions,
        documents=len(entries),
        extracted=sum(row.status == "extracted" for row in rows),
        rejected=len(rejected_rows),
        failed=len(failed),
        rejection_reasons=dict(sorted(Counter(str(row.error) for row in rejected_rows).items())),
        totals_by_currency={currency: f"{amount:.2f}" for currency, amount in sorted(totals.items())},
        rows=rows,
        rejected_documents=rejected_rows,
        failed_documents=failed,
        map_run=map_run,
    )
    key = storage.report_key(job_id)
    storage.put_json(key, report)
    fault("after_report")
    logger.info(
        "report written",
        extra={
            "documents": report.documents,
            "extracted": report.extracted,
            "rejected": report.rejected,
            "failed": report.failed,
        },
    )
    return ReportSummary(
        report_key=key, documents=report.documents, extracted=report.extracted, rejected=report.rejected
    )
