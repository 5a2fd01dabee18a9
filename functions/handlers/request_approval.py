"""Lambda entry point: request_approval (docs/design.md).

Two actions on one function: ``request`` (the RequestApproval ``waitForTaskToken`` task; output
``{"approval_key", "status": "pending"}``, which Step Functions ignores) and ``record`` (the RecordApproval
task; output the report's approval section ``{"decision", "decided_by", "decided_at", "reason",
"requested_at"}``).
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from functions.logic.request_approval import record_approval, request_approval
from functions.observability import logger, metrics, tracer
from functions.payloads.approval import RecordApprovalEvent, RequestApprovalEvent


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
@tracer.capture_lambda_handler(capture_response=False)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    if event.get("action") == "record":
        return record_approval(RecordApprovalEvent.model_validate(event)).model_dump(mode="json")
    return request_approval(RequestApprovalEvent.model_validate(event)).model_dump(mode="json")
