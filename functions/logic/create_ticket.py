"""create_ticket: open exactly one support ticket per job.

Two layers keep it single: the durable step ``ticket`` (keyed by the job id) returns the stored result on any
repeat, and the ticket system itself is called with the idempotency key ``docagent-ticket-{job_id}``, which
covers a crash after the ticket was created but before the step's record was saved.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from functions import durable, storage
from functions.faults import fault_point
from functions.models import CreateTicketEvent, JobTicket, StoredRequest, TicketPayload, TicketResult
from functions.observability import MetricUnit, logger, metrics
from functions.settings import get_settings
from functions.tickets import TicketClient, get_ticket_client, ticket_idempotency_key

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext


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


def _open_ticket(event: CreateTicketEvent, client: TicketClient, context: LambdaContext) -> TicketResult:
    fault_point(
        "before_ticket", event.options, event.retry_count, redrive_count=event.redrive_count, context=context
    )
    key = ticket_idempotency_key(event.job_id)
    ticket = client.create(key, ticket_payload(event))
    fault_point(
        "after_ticket", event.options, event.retry_count, redrive_count=event.redrive_count, context=context
    )
    storage.put_json(
        storage.ticket_key(event.job_id),
        JobTicket(
            ticket_id=ticket.ticket_id,
            reference=ticket.reference,
            idempotency_key=key,
            adapter=client.name,
            created=ticket.created,
            created_at=ticket.created_at,
        ),
    )
    if ticket.created:
        metrics.add_metric(name="TicketsCreated", unit=MetricUnit.Count, value=1)
    logger.info("ticket recorded", extra={"ticket_id": ticket.ticket_id, "ticket_created": ticket.created})
    return TicketResult(ticket_id=ticket.ticket_id, reference=ticket.reference, created=ticket.created)


def _with_job_options(event: CreateTicketEvent) -> CreateTicketEvent:
    """The state machine does not pass the job's options here; fault drills read them from request.json."""
    if event.options.fault is not None:
        return event
    stored = storage.get_json_or_none(storage.request_key(event.job_id))
    if stored is None:
        return event
    options = StoredRequest.model_validate(stored).request.options
    return event.model_copy(update={"options": options})


def create_ticket(
    event: CreateTicketEvent, context: LambdaContext, *, client: TicketClient | None = None
) -> TicketResult:
    settings = get_settings()
    logger.append_keys(job_id=event.job_id)
    tickets = client or get_ticket_client(settings)
    if settings.fault_injection_enabled:
        event = _with_job_options(event)
    return durable.run_step(
        "ticket",
        ids={"job_id": event.job_id},
        fn=lambda: _open_ticket(event, tickets, context),
        result_model=TicketResult,
        context=context,
    )
