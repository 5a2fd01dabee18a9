"""Lambda entry point: create_ticket (docs/design.md). Output ``{"ticket_id", "reference", "created"}``."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from functions.logic.create_ticket import create_ticket
from functions.models import CreateTicketEvent
from functions.observability import logger, metrics, tracer
from functions.spans import span


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
@tracer.capture_lambda_handler(capture_response=False)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    parsed = CreateTicketEvent.model_validate(event)
    with span(
        "ticket",
        job_id=parsed.job_id,
        step="ticket",
        attempt=parsed.retry_count,
        redrive_count=parsed.redrive_count,
    ) as opened:
        ticket = create_ticket(parsed, context)
        opened.set_attributes(ticket_id=ticket.ticket_id, created=ticket.created)
    return ticket.model_dump(mode="json")
