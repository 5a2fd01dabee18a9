"""run_actions: the job-level actions of the job's pinned definition, in order, each exactly once.

Four layers keep each action single:

1. The durable step ``actions`` (keyed by the job id) returns the stored result on any repeat.
2. ``jobs/{job}/actions/{name}/done.json`` is written as soon as the action's outcome is known; a done action
   is never run again, so a crash between two actions repeats neither.
3. ``jobs/{job}/actions/{name}/attempt.json`` records the intent (idempotency key, payload hash) *before*
   every request. Found without done.json, it means an earlier attempt's outcome is unknown: an http action
   searches its target by reference (the job id) and adopts what it finds instead of posting again;
   eventbridge and sns send again with the same idempotency key (consumers dedupe on it); export writes the
   same bytes again.
4. Every request carries the idempotency key ``docagent-{job}-{action}``, so a target that honours it returns
   the first record even to a request that raced an earlier, still unanswered one.

An action whose target the deployment does not allow fails the step with ActionNotAllowed before anything is
sent. Once every action is done, the report's ``actions`` section records each outcome (a byte-stable
rewrite: its times are the done records'), after the durable step, so a replayed step writes it too.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from functions import s3_json, storage
from functions.actions.allowed import allowed_target
from functions.actions.payloads import (
    ActionAttempt,
    ActionAttemptError,
    ActionDone,
    ActionsResult,
    RunActionsEvent,
)
from functions.actions.send import (
    RecipientFactory,
    Sending,
    idempotency_key,
    job_payload,
    payload_sha256,
    recipient,
    send,
    when_holds,
)
from functions.definition.action_specs import Action
from functions.definition.job_spec import DefinitionBundle
from functions.durability import durable
from functions.durability.faults import fault_point, job_options
from functions.errors import ActionError, InvalidJobRequest
from functions.observability import MetricUnit, logger, metrics
from functions.payloads.common import FaultPointName, utc_now
from functions.payloads.job import JobManifest
from functions.payloads.report import Report, ReportAction
from functions.settings import get_settings

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

RECORDED_ERRORS = 20
_MAX_DEADLINE_MARGIN_SECONDS = 2.0


def client_deadline(context: LambdaContext) -> float:
    """A ``time.monotonic()`` deadline for a client: the invocation's, less a margin to record."""
    remaining = context.get_remaining_time_in_millis() / 1000
    return time.monotonic() + remaining - min(_MAX_DEADLINE_MARGIN_SECONDS, remaining / 4)


# ------------------------------------------------------------------------------------ durable records


def pinned_definition(job_id: str, manifest: JobManifest | None = None) -> DefinitionBundle | None:
    """The definition bundle the job pinned (None for a job prepared before definitions existed);
    ``manifest``: the job's, if the caller has read it."""
    manifest = manifest or s3_json.get_manifest(job_id)
    if manifest is None:
        raise InvalidJobRequest(f"job {job_id} has no manifest; was it prepared?")
    name, sha256 = manifest.versions.definition, manifest.versions.definition_sha256
    if name is None or sha256 is None:
        return None
    bundle = s3_json.get_definition(name, sha256)
    if bundle is None:
        raise InvalidJobRequest(f"job {job_id} pins definition {name} {sha256[:12]}, which is not published")
    return bundle


def action_done(job_id: str, action: str) -> ActionDone | None:
    data = s3_json.get_json_or_none(storage.action_done_key(job_id, action))
    return None if data is None else ActionDone.model_validate(data)


def action_attempt(job_id: str, action: str) -> ActionAttempt | None:
    data = s3_json.get_json_or_none(storage.action_attempt_key(job_id, action))
    return None if data is None else ActionAttempt.model_validate(data)


def _begin_attempt(
    job_id: str, action: Action, key: str, digest: str, previous: ActionAttempt | None
) -> ActionAttempt:
    now = utc_now()
    if previous is not None and previous.payload_sha256 != digest:
        logger.warning("the action's payload changed since the last attempt", extra={"action": action.name})
    attempt = ActionAttempt(
        job_id=job_id,
        action=action.name,
        type=action.type,
        idempotency_key=key,
        payload_sha256=digest,
        attempts=(previous.attempts + 1) if previous else 1,
        first_attempt_at=previous.first_attempt_at if previous else now,
        last_attempt_at=now,
        errors=previous.errors if previous else [],
    )
    s3_json.put_json(storage.action_attempt_key(job_id, action.name), attempt)
    return attempt


def _note_error(attempt: ActionAttempt, error: ActionError) -> None:
    """Record a failure in attempt.json (best effort: the error itself is what matters)."""
    entry = ActionAttemptError(error=type(error).__name__, message=str(error)[:1000], at=utc_now())
    attempt.errors = [*attempt.errors, entry][-RECORDED_ERRORS:]
    metrics.add_metric(name="ActionErrors", unit=MetricUnit.Count, value=1)
    logger.warning("action error", extra={"action": attempt.action, "error": entry.error})
    try:
        s3_json.put_json(storage.action_attempt_key(attempt.job_id, attempt.action), attempt)
    except Exception:
        logger.exception("could not record the action's error")


