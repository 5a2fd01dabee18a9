"""The job's model breaker (docs/design.md, "Model calls") as the operator sees it: why a job stopped on a
model refusal, what to do, and clearing it when the operator redrives after fixing the cause."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from functions import storage

if TYPE_CHECKING:
    from docagent.operations.records import JobRecords


def model_breaker(records: JobRecords) -> dict[str, Any] | None:
    """jobs/{job}/model-breaker.json, or None: the first permanent model refusal of the job, with its fix."""
    found: dict[str, Any] | None = records.read_json(storage.model_breaker_key(records.job_id))
    return found


def next_step(job_id: str, breaker: dict[str, Any]) -> str:
    """What to do about a job the model refused: the refusal's own fix, then a redrive (which clears it)."""
    return (
        f"the model refused the job ({breaker['error']} on document {breaker['document_id']}, model "
        f"{breaker['model_id']}): {breaker['message']} `docagent redrive {job_id}` removes the model breaker "
        "before it redrives."
    )


def clear_model_breaker(records: JobRecords) -> bool:
    """Remove the breaker before a redrive (the operator fixed the cause); True when there was one."""
    if model_breaker(records) is None:
        return False
    records.ctx.client("s3").delete_object(
        Bucket=records.ctx.bucket, Key=storage.model_breaker_key(records.job_id)
    )
    return True
