"""Lambda entry point: batch_inference (docs/design.md, "Batch inference"; docs/batch.md).

One function, five callers: ``plan`` (PlanBatchJobs: the job split into parts, one batch job each),
``record`` (a child of WriteBatchRecords: one document's input record), ``submit`` (SubmitBatchJob, a child of
BatchJobs: a part's batch job), ``wait`` (WaitForBatchJob, ``waitForTaskToken``: keeps the token, completes it
when the part's batch job already ended) and the EventBridge rule's "Batch Inference Job State
Change" events (source ``aws.bedrock``: completes the waiting task's token)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from functions.batch_inference.facts import EVENT_SOURCE
from functions.batch_inference.input_records import write_record
from functions.batch_inference.invocation_jobs import on_event, submit, wait
from functions.batch_inference.payloads import PlanEvent, SubmitEvent, WaitEvent, WriteRecordEvent
from functions.batch_inference.plan import plan
from functions.observability import logger, metrics, tracer


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
@tracer.capture_lambda_handler(capture_response=False)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any] | None:
    if event.get("source") == EVENT_SOURCE:
        outcome = on_event(event)
        return None if outcome is None else outcome.model_dump(mode="json")
    action = event.get("action")
    if action == "plan":
        return plan(PlanEvent.model_validate(event)).model_dump(mode="json")
    if action == "submit":
        return submit(SubmitEvent.model_validate(event)).model_dump(mode="json")
    if action == "wait":
        return wait(WaitEvent.model_validate(event)).model_dump(mode="json")
    return write_record(WriteRecordEvent.model_validate(event)).model_dump(mode="json")
