"""Lambda entry point: prepare_job (docs/design.md), three states of the workflow.

PrepareJob: input ``{"request", "execution_name"}``, output StartedJob. ListDocuments: ``{"action": "list",
"job_id", "listing"}``, output ListingCursor. SealJob: ``{"action": "seal", "job_id", "listing"}``, output
PreparedJob.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import ValidationError

from functions.errors import InvalidJobRequest
from functions.logic.list_documents import list_step, seal
from functions.logic.prepare_job import prepare_job
from functions.observability import MetricUnit, logger, metrics, tracer
from functions.payloads.job import ListingEvent
from functions.settings import get_settings
from functions.spans import span


def _listing(event: dict[str, Any]) -> dict[str, Any]:
    try:
        parsed = ListingEvent.model_validate(event)
    except ValidationError as error:
        raise InvalidJobRequest(f"invalid listing event: {error}") from None
    logger.append_keys(job_id=parsed.job_id)
    settings = get_settings()
    with span("prepare", job_id=parsed.job_id, step=parsed.action) as step:
        if parsed.action == "list":
            cursor = list_step(parsed, settings)
            step.set_attributes(part=parsed.listing.part, documents=cursor.documents, done=cursor.done)
            return cursor.model_dump(mode="json")
        job = seal(parsed, settings)
        step.set_attributes(document_count=job.document_count)
    metrics.add_metric(name="DocumentsListed", unit=MetricUnit.Count, value=job.document_count)
    return job.model_dump(mode="json")


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
@tracer.capture_lambda_handler(capture_response=False)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    if isinstance(event, dict) and event.get("action") in {"list", "seal"}:
        return _listing(event)
    request = event.get("request") if isinstance(event, dict) else None
    job_id = str((request or {}).get("job_id") or event.get("execution_name") or "unknown")
    with span("prepare", job_id=job_id, step="prepare"):
        job = prepare_job(event, context)  # validates the request itself: errors are InvalidJobRequest
    return job.model_dump(mode="json")
