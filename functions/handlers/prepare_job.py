"""Lambda entry point: prepare_job (docs/design.md).

Input ``{"request", "execution_name"}``; output PreparedJob.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from functions.logic.prepare_job import prepare_job
from functions.observability import MetricUnit, logger, metrics, tracer
from functions.spans import span


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
@tracer.capture_lambda_handler(capture_response=False)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    request = event.get("request") if isinstance(event, dict) else None
    job_id = str((request or {}).get("job_id") or event.get("execution_name") or "unknown")
    with span("prepare", job_id=job_id, step="prepare") as prepared:
        job = prepare_job(event, context)  # validates the request itself: errors are InvalidJobRequest
        prepared.set_attributes(document_count=job.document_count)
    metrics.add_metric(name="DocumentsListed", unit=MetricUnit.Count, value=job.document_count)
    return job.model_dump(mode="json")
