"""Lambda entry point: verify_job (docs/design.md). Output ``{"verified": true, "checks": {...}}``; raises
JobVerificationFailed naming the failed checks otherwise."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from functions.logic.verify_job import verify_job
from functions.models import VerifyJobEvent
from functions.observability import MetricUnit, logger, metrics, tracer


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
@tracer.capture_lambda_handler(capture_response=False)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    verification = verify_job(VerifyJobEvent.model_validate(event), context=context)
    metrics.add_metric(name="JobsVerified", unit=MetricUnit.Count, value=1)
    return verification.model_dump(mode="json")
