"""A reviewer's decision on one document of a job (docs/design.md, "Review").

Documents whose result is ``review`` (a check with ``on_fail: "review"`` failed) form a job's review queue.
A reviewer accepts or rejects each one, optionally correcting its fields; the decision is stored beside the
result, at ``jobs/{job_id}/reviews/{document_id}.json``, written once (a conditional PutObject): the same
decision again is answered from the stored record and changes nothing, another decision is refused.
"""

from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from functions import storage
from functions.definition import DefinitionBundle
from functions.fields import row_columns, row_values
from functions.payloads.common import DOCUMENT_ID_PATTERN, JOB_ID_PATTERN
from functions.payloads.report import ReportRow

_READ_WORKERS = 16

ReviewVerdict = Literal["accepted", "rejected"]


def decision_id(job_id: str, document_id: str) -> str:
    """The decision's id: from the job and the document only, so every attempt to decide is the same one."""
    return hashlib.sha256(f"{job_id}\n{document_id}".encode()).hexdigest()[:32]


class ChosenEvidence(BaseModel):
    """Where the reviewer read a field's value: a page of the document and its text there, with the span in
    that page's text (functions/page_texts.py) when the document has a text layer."""

    model_config = ConfigDict(extra="forbid")

    page: int = Field(ge=1, description="1-based, 1 for a document without pages")
    quote: str = Field(min_length=1, max_length=2000)
    start: int | None = Field(None, ge=0, description="offset of the span in the page's text")
    end: int | None = Field(None, ge=0, description="end offset (exclusive)")


class FieldCorrection(BaseModel):
    """One field the reviewer changed (or confirmed with evidence): what the model read, what the reviewer
    says it is, and the evidence the reviewer chose for it."""

    model_config = ConfigDict(extra="forbid")

    field: str = Field(min_length=1)
    extracted: JsonValue = None
    corrected: JsonValue = None
    evidence: ChosenEvidence | None = Field(None, description="the evidence the reviewer chose (null: none)")


class ReviewDecision(BaseModel):
    """jobs/{job_id}/reviews/{document_id}.json."""

    model_config = ConfigDict(extra="forbid")

    decision_id: str = Field(pattern=r"^[0-9a-f]{32}$")
    job_id: str = Field(pattern=JOB_ID_PATTERN)
    document_id: str = Field(pattern=DOCUMENT_ID_PATTERN)
    verdict: ReviewVerdict
    class_name: str | None = None
    fields: dict[str, JsonValue] = Field(description="the document's fields after the corrections")
    corrections: list[FieldCorrection] = Field(default_factory=list)
    reason: str | None = None
    decided_by: str = Field(min_length=1)
    decided_at: str

    def same_decision(self, other: ReviewDecision) -> bool:
        """The same verdict, fields and reason (who and when aside): a repeated click or a reload."""
        keep = {"verdict", "fields", "reason", "class_name"}
        return self.model_dump(include=keep) == other.model_dump(include=keep)


# ------------------------------------------------------------------------------ waiting for the queue

ReviewWaitStatus = Literal["waiting", "released"]
REVIEW_REJECTED_ERROR = "ReviewRejected"
# SendTaskSuccess errors that mean the token was completed already or its task no longer waits (looked up
# 2026-12-02, Step Functions API reference "SendTaskSuccess": TaskTimedOut "the task token has either expired
# or the task associated with the token has already been closed", InvalidToken, TaskDoesNotExist).
SETTLED_TOKEN_CODES = frozenset({"TaskTimedOut", "InvalidToken", "TaskDoesNotExist"})


class ReviewWaitRecord(BaseModel):
    """jobs/{job_id}/review-wait.json: the WaitForReview task's token (only the newest is valid) and the
    job's review queue, written before the task waits; ``released`` once SendTaskSuccess was sent."""

    model_config = ConfigDict(extra="forbid")

    job_id: str = Field(pattern=JOB_ID_PATTERN)
    status: ReviewWaitStatus
    task_token: str = Field(min_length=1)
    execution_arn: str | None = None
    documents: list[str] = Field(description="the review queue: document ids whose result is review")
    requested_at: str
    token_updated_at: str
    requests: int = Field(1, ge=1, description="invocations that recorded this wait")
    released_by: str | None = None
    released_at: str | None = None

    def undecided(self, decided: set[str]) -> list[str]:
        return [document_id for document_id in self.documents if document_id not in decided]


class ReviewWaitEvent(BaseModel):
    """The WaitForReview task's payload (``lambda:invoke.waitForTaskToken`` on build_report)."""

    model_config = ConfigDict(extra="forbid")

    action: Literal["wait_review"]
    job_id: str = Field(pattern=JOB_ID_PATTERN)
    map_run: JsonValue = Field(None, description="ReviewDocuments' ResultPath output (the ResultWriter's)")
    task_token: str = Field(min_length=1)
    execution_arn: str | None = None


class ReviewWaitOutput(BaseModel):
    """What the token is completed with (the state's ``$.review_wait``), and the invocation's answer."""

    model_config = ConfigDict(extra="forbid")

    job_id: str
    status: ReviewWaitStatus
    documents: int = Field(ge=0, description="the review queue's length")
    decided: int = Field(ge=0)
    released_by: str | None = None


# ------------------------------------------------------------------------- decisions in the report


def _read_decisions(job_id: str, document_ids: list[str]) -> dict[str, ReviewDecision]:
    """The decisions of the review rows that have one: one listing, one read per decision."""
    decided = sorted(set(document_ids) & set(storage.list_review_ids(job_id)))
    if not decided:
        return {}
    with ThreadPoolExecutor(max_workers=min(_READ_WORKERS, len(decided))) as pool:
        found = pool.map(
            lambda document_id: storage.get_json_or_none(storage.review_key(job_id, document_id)), decided
        )
        return {
            document_id: ReviewDecision.model_validate(data)
            for document_id, data in zip(decided, found, strict=True)
            if data is not None
        }


def reviewed_row(row: ReportRow, decision: ReviewDecision, columns: list[str]) -> ReportRow:
    """A review row with its decision applied: accepted, the corrected fields and ``extracted``; rejected,
    ``rejected`` with ``ReviewRejected`` and the reviewer's reason."""
    if decision.verdict == "accepted":
        return row.model_copy(
            update={
                "status": "extracted",
                "error": None,
                "reason": decision.reason,
                "fields": row_values(decision.fields, columns or list(row.fields)),
            }
        )
    reason = f"rejected in review by {decision.decided_by}: {decision.reason or 'no reason given'}"
    return row.model_copy(update={"status": "rejected", "error": REVIEW_REJECTED_ERROR, "reason": reason})


def apply_decisions(job_id: str, rows: list[ReportRow], bundle: DefinitionBundle | None) -> list[ReportRow]:
    """The rows with the reviewers' decisions applied (a review row without one stays ``review``)."""
    decisions = _read_decisions(job_id, [row.document_id for row in rows if row.status == "review"])
    return [
        row
        if row.status != "review" or row.document_id not in decisions
        else reviewed_row(
            row,
            decisions[row.document_id],
            row_columns(bundle, row.class_name) if bundle is not None else [],
        )
        for row in rows
    ]
