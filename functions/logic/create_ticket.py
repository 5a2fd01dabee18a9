"""create_ticket: open exactly one support ticket per job, even when the ticket API's answer is lost.

Four layers keep it single:

1. The durable step ``ticket`` (keyed by the job id) returns the stored result on any repeat.
2. ``jobs/{job}/ticket.json`` is written as soon as the ticket's id is known; a rerun returns it.
3. ``jobs/{job}/ticket-attempt.json`` records the intent (idempotency key, payload hash) *before* every
   create request. Found without ticket.json, it means an earlier attempt's outcome is unknown (the process
   died, the answer was lost): the ticket system is searched by reference (the job id) and a ticket found
   there is adopted instead of creating another. This alone keeps an API without idempotency keys at one
   ticket.
4. The create request carries the idempotency key ``docagent-ticket-{job_id}``, so an API that honours it
   returns the first ticket even to a request that raced an earlier, still unanswered one.

A create whose answer is lost is settled at once by a search; if the search cannot settle it either, the step
fails with ``TicketOutcomeUnknown`` (or ``TicketApiUnavailable`` when the API is down past the client's
retries) and the workflow's Retry, or a redrive, settles it through layer 3.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from functions import durable, storage
from functions.errors import TicketError, TicketOutcomeUnknown
from functions.faults import fault_point, job_options
from functions.models import (
    CreateTicketEvent,
    FaultPointName,
    JobTicket,
    TicketAttempt,
    TicketAttemptError,
    TicketPayload,
    TicketRecord,
    TicketResult,
    utc_now,
)
from functions.observability import MetricUnit, logger, metrics
from functions.settings import get_settings
from functions.tickets import TicketClient, get_ticket_client, ticket_idempotency_key

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

RECORDED_ERRORS = 20
_MAX_DEADLINE_MARGIN_SECONDS = 2.0


def ticket_payload(event: CreateTicketEvent) -> TicketPayload:
    report = event.report
    failed = report.documents - report.extracted - report.rejected
    title = (
        f"docagent review of job {event.job_id}: {report.extracted}/{report.documents} documents extracted"
    )
    body = (
        f"Job {event.job_id} reviewed {report.documents} documents: {report.extracted} extracted, "
        f"{report.rejected} rejected, {failed} failed. Report: {report.report_key}"
    )
    return TicketPayload(reference=event.job_id, title=title, body=body)


def payload_sha256(payload: TicketPayload) -> str:
    return hashlib.sha256(payload.model_dump_json().encode()).hexdigest()


def client_deadline(context: LambdaContext) -> float:
    """A ``time.monotonic()`` deadline for the ticket client: the invocation's, less a margin to record."""
    remaining = context.get_remaining_time_in_millis() / 1000
    return time.monotonic() + remaining - min(_MAX_DEADLINE_MARGIN_SECONDS, remaining / 4)


# ------------------------------------------------------------------------------------ durable records


def recorded_ticket(job_id: str) -> JobTicket | None:
    data = storage.get_json_or_none(storage.ticket_key(job_id))
    return None if data is None else JobTicket.model_validate(data)


def ticket_attempt(job_id: str) -> TicketAttempt | None:
    data = storage.get_json_or_none(storage.ticket_attempt_key(job_id))
    return None if data is None else TicketAttempt.model_validate(data)


def _begin_attempt(
    job_id: str, key: str, digest: str, adapter: str, previous: TicketAttempt | None
) -> TicketAttempt:
    now = utc_now()
    if previous is not None and previous.payload_sha256 != digest:
        logger.warning("the ticket payload changed since the last attempt", extra={"idempotency_key": key})
    attempt = TicketAttempt(
        job_id=job_id,
        idempotency_key=key,
        payload_sha256=digest,
        adapter=adapter,
        attempts=(previous.attempts + 1) if previous else 1,
        first_attempt_at=previous.first_attempt_at if previous else now,
        last_attempt_at=now,
        errors=previous.errors if previous else [],
    )
    storage.put_json(storage.ticket_attempt_key(job_id), attempt)
    return attempt


def _note_error(attempt: TicketAttempt, error: TicketError) -> None:
    """Record a ticket API failure in ticket-attempt.json (best effort: the error itself is what matters)."""
    entry = TicketAttemptError(error=type(error).__name__, message=str(error)[:1000], at=utc_now())
    attempt.errors = [*attempt.errors, entry][-RECORDED_ERRORS:]
    metrics.add_metric(name="TicketApiErrors", unit=MetricUnit.Count, value=1)
    logger.warning("ticket API error", extra={"error": entry.error, "error_message": entry.message})
    try:
        storage.put_json(storage.ticket_attempt_key(attempt.job_id), attempt)
    except Exception:
        logger.exception("could not record the ticket API error")


