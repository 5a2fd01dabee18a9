"""Lambda entry point: prepare_job (docs/design.md).

Input ``{"request", "execution_name"}``; output PreparedJob.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from functions.logic.prepare_job import prepare_job
from functions.observability import MetricUnit, logger, metrics, tracer


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
@tracer.capture_lambda_handler(capture_response=False)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    job = prepare_job(event, context)  # validates the request itself: errors are InvalidJobRequest
    metrics.add_metric(name="DocumentsListed", unit=MetricUnit.Count, value=job.document_count)
    return job.model_dump(mode="json")
