"""A reviewer's decision on one document of a job (docs/design.md, "Review").

Documents whose result is ``review`` (a check with ``on_fail: "review"`` failed) form a job's review queue.
A reviewer accepts or rejects each one, optionally correcting its fields; the decision is stored beside the
result, at ``jobs/{job_id}/reviews/{document_id}.json``, written once (a conditional PutObject): the same
decision again is answered from the stored record and changes nothing, another decision is refused.
"""

from __future__ import annotations

import hashlib
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from functions.payloads.common import DOCUMENT_ID_PATTERN, JOB_ID_PATTERN

ReviewVerdict = Literal["accepted", "rejected"]


def decision_id(job_id: str, document_id: str) -> str:
    """The decision's id: from the job and the document only, so every attempt to decide is the same one."""
    return hashlib.sha256(f"{job_id}\n{document_id}".encode()).hexdigest()[:32]


class FieldCorrection(BaseModel):
    """One field the reviewer changed: what the model read, and what the reviewer says it is."""

    model_config = ConfigDict(extra="forbid")

    field: str = Field(min_length=1)
    extracted: JsonValue = None
    corrected: JsonValue = None


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
