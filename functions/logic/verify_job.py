"""verify_job: independent end-of-job checks, read straight from storage and the ticket system.

Nothing here trusts the earlier steps' outputs: results, report and tickets are re-read and compared with the
manifest. Any failed check raises JobVerificationFailed naming every failed check.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from functions import storage
from functions.errors import JobVerificationFailed
from functions.faults import fault_point, job_options
from functions.logic.create_ticket import client_deadline
from functions.models import DocumentResult, JobManifest, JobTicket, Report, Verification, VerifyJobEvent
from functions.observability import logger
from functions.settings import get_settings
from functions.tickets import TicketClient, get_ticket_client

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

_READ_WORKERS = 16
_SHOWN = 5


def _some(items: list[str]) -> str:
    shown = ", ".join(items[:_SHOWN])
    return shown + (f" (+{len(items) - _SHOWN} more)" if len(items) > _SHOWN else "")


class _Checks:
    def __init__(self) -> None:
        self.results: dict[str, str] = {}

    def record(self, name: str, problem: str | None) -> None:
        self.results[name] = "ok" if problem is None else f"failed: {problem}"

    @property
    def failed(self) -> dict[str, str]:
        return {name: value for name, value in self.results.items() if value != "ok"}


def _read_results(job_id: str, manifest: JobManifest) -> dict[str, Any]:
    """Raw result JSON per manifest document (None when missing), read in parallel."""

    def read(document_id: str) -> Any:
        return storage.get_json_or_none(storage.result_key(job_id, document_id))

    ids = [entry.document_id for entry in manifest.entries]
    with ThreadPoolExecutor(max_workers=max(1, min(_READ_WORKERS, len(ids)))) as pool:
        return dict(zip(ids, pool.map(read, ids), strict=True))


def _check_results(
    job_id: str, manifest: JobManifest, raw: dict[str, Any], checks: _Checks
) -> list[DocumentResult]:
    missing = [document_id for document_id, data in raw.items() if data is None]
    extra = sorted(set(storage.list_result_ids(job_id)) - set(raw))
    problem = None
    if missing or extra:
        problem = "; ".join(
            part
            for part in (
                f"{len(missing)} document(s) without a result: {_some(missing)}" if missing else "",
                f"{len(extra)} result(s) for documents not in the manifest: {_some(extra)}" if extra else "",
            )
            if part
        )
    checks.record("one_result_per_document", problem)

    valid: list[DocumentResult] = []
    invalid: list[str] = []
    for document_id, data in raw.items():
        if data is None:
            continue
        try:
            result = DocumentResult.model_validate(data)
        except ValidationError:
            invalid.append(document_id)
            continue
        if result.job_id != job_id or result.document_id != document_id:
            invalid.append(document_id)
            continue
        valid.append(result)
    checks.record("results_valid", f"invalid results: {_some(invalid)}" if invalid else None)
    return valid


def _check_journal(job_id: str, results: list[DocumentResult], checks: _Checks) -> None:
    """Every model call a result refers to is in the journal."""

    def journalled(result: DocumentResult) -> bool:
        if result.model_call_id is None:
            return True
        return storage.exists(storage.model_call_key(job_id, result.document_id, result.model_call_id))

    with ThreadPoolExecutor(max_workers=max(1, min(_READ_WORKERS, len(results)))) as pool:
        flags = list(pool.map(journalled, results))
    unjournalled = [result.document_id for result, ok in zip(results, flags, strict=True) if not ok]
    checks.record(
        "model_calls_journalled",
        f"results without a journalled model call: {_some(unjournalled)}" if unjournalled else None,
    )


def _check_report(
    event: VerifyJobEvent, manifest: JobManifest, results: list[DocumentResult], checks: _Checks
) -> None:
    data = storage.get_json_or_none(storage.report_key(event.job_id))
    if data is None:
        checks.record("report_matches", "report.json is missing")
        return
    try:
        report = Report.model_validate(data)
    except ValidationError:
        checks.record("report_matches", "report.json is not a valid report")
        return
    problems = []
    manifest_ids = [entry.document_id for entry in manifest.entries]
    if sorted(row.document_id for row in report.rows) != sorted(manifest_ids):
        problems.append("its rows do not cover exactly the manifest's documents")
    expected = {
        "documents": len(manifest_ids),
        "extracted": sum(result.status == "extracted" for result in results),
        "rejected": sum(result.status == "rejected" for result in results),
    }
    for name, value in expected.items():
        if getattr(report, name) != value:
            problems.append(f"{name} is {getattr(report, name)} in report.json, {value} in the results")
        if getattr(event.report, name) != value:
            problems.append(
                f"{name} is {getattr(event.report, name)} in the step output, {value} in the results"
            )
    if report.failed != 0 or report.documents != report.extracted + report.rejected:
        problems.append(f"{report.failed} document(s) failed")
    checks.record("report_matches", "; ".join(problems) or None)


def _check_ticket(event: VerifyJobEvent, client: TicketClient, checks: _Checks) -> None:
    reference = event.job_id
    tickets = client.find_by_reference(reference)
    problem = None
    if len(tickets) != 1:
        problem = f"expected exactly one ticket with reference {reference}, found {len(tickets)}"
    elif tickets[0].ticket_id != event.ticket.ticket_id or event.ticket.reference != reference:
        problem = (
            f"the ticket system has {tickets[0].ticket_id}, the step output says {event.ticket.ticket_id}"
        )
    else:
        stored = storage.get_json_or_none(storage.ticket_key(event.job_id))
        if stored is None:
            problem = "ticket.json is missing"
        elif JobTicket.model_validate(stored).ticket_id != tickets[0].ticket_id:
            problem = "ticket.json names another ticket"
    checks.record("exactly_one_ticket", problem)


def verify_job(
    event: VerifyJobEvent, *, client: TicketClient | None = None, context: LambdaContext | None = None
) -> Verification:
    settings = get_settings()
    logger.append_keys(job_id=event.job_id)
    fault_point(
        "before_verify",
        job_options(event.job_id, event.options),
        event.retry_count,
        redrive_count=event.redrive_count,
        context=context,
    )
    checks = _Checks()
    manifest = storage.get_manifest(event.job_id)
    if manifest is None:
        raise JobVerificationFailed(
            f"job {event.job_id} failed verification: manifest: manifest.json is missing"
        )
    raw = _read_results(event.job_id, manifest)
    results = _check_results(event.job_id, manifest, raw, checks)
    _check_journal(event.job_id, results, checks)
    _check_report(event, manifest, results, checks)
    deadline = None if context is None else client_deadline(context)
    _check_ticket(event, client or get_ticket_client(settings, deadline=deadline), checks)

    failed = checks.failed
    if failed:
        logger.error("job verification failed", extra={"checks": checks.results})
        summary = "; ".join(f"{name}: {value.removeprefix('failed: ')}" for name, value in failed.items())
        raise JobVerificationFailed(f"job {event.job_id} failed verification: {summary}")
    logger.info("job verified", extra={"checks": checks.results})
    return Verification(verified=True, checks=checks.results)
