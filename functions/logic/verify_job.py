"""verify_job: independent end-of-job checks, read straight from storage and the actions' targets.

Nothing here trusts the earlier steps' outputs: the result objects and the journal are listed, the report and
the actions' records re-read, and all compared with the manifest; a fixed-size sample of results is read in
full and compared with its report row. Any failed check raises JobVerificationFailed naming every failed
check.

The per-document part runs by fan-in (docs/design.md, "Verification by fan-in"): VerifyPartitions verifies
each manifest part in bounded memory (functions/logic/verify_partition.py) and this step merges their
verdicts (a partition without one is verified here), then checks the actions. Work per invocation:
manifest, P listing records and P ranged reads (the partitions), P verdicts, report.json, the pinned
definition, each action's done.json and (http) one lookup by reference or (export) one listing; the parts
again only when a partition found an orphan candidate.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from functions import s3_json, storage
from functions.actions.allowed import allowed_target
from functions.actions.send import RecipientFactory, idempotency_key, recipient, records_of
from functions.definition.action_specs import HttpAction
from functions.durability.faults import fault_point, job_options
from functions.errors import ActionNotAllowed, JobVerificationFailed
from functions.logic.report_fan_in import partition_entries, partitions_of
from functions.logic.run_actions import action_done, client_deadline, http_references, pinned_definition
from functions.logic.verify_partition import (
    SAMPLE_SIZE,
    SHOWN,
    expected_row,
    read_report,
    read_table,
    read_verdict,
    verify_partition_of,
)
from functions.observability import logger
from functions.payloads.fan_in import Partition, PartitionVerdict
from functions.payloads.job import JobManifest
from functions.payloads.report import Report, ReportAction
from functions.payloads.verification import Verification, VerifyJobEvent
from functions.settings import get_settings

__all__ = ["SAMPLE_SIZE", "expected_row", "verify_job"]

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext


def _some(items: list[str], total: int | None = None) -> str:
    """The first SHOWN items, and how many more there are (``total``: all of them, when only some are
    listed)."""
    count = len(items) if total is None else total
    shown = ", ".join(items[:SHOWN])
    return shown + (f" (+{count - SHOWN} more)" if count > SHOWN else "")


class _Checks:
    def __init__(self) -> None:
        self.results: dict[str, str] = {}

    def record(self, name: str, problem: str | None) -> None:
        self.results[name] = "ok" if problem is None else f"failed: {problem}"

    @property
    def failed(self) -> dict[str, str]:
        return {name: value for name, value in self.results.items() if value != "ok"}


def _orphans(manifest: JobManifest, partitions: list[Partition], candidates: list[str]) -> list[str]:
    """The candidates that are no document of the job: the manifest's parts read one at a time (only when
    there is a candidate: in a job whose ids follow its keys' order there is none)."""
    left = set(candidates)
    for partition in partitions:
        if not left:
            break
        left -= {entry.document_id for entry in partition_entries(manifest, partition)}
    return sorted(left)


def _verdicts(job_id: str, manifest: JobManifest, partitions: list[Partition]) -> list[PartitionVerdict]:
    """Each partition's verdict as VerifyPartitions wrote it for this manifest part, else verified here (one
    partition at a time)."""
    verdicts = []
    for position, partition in enumerate(partitions):
        verdict = read_verdict(job_id, partition)
        if verdict is None or verdict.key != partition.key or verdict.documents != partition.count:
            verdict = verify_partition_of(job_id, manifest, partition, position)
        verdicts.append(verdict)
    return verdicts


def _check_results(
    manifest: JobManifest, partitions: list[Partition], verdicts: list[PartitionVerdict], checks: _Checks
) -> None:
    """Every manifest document has a result object and nothing else does."""
    missing = [document_id for verdict in verdicts for document_id in verdict.missing]
    missing_count = sum(verdict.missing_count for verdict in verdicts)
    extra = _orphans(
        manifest, partitions, [name for verdict in verdicts for name in verdict.orphan_candidates]
    )
    problem = None
    if missing_count or extra:
        problem = "; ".join(
            part
            for part in (
                f"{missing_count} document(s) without a result: {_some(missing, missing_count)}"
                if missing_count
                else "",
                f"{len(extra)} result(s) for documents not in the manifest: {_some(extra)}" if extra else "",
            )
            if part
        )
    checks.record("one_result_per_document", problem)


