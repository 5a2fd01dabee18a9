"""verify_job: independent end-of-job checks, read straight from storage and the actions' targets.

Nothing here trusts the earlier steps' outputs: the result objects and the journal are listed, the report and
the actions' records re-read, and all compared with the manifest; a fixed-size sample of results is read in
full and compared with its report row. Any failed check raises JobVerificationFailed naming every failed
check.

Work per invocation (docs/design.md): manifest, report.json, the pinned definition, each action's done.json
and (http) one lookup by reference or (export) one listing, one listing of the results and one of the journal
(ceil(N / 1000) pages each), and SAMPLE_SIZE result reads: never one read per document.
"""

from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from functions import storage
from functions.actions.allowed import allowed_target
from functions.actions.send import RecipientFactory, idempotency_key, recipient, records_of
from functions.definition import HttpAction
from functions.errors import ActionNotAllowed, JobVerificationFailed
from functions.faults import fault_point, job_options
from functions.logic.run_actions import action_done, client_deadline, http_references, pinned_definition
from functions.observability import logger
from functions.payloads.document import DocumentResult
from functions.payloads.job import JobManifest
from functions.payloads.report import Report, ReportAction, ReportRow
from functions.payloads.verification import Verification, VerifyJobEvent
from functions.reviews import ReviewDecision, reviewed_row
from functions.settings import get_settings

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

_READ_WORKERS = 16
SAMPLE_SIZE = 16  # results read in full per job, whatever its size
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


def sample_ids(job_id: str, document_ids: list[str], size: int = SAMPLE_SIZE) -> list[str]:
    """A fixed-size sample of documents, the same on every attempt (ordered by a hash of job and document)."""

    def rank(document_id: str) -> str:
        return hashlib.sha256(f"{job_id}/{document_id}".encode()).hexdigest()

    return sorted(sorted(document_ids, key=rank)[:size])


def _read_sample(job_id: str, document_ids: list[str]) -> dict[str, Any]:
    """Raw result JSON of the sampled documents, read in parallel."""
    if not document_ids:
        return {}

    def read(document_id: str) -> Any:
        return storage.get_json_or_none(storage.result_key(job_id, document_id))

    with ThreadPoolExecutor(max_workers=min(_READ_WORKERS, len(document_ids))) as pool:
        return dict(zip(document_ids, pool.map(read, document_ids), strict=True))


def _check_results(job_id: str, manifest_ids: list[str], stored: set[str], checks: _Checks) -> list[str]:
    """Every manifest document has a result object and nothing else does (one listing). Returns the sample."""
    missing = [document_id for document_id in manifest_ids if document_id not in stored]
    extra = sorted(stored - set(manifest_ids))
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
    return sample_ids(job_id, [document_id for document_id in manifest_ids if document_id in stored])


def expected_row(result: DocumentResult, row: ReportRow) -> ReportRow:
    """The row the report should hold for a result: its own, or, for a review result the report shows
    decided (the job waited for its review queue), the row with the reviewer's decision applied."""
    own = result.report_row(list(row.fields))
    if result.status != "review" or row.status == "review":
        return own
    data = storage.get_json_or_none(storage.review_key(result.job_id, result.document_id))
    return own if data is None else reviewed_row(own, ReviewDecision.model_validate(data), list(row.fields))


def _check_sample(job_id: str, raw: dict[str, Any], rows: dict[str, ReportRow], checks: _Checks) -> None:
    """The sampled results are valid, belong to their document and say what their report row says."""
    invalid: list[str] = []
    differing: list[str] = []
    for document_id, data in raw.items():
        try:
            result = DocumentResult.model_validate(data)
        except ValidationError:
            invalid.append(document_id)
            continue
        if result.job_id != job_id or result.document_id != document_id:
            invalid.append(document_id)
            continue
        row = rows.get(document_id)
        if row is not None and row.status != "failed" and row != expected_row(result, row):
            differing.append(document_id)
    problems = [f"invalid results: {_some(invalid)}" if invalid else ""]
    problems.append(f"results that differ from their report row: {_some(differing)}" if differing else "")
    checks.record("results_valid", "; ".join(part for part in problems if part) or None)


def _check_journal(job_id: str, rows: list[ReportRow], checks: _Checks) -> None:
    """Every model call the report's rows refer to is in the journal (one listing of the job's journal)."""
    prefix = storage.model_calls_root(job_id)
    journalled = {obj["Key"][len(prefix) :] for obj in storage.list_objects(prefix)}
    unjournalled = [
        row.document_id
        for row in rows
        if row.model_call_id is not None and f"{row.document_id}/{row.model_call_id}.json" not in journalled
    ]
    checks.record(
        "model_calls_journalled",
        f"results without a journalled model call: {_some(unjournalled)}" if unjournalled else None,
    )


def _read_report(job_id: str) -> tuple[Report | None, str | None]:
    data = storage.get_json_or_none(storage.report_key(job_id))
    if data is None:
        return None, "report.json is missing"
    try:
        return Report.model_validate(data), None
    except ValidationError:
        return None, "report.json is not a valid report"


