"""Lambda entry point: run_actions (docs/design.md). Output ``{"actions": [ReportAction, ...]}``."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from functions.actions.payloads import RunActionsEvent
from functions.logic.run_actions import run_actions
from functions.observability import logger, metrics, tracer
from functions.spans import span


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
@tracer.capture_lambda_handler(capture_response=False)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    parsed = RunActionsEvent.model_validate(event)
    with span(
        "actions",
        job_id=parsed.job_id,
        step="actions",
        attempt=parsed.retry_count,
        redrive_count=parsed.redrive_count,
    ) as opened:
        result = run_actions(parsed, context)
        opened.set_attributes(actions=len(result.actions))
    return result.model_dump(mode="json")
