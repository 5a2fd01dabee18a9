"""A review decision and the job that waits for its review queue (docs/design.md, "Review"): after a
decision (``docagent review accept|reject|split``, the console) the waiting task's token is completed when
every queued item is decided."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from docagent.operations.records import JobRecords
from functions.logic.review_wait import release_if_decided
from functions.reviews import ReviewWaitOutput


@dataclass(frozen=True)
class QueueRelease:
    """What a decision did to a job that waits for its review queue (docs/design.md, "Review")."""

    wait: ReviewWaitOutput
    # SendTaskSuccess was refused as settled already (TaskTimedOut, InvalidToken, TaskDoesNotExist): None
    # when it was accepted, or not sent.
    settled: str | None = None
    sent: bool = False

    def as_json(self) -> dict[str, Any]:
        return {**self.wait.model_dump(mode="json"), "sent": self.sent, "settled": self.settled}

    def sentence(self) -> str:
        if self.wait.status == "waiting":
            return f"the job waits for {self.wait.documents - self.wait.decided} more review decision(s)"
        if self.sent and self.settled is None:
            return "the review queue is decided: the job continues"
        if self.settled is not None:
            return f"the review queue is decided; the job's wait was already settled ({self.settled})"
        return f"the review queue is decided; the job was released by {self.wait.released_by}"


def release_queue(records: JobRecords, by: str) -> QueueRelease | None:
    """After a decision is stored: when the job waits for its review queue (review-wait.json) and every
    queued document now has a decision, complete the waiting task's token (SendTaskSuccess) and mark the
    wait released. Idempotent: a released wait sends nothing; a token settled already is reported."""
    s3 = records.ctx.client("s3")
    record = records.review_wait_record()
    if record is None or record.job_id != records.job_id:
        return None
    already = record.status == "released"
    wait, settled = release_if_decided(
        record,
        by=f"reviewer {by}",
        bucket=records.ctx.bucket,
        s3=s3,
        states=records.ctx.client("stepfunctions"),
    )
    return QueueRelease(wait, settled=settled, sent=not already and wait.status == "released")
