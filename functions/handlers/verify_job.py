"""Lambda entry point: verify_job (docs/design.md). Output ``{"verified": true, "checks": {...}}``; raises
JobVerificationFailed naming the failed checks otherwise."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from functions.logic.verify_job import verify_job
from functions.observability import MetricUnit, logger, metrics, tracer
from functions.payloads.verification import VerifyJobEvent
from functions.spans import span


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
@tracer.capture_lambda_handler(capture_response=False)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    parsed = VerifyJobEvent.model_validate(event)
    with span(
        "verify",
        job_id=parsed.job_id,
        step="verify",
        attempt=parsed.retry_count,
        redrive_count=parsed.redrive_count,
    ) as opened:
        verification = verify_job(parsed, context=context)
        opened.outcome = "verified" if verification.verified else "not verified"
    metrics.add_metric(name="JobsVerified", unit=MetricUnit.Count, value=1)
    return verification.model_dump(mode="json")