def _check_sample(verdicts: list[PartitionVerdict], checks: _Checks) -> None:
    """The job's sample (the SAMPLE_SIZE lowest ranks of all partitions') is valid, belongs to its document
    and says what its report row says."""
    sample = sorted((judged for verdict in verdicts for judged in verdict.sample), key=lambda v: v.rank)
    chosen = sorted(sample[:SAMPLE_SIZE], key=lambda v: v.document_id)
    invalid = [v.document_id for v in chosen if v.problem == "invalid"]
    differing = [v.document_id for v in chosen if v.problem == "differs"]
    problems = [f"invalid results: {_some(invalid)}" if invalid else ""]
    problems.append(f"results that differ from their report row: {_some(differing)}" if differing else "")
    checks.record("results_valid", "; ".join(part for part in problems if part) or None)


def _check_journal(verdicts: list[PartitionVerdict], checks: _Checks) -> None:
    """Every model call the report's rows refer to is in the journal."""
    unjournalled = [document_id for verdict in verdicts for document_id in verdict.unjournalled]
    count = sum(verdict.unjournalled_count for verdict in verdicts)
    checks.record(
        "model_calls_journalled",
        f"results without a journalled model call: {_some(unjournalled, count)}" if count else None,
    )


def _check_report(
    event: VerifyJobEvent,
    manifest: JobManifest,
    report: Report,
    verdicts: list[PartitionVerdict],
    checks: _Checks,
) -> None:
    problems = []
    rows = report.table.rows if report.table is not None and not report.table.inline else len(report.rows)
    if rows != manifest.count or not all(verdict.rows_cover_partition for verdict in verdicts):
        problems.append("its rows do not cover exactly the manifest's documents")
    if report.table is not None and read_table(event.job_id) != report.table:
        problems.append("report/table.json differs from report.json's table")
    without = [document_id for verdict in verdicts for document_id in verdict.rows_without_result]
    without_count = sum(verdict.rows_without_result_count for verdict in verdicts)
    if without_count:
        problems.append(f"{without_count} row(s) without a stored result: {_some(without, without_count)}")
    stored = Counter[str]()
    for verdict in verdicts:
        stored.update(verdict.stored_by_status)
    expected = {
        "documents": manifest.count,
        "extracted": stored["extracted"],
        "review": stored["review"],
        "rejected": stored["rejected"],
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
            listed = s3_json.list_objects(storage.export_prefix(event.job_id, action.name))
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
        job_id=event.job_id,
        redrive_count=event.redrive_count,
        context=context,
    )
    checks = _Checks()
    manifest = s3_json.get_manifest(event.job_id)
    if manifest is None:
        raise JobVerificationFailed(
            f"job {event.job_id} failed verification: manifest: manifest.json is missing"
        )
    report, report_problem = read_report(event.job_id)
    partitions = partitions_of(event.job_id, manifest)
    verdicts = _verdicts(event.job_id, manifest, partitions)
    _check_results(manifest, partitions, verdicts, checks)
    _check_sample(verdicts, checks)
    _check_journal(verdicts, checks)
    if report is None:
        checks.record("report_matches", report_problem)
    else:
        _check_report(event, manifest, report, verdicts, checks)
    deadline = None if context is None else client_deadline(context)
    _check_actions(event, manifest=manifest, report=report, make=make, deadline=deadline, checks=checks)

    failed = checks.failed
    if failed:
        logger.error("job verification failed", extra={"checks": checks.results})
        summary = "; ".join(f"{name}: {value.removeprefix('failed: ')}" for name, value in failed.items())
        raise JobVerificationFailed(f"job {event.job_id} failed verification: {summary}")
    logger.info("job verified", extra={"checks": checks.results})
    return Verification(verified=True, checks=checks.results)