def _check_report(
    event: VerifyJobEvent, manifest_ids: list[str], report: Report, stored: set[str], checks: _Checks
) -> None:
    problems = []
    if sorted(row.document_id for row in report.rows) != sorted(manifest_ids):
        problems.append("its rows do not cover exactly the manifest's documents")
    without = [
        row.document_id for row in report.rows if row.status != "failed" and row.document_id not in stored
    ]
    if without:
        problems.append(f"{len(without)} row(s) without a stored result: {_some(without)}")
    expected = {
        "documents": len(manifest_ids),
        "extracted": sum(row.status == "extracted" and row.document_id in stored for row in report.rows),
        "review": sum(row.status == "review" and row.document_id in stored for row in report.rows),
        "rejected": sum(row.status == "rejected" and row.document_id in stored for row in report.rows),
    }
    for name, value in expected.items():
        if getattr(report, name) != value:
            problems.append(f"{name} is {getattr(report, name)} in report.json, {value} in the results")
        if getattr(event.report, name) != value:
            problems.append(
                f"{name} is {getattr(event.report, name)} in the step output, {value} in the results"
            )
    if report.failed != 0 or report.documents != report.extracted + report.review + report.rejected:
        problems.append(f"{report.failed} document(s) failed")
    checks.record("report_matches", "; ".join(problems) or None)


def _http_problem(
    job_id: str,
    *,
    action: HttpAction,
    done: ReportAction,
    make: RecipientFactory,
    bucket: str,
    deadline: float | None,
    claimed: frozenset[str],
) -> str | None:
    """The action's target holds exactly the record done.json names (none when it was skipped)."""
    try:
        target = allowed_target(action, get_settings().actions_allowed)
    except ActionNotAllowed as refused:
        return f"{action.name}: cannot look its record up: {refused}"
    client = make(target, action.secret, bucket, deadline)
    found = records_of(client.find_by_reference(job_id), done.idempotency_key, claimed)
    expected = 0 if done.outcome == "skipped" else 1
    if len(found) != expected:
        return f"{action.name}: expected {expected} record(s) with reference {job_id}, found {len(found)}"
    if found and found[0].id != done.reference:
        return f"{action.name}: the target holds {found[0].id}, done.json says {done.reference}"
    return None


def _check_actions(
    event: VerifyJobEvent,
    *,
    manifest: JobManifest,
    report: Report | None,
    make: RecipientFactory,
    deadline: float | None,
    checks: _Checks,
) -> None:
    """Every action of the pinned definition is done exactly once, as done.json, the report and the step's
    output say."""
    bundle = pinned_definition(event.job_id, manifest)
    actions = [] if bundle is None else bundle.definition.actions
    problems: list[str] = []
    bucket = get_settings().bucket_name
    dones = {action.name: action_done(event.job_id, action.name) for action in actions}
    outcomes = [done.outcome for done in dones.values() if done is not None]
    for action in actions:
        done = dones[action.name]
        if done is None:
            problems.append(f"{action.name}: done.json is missing")
            continue
        outcome = done.outcome
        if outcome.idempotency_key != idempotency_key(event.job_id, action.name):
            problems.append(f"{action.name}: done.json carries another idempotency key")
        elif isinstance(action, HttpAction):
            others = http_references([other for other in outcomes if other.name != action.name])
            problem = _http_problem(
                event.job_id,
                action=action,
                done=outcome,
                make=make,
                bucket=bucket,
                deadline=deadline,
                claimed=others,
            )
            problems += [problem] if problem else []
        elif action.type == "export" and outcome.outcome != "skipped":
            listed = storage.list_objects(storage.export_prefix(event.job_id, action.name))
            if not listed:
                problems.append(f"{action.name}: no exported file under {outcome.reference}")
        elif outcome.outcome != "skipped" and not outcome.reference:
            problems.append(f"{action.name}: done.json has no {action.type} reference")
    if len(outcomes) == len(actions):
        if report is not None and (report.actions or []) != outcomes:
            problems.append("the report's actions section differs from the actions' done.json")
        if event.actions is not None and event.actions != outcomes:
            problems.append("the step output's actions differ from the actions' done.json")
    checks.record("actions_done_once", "; ".join(problems) or None)


def verify_job(
    event: VerifyJobEvent, *, make: RecipientFactory = recipient, context: LambdaContext | None = None
) -> Verification:
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
    manifest_ids = [entry.document_id for entry in storage.manifest_entries(manifest)]
    stored = set(storage.list_result_ids(event.job_id))
    sample = _check_results(event.job_id, manifest_ids, stored, checks)
    report, report_problem = _read_report(event.job_id)
    rows = {row.document_id: row for row in report.rows} if report is not None else {}
    _check_sample(event.job_id, _read_sample(event.job_id, sample), rows, checks)
    _check_journal(event.job_id, list(rows.values()), checks)
    if report is None:
        checks.record("report_matches", report_problem)
    else:
        _check_report(event, manifest_ids, report, stored, checks)
    deadline = None if context is None else client_deadline(context)
    _check_actions(event, manifest=manifest, report=report, make=make, deadline=deadline, checks=checks)

    failed = checks.failed
    if failed:
        logger.error("job verification failed", extra={"checks": checks.results})
        summary = "; ".join(f"{name}: {value.removeprefix('failed: ')}" for name, value in failed.items())
        raise JobVerificationFailed(f"job {event.job_id} failed verification: {summary}")
    logger.info("job verified", extra={"checks": checks.results})
    return Verification(verified=True, checks=checks.results)
