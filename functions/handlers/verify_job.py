"""Lambda entry point: verify_job (docs/design.md). Output ``{"verified": true, "checks": {...}}``; raises
JobVerificationFailed naming the failed checks otherwise. ``"action": "verify_partition"``: a
VerifyPartitions child (PartitionDone; its verdict in jobs/{job}/verify/part-NNNNN.json)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from functions.logic.verify_job import verify_job
from functions.logic.verify_partition import verify_partition
from functions.observability import MetricUnit, logger, metrics, tracer
from functions.payloads.fan_in import PartitionEvent
from functions.payloads.verification import VerifyJobEvent
from functions.spans import span


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
@tracer.capture_lambda_handler(capture_response=False)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    if event.get("action") == "verify_partition":
        partition = PartitionEvent.model_validate(event)
        with span("verify_partition", job_id=partition.job_id, step="verify", attempt=partition.retry_count):
            return verify_partition(partition, context).model_dump(mode="json")
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
