"""Lambda entry point: process_document (docs/design.md). Output DocumentOutcome, or BatchOutcome for a batch
(``items``: documents_per_child > 1)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from functions.logic.give_up import give_up
from functions.logic.process_batch import process_batch
from functions.logic.process_document import process_document
from functions.logic.resplit_packet import resplit_packet
from functions.observability import MetricUnit, logger, metrics, tracer
from functions.payloads.document import (
    BatchOutcome,
    DocumentOutcome,
    GiveUpEvent,
    ProcessBatchEvent,
    ProcessDocumentEvent,
)
from functions.resplit import RESPLIT_ACTION, ResplitEvent

# The documents' outcomes as metrics, by status.
_METRICS = {
    "extracted": "DocumentsExtracted",
    "review": "DocumentsForReview",
    "rejected": "DocumentsRejected",
}


def _count(outcomes: list[DocumentOutcome]) -> None:
    for status, name in _METRICS.items():
        count = sum(outcome.status == status for outcome in outcomes)
        if count:
            metrics.add_metric(name=name, unit=MetricUnit.Count, value=count)


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
@tracer.capture_lambda_handler(capture_response=False)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    if event.get("action") == "give_up":  # RecordDocumentFailure: ProcessDocument's Catch
        given_up = give_up(GiveUpEvent.model_validate(event), context)
        outcomes = given_up.outcomes if isinstance(given_up, BatchOutcome) else [given_up]
        _count(outcomes)
        return given_up.model_dump(mode="json")
    if event.get("action") == RESPLIT_ACTION:  # docagent review split: the packet's changed sections again
        return resplit_packet(ResplitEvent.model_validate(event), context).model_dump(mode="json")
    if "items" in event:
        batch = process_batch(ProcessBatchEvent.model_validate(event), context)
        _count(batch.outcomes)
        return batch.model_dump(mode="json")
    outcome = process_document(ProcessDocumentEvent.model_validate(event), context)
    _count([outcome])
    return outcome.model_dump(mode="json")
