"""Lambda entry point: build_report (docs/design.md). Output ``{"report_key", "documents", "extracted",
"rejected"}``; with ``"action": "wait_review"`` the WaitForReview task (``waitForTaskToken``,
functions/logic/review_wait.py), output ``ReviewWaitOutput`` (ignored: the task waits for the token)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from functions.logic.build_report import build_report
from functions.logic.review_wait import wait_for_review
from functions.observability import MetricUnit, logger, metrics, tracer
from functions.payloads.report import BuildReportEvent
from functions.reviews import ReviewWaitEvent
from functions.spans import span


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
@tracer.capture_lambda_handler(capture_response=False)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    if event.get("action") == "wait_review":
        return wait_for_review(ReviewWaitEvent.model_validate(event)).model_dump(mode="json")
    parsed = BuildReportEvent.model_validate(event)
    with span(
        "report",
        job_id=parsed.job_id,
        step="report",
        attempt=parsed.retry_count,
        redrive_count=parsed.redrive_count,
    ) as opened:
        summary = build_report(parsed, context)
        opened.set_attributes(documents=summary.documents, extracted=summary.extracted)
    metrics.add_metric(name="ReportsBuilt", unit=MetricUnit.Count, value=1)
    return summary.model_dump(mode="json")
