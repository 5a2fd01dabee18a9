"""Lambda entry point: process_document (docs/design.md). Output DocumentOutcome."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from functions.logic.process_document import process_document
from functions.models import ProcessDocumentEvent
from functions.observability import MetricUnit, logger, metrics, tracer


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
@tracer.capture_lambda_handler(capture_response=False)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    outcome = process_document(ProcessDocumentEvent.model_validate(event), context)
    name = "DocumentsExtracted" if outcome.status == "extracted" else "DocumentsRejected"
    metrics.add_metric(name=name, unit=MetricUnit.Count, value=1)
    return outcome.model_dump(mode="json")
