"""Lambda entry point: build_report (docs/design.md). Output ``{"report_key", "documents", "extracted",
"rejected"}`` (the merge of the fan-in's partials, or the previous path when the job has no plan.json);
``"action": "summarize"``: SummarizeResults (ReportPlan); ``"action": "partial"``: a ReportPartitions child
(PartitionDone); with ``"action": "wait_review"`` the WaitForReview task (``waitForTaskToken``,
functions/logic/review_wait.py), output ``ReviewWaitOutput`` (ignored: the task waits for the token)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from functions.logic.build_report import build_report
from functions.logic.report_fan_in import merge_report, read_plan, report_partition, summarize_results
from functions.logic.review_wait import wait_for_review
from functions.observability import MetricUnit, logger, metrics, tracer
from functions.payloads.fan_in import PartitionEvent, SummarizeEvent
from functions.payloads.report import BuildReportEvent
from functions.reviews import ReviewWaitEvent
from functions.spans import span


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
@tracer.capture_lambda_handler(capture_response=False)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    action = event.get("action")
    if action == "wait_review":
        return wait_for_review(ReviewWaitEvent.model_validate(event)).model_dump(mode="json")
    if action == "summarize":
        summarize = SummarizeEvent.model_validate(event)
        with span("report_summarize", job_id=summarize.job_id, step="report", attempt=summarize.retry_count):
            return summarize_results(summarize, context).model_dump(mode="json")
    if action == "partial":
        partition = PartitionEvent.model_validate(event)
        with span("report_partition", job_id=partition.job_id, step="report", attempt=partition.retry_count):
            return report_partition(partition, context).model_dump(mode="json")
    parsed = BuildReportEvent.model_validate(event)
    with span(
        "report",
        job_id=parsed.job_id,
        step="report",
        attempt=parsed.retry_count,
        redrive_count=parsed.redrive_count,
    ) as opened:
        plan = read_plan(parsed.job_id)
        summary = build_report(parsed, context) if plan is None else merge_report(parsed, plan, context)
        opened.set_attributes(documents=summary.documents, extracted=summary.extracted)
    metrics.add_metric(name="ReportsBuilt", unit=MetricUnit.Count, value=1)
    return summary.model_dump(mode="json")