def http_references(outcomes: list[ReportAction]) -> frozenset[str]:
    """The records these http actions made: a target that does not echo idempotency keys holds them under
    the same reference (the job id), so reconciling another action must not adopt them."""
    return frozenset(
        o.reference for o in outcomes if o.type == "http" and o.reference and o.outcome != "skipped"
    )


# -------------------------------------------------------------------------------------------- the step


class _Run:
    def __init__(
        self, event: RunActionsEvent, context: LambdaContext, make: RecipientFactory, deadline: float | None
    ) -> None:
        self.event = event
        self.context = context
        self.make = make
        self.deadline = deadline
        self.settings = get_settings()

    def fault(self, name: FaultPointName, action: str) -> None:
        fault_point(
            name,
            self.event.options,
            self.event.retry_count,
            job_id=self.event.job_id,
            redrive_count=self.event.redrive_count,
            action=action,
            context=self.context,
        )

    def _done(
        self, *, action: Action, key: str, outcome: str, reference: str | None, attempts: int, target: str
    ) -> ReportAction:
        record = ReportAction.model_validate(
            {
                "name": action.name,
                "type": action.type,
                "outcome": outcome,
                "idempotency_key": key,
                "reference": reference,
                "done_at": utc_now(),
            }
        )
        job_id = self.event.job_id
        s3_json.put_json(
            storage.action_done_key(job_id, action.name),
            ActionDone(job_id=job_id, outcome=record, target=target, attempts=attempts),
        )
        if outcome == "performed":
            metrics.add_metric(name="ActionsPerformed", unit=MetricUnit.Count, value=1)
        elif outcome == "reconciled":
            metrics.add_metric(name="ActionsReconciled", unit=MetricUnit.Count, value=1)
        else:
            metrics.add_metric(name="ActionsSkipped", unit=MetricUnit.Count, value=1)
        logger.info("action done", extra={"action": action.name, "outcome": outcome, "reference": reference})
        return record

    def one(self, definition: str, action: Action, report: Report, claimed: frozenset[str]) -> ReportAction:
        job_id = self.event.job_id
        done = action_done(job_id, action.name)
        if done is not None:
            logger.info("action already done", extra={"action": action.name})
            return done.outcome
        key = idempotency_key(job_id, action.name)
        if not when_holds(action, report):
            return self._done(
                action=action, key=key, outcome="skipped", reference=None, attempts=0, target=""
            )
        target = allowed_target(action, self.settings.actions_allowed)
        payload = job_payload(
            job_id,
            definition=definition,
            action=action,
            key=key,
            report=report,
            report_key=self.event.report.report_key,
        )
        previous = action_attempt(job_id, action.name)
        attempt = _begin_attempt(job_id, action, key, payload_sha256(payload), previous)
        self.fault("before_action", action.name)
        sending = Sending(
            job_id=job_id,
            action=action,
            target=target,
            key=key,
            payload=payload,
            report=report,
            bucket=self.settings.bucket_name,
            uncertain=previous is not None,
            claimed=claimed,
            on_sent=lambda: self.fault("after_action_request", action.name),
            note_error=lambda error: _note_error(attempt, error),
            deadline=self.deadline,
        )
        try:
            sent = send(sending, self.make)
        except ActionError as error:
            _note_error(attempt, error)
            raise
        self.fault("after_action", action.name)
        outcome = "reconciled" if sent.reconciled else "performed"
        return self._done(
            action=action,
            key=key,
            outcome=outcome,
            reference=sent.reference,
            attempts=attempt.attempts,
            target=target,
        )

    def all(self) -> ActionsResult:
        job_id = self.event.job_id
        bundle = pinned_definition(job_id)
        report = Report.model_validate(s3_json.get_json(self.event.report.report_key))
        if bundle is None:
            logger.info("the job pins no definition: no actions to run")
            return ActionsResult(actions=[])
        outcomes: list[ReportAction] = []
        for action in bundle.definition.actions:
            outcomes.append(self.one(bundle.name, action, report, http_references(outcomes)))
        return ActionsResult(actions=outcomes)


def record_in_report(report_key: str, result: ActionsResult) -> None:
    """The report's ``actions`` section: rewritten after the step, also when the step was replayed (a report
    rebuilt since keeps its section), and byte-stable (the outcomes come from done.json)."""
    if not result.actions:
        return
    report = Report.model_validate(s3_json.get_json(report_key))
    if report.actions != result.actions:
        s3_json.put_json(report_key, report.model_copy(update={"actions": result.actions}))


def run_actions(
    event: RunActionsEvent, context: LambdaContext, *, make: RecipientFactory = recipient
) -> ActionsResult:
    logger.append_keys(job_id=event.job_id)
    event = event.model_copy(update={"options": job_options(event.job_id, event.options)})
    run = _Run(event, context, make, client_deadline(context))
    result = durable.run_step(
        "actions",
        ids={"job_id": event.job_id},
        fn=run.all,
        result_model=ActionsResult,
        context=context,
    )
    record_in_report(event.report.report_key, result)
    return result