def _adopt(tickets: list[TicketRecord], key: str) -> TicketRecord | None:
    """The ticket an earlier attempt made: the one with our key, else the oldest with our reference."""
    if not tickets:
        return None
    if len(tickets) > 1:
        logger.error(
            "more than one ticket carries the job's reference",
            extra={"ticket_ids": [ticket.ticket_id for ticket in tickets]},
        )
    return next((ticket for ticket in tickets if ticket.idempotency_key == key), tickets[0])


def _reconcile(client: TicketClient, attempt: TicketAttempt) -> TicketRecord | None:
    try:
        found = _adopt(client.find_by_reference(attempt.job_id), attempt.idempotency_key)
    except TicketError as error:
        _note_error(attempt, error)
        raise
    logger.info(
        "reconciled an attempt with an unknown outcome",
        extra={"found": found is not None, "ticket_id": found.ticket_id if found else None},
    )
    return found


# -------------------------------------------------------------------------------------------- the step


def _open_ticket(event: CreateTicketEvent, client: TicketClient, context: LambdaContext) -> TicketResult:
    job_id = event.job_id
    recorded = recorded_ticket(job_id)
    if recorded is not None:
        logger.info("ticket already recorded; returning it", extra={"ticket_id": recorded.ticket_id})
        return TicketResult(
            ticket_id=recorded.ticket_id, reference=recorded.reference, created=recorded.created
        )

    def fault(name: FaultPointName) -> None:
        fault_point(
            name,
            event.options,
            event.retry_count,
            redrive_count=event.redrive_count,
            context=context,
        )

    key = ticket_idempotency_key(job_id)
    payload = ticket_payload(event)
    previous = ticket_attempt(job_id)
    if previous is not None:
        found = _reconcile(client, previous)
        if found is not None:
            return _record(event, client, found, key, reconciled=True, fault=fault)

    attempt = _begin_attempt(job_id, key, payload_sha256(payload), client.name, previous)
    fault("before_ticket")
    reconciled = False
    try:
        ticket = client.create(key, payload, on_sent=lambda: fault("after_ticket_request"))
    except TicketOutcomeUnknown as unknown:
        _note_error(attempt, unknown)
        try:
            found = _reconcile(client, attempt)
        except TicketError:
            raise unknown from None
        if found is None:
            raise
        ticket, reconciled = found, True
    except TicketError as error:
        _note_error(attempt, error)
        raise
    return _record(event, client, ticket, key, reconciled=reconciled, fault=fault)


def _record(
    event: CreateTicketEvent,
    client: TicketClient,
    ticket: TicketRecord,
    key: str,
    *,
    reconciled: bool,
    fault: Callable[[FaultPointName], None],
) -> TicketResult:
    fault("after_ticket")
    created = ticket.created and not reconciled
    storage.put_json(
        storage.ticket_key(event.job_id),
        JobTicket(
            ticket_id=ticket.ticket_id,
            reference=ticket.reference,
            idempotency_key=key,
            adapter=client.name,
            created=created,
            created_at=ticket.created_at,
            reconciled=reconciled,
        ),
    )
    if created:
        metrics.add_metric(name="TicketsCreated", unit=MetricUnit.Count, value=1)
    if reconciled:
        metrics.add_metric(name="TicketsReconciled", unit=MetricUnit.Count, value=1)
    logger.info(
        "ticket recorded",
        extra={"ticket_id": ticket.ticket_id, "ticket_created": created, "ticket_reconciled": reconciled},
    )
    return TicketResult(ticket_id=ticket.ticket_id, reference=ticket.reference, created=created)


def create_ticket(
    event: CreateTicketEvent, context: LambdaContext, *, client: TicketClient | None = None
) -> TicketResult:
    settings = get_settings()
    logger.append_keys(job_id=event.job_id)
    tickets = client or get_ticket_client(settings, deadline=client_deadline(context))
    event = event.model_copy(update={"options": job_options(event.job_id, event.options)})
    return durable.run_step(
        "ticket",
        ids={"job_id": event.job_id},
        fn=lambda: _open_ticket(event, tickets, context),
        result_model=TicketResult,
        context=context,
    )
