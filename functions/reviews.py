"""A reviewer's decision on one review item of a job (docs/design.md, "Review").

Documents whose result is ``review`` (a check with ``on_fail: "review"`` failed), and packets' sections whose
own result is (functions/reading/sections.py), form a job's review queue: its items, a document by its id, a
section as ``{document_id}#{section_id}`` (storage.review_item). A reviewer accepts or rejects each one,
optionally correcting its fields; the decision is stored beside the result, at
``jobs/{job_id}/reviews/{document_id}.json`` (a section's:
``reviews/{document_id}/sections/{section_id}.json``), written once (a conditional PutObject): the same
decision again is answered from the stored record and changes nothing, another decision is refused. A packet's
row follows its sections' decisions (its worst section).
"""

from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from functions import s3_json, storage
from functions.checks.fields import row_columns, row_values
from functions.definition.job_spec import DefinitionBundle
from functions.payloads.common import DOCUMENT_ID_PATTERN, JOB_ID_PATTERN
from functions.payloads.report import CaseOutcome, ReportRow, SectionRow
from functions.reading.sections import SECTION_ID_PATTERN, packet_status
from functions.resplit import split_documents, split_rows

_READ_WORKERS = 16

ReviewVerdict = Literal["accepted", "rejected"]


def decision_id(job_id: str, document_id: str, section_id: str | None = None) -> str:
    """The decision's id: from the job and the document (and a packet's section) only, so every attempt to
    decide is the same one."""
    named = f"{job_id}\n{document_id}" if section_id is None else f"{job_id}\n{document_id}\n{section_id}"
    return hashlib.sha256(named.encode()).hexdigest()[:32]


class ChosenEvidence(BaseModel):
    """Where the reviewer read a field's value: a page of the document and its text there, with the span in
    that page's text (functions/reading/page_texts.py) when the document has a text layer."""

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
    """jobs/{job_id}/reviews/{document_id}.json, or a packet's section's
    jobs/{job_id}/reviews/{document_id}/sections/{section_id}.json."""

    model_config = ConfigDict(extra="forbid")

    decision_id: str = Field(pattern=r"^[0-9a-f]{32}$")
    job_id: str = Field(pattern=JOB_ID_PATTERN)
    document_id: str = Field(pattern=DOCUMENT_ID_PATTERN)
    section_id: str | None = Field(
        None, pattern=SECTION_ID_PATTERN, description="the packet's section decided (null: the document)"
    )
    verdict: ReviewVerdict
    class_name: str | None = None
    fields: dict[str, JsonValue] = Field(description="the document's fields after the corrections")
    corrections: list[FieldCorrection] = Field(default_factory=list)
    reason: str | None = None
    decided_by: str = Field(min_length=1)
    decided_at: str

    @property
    def item_id(self) -> str:
        """The review item decided (storage.review_item)."""
        return storage.review_item(self.document_id, self.section_id)

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
    documents: list[str] = Field(
        description="the review queue: its items (document ids, and DOCUMENT#SECTION for a packet's section) "
        "whose result is review"
    )
    requested_at: str
    token_updated_at: str
    requests: int = Field(1, ge=1, description="invocations that recorded this wait")
    released_by: str | None = None
    released_at: str | None = None

    def undecided(self, decided: set[str]) -> list[str]:
        return [item for item in self.documents if item not in decided]


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
    documents: int = Field(ge=0, description="the review queue's length (its items)")
    decided: int = Field(ge=0)
    released_by: str | None = None


# ------------------------------------------------------------------------- decisions in the report


def review_items(row: ReportRow) -> list[str]:
    """The review items of a report row: the document when its row is ``review``; a packet's sections whose
    own row is ``review`` (whatever the packet's status: a rejected section does not decide another), and the
    packet itself when its case is in review."""
    if row.sections is not None:
        case = [row.document_id] if row.case is not None and row.case.status == "review" else []
        return [
            storage.review_item(row.document_id, section.section_id)
            for section in row.sections
            if section.status == "review"
        ] + case  # a case in review: the packet, decided as a whole
    return [row.document_id] if row.status == "review" else []


def _read_decisions(job_id: str, items: list[str]) -> dict[str, ReviewDecision]:
    """The decisions of the review items that have one: one listing, one read per decision."""
    decided = sorted(set(items) & set(s3_json.list_review_items(job_id)))
    if not decided:
        return {}
    with ThreadPoolExecutor(max_workers=min(_READ_WORKERS, len(decided))) as pool:
        found = pool.map(
            lambda item: s3_json.get_json_or_none(storage.review_item_key(job_id, item)), decided
        )
        return {
            item: ReviewDecision.model_validate(data)
            for item, data in zip(decided, found, strict=True)
            if data is not None
        }


def reviewed_row(row: ReportRow, decision: ReviewDecision, columns: list[str]) -> ReportRow:
    """A review row with its decision applied: accepted, the corrected fields and ``extracted``; rejected,
    ``rejected`` with ``ReviewRejected`` and the reviewer's reason."""
    return row.model_copy(update=_decided(decision, columns or list(row.fields)))


def reviewed_section(section: SectionRow, decision: ReviewDecision, columns: list[str]) -> SectionRow:
    """A packet's section in review with its decision applied, as :func:`reviewed_row`."""
    return section.model_copy(update=_decided(decision, columns or list(section.fields)))


def _decided(decision: ReviewDecision, columns: list[str]) -> dict[str, object]:
    if decision.verdict == "accepted":
        fields = row_values(decision.fields, columns)
        return {"status": "extracted", "error": None, "reason": decision.reason, "fields": fields}
    return {"status": "rejected", "error": REVIEW_REJECTED_ERROR, "reason": _rejected_reason(decision)}


def _rejected_reason(decision: ReviewDecision) -> str:
    return f"rejected in review by {decision.decided_by}: {decision.reason or 'no reason given'}"


def reviewed_case(case: CaseOutcome, decision: ReviewDecision | None) -> CaseOutcome:
    """A packet's case in review with the packet's decision applied: accepted, passed (``extracted``, the
    reviewer's note its reason); rejected, ``rejected`` with ``ReviewRejected``."""
    if case.status != "review" or decision is None:
        return case
    if decision.verdict == "accepted":
        return CaseOutcome(status="extracted", reason=decision.reason)
    return CaseOutcome(status="rejected", error=REVIEW_REJECTED_ERROR, reason=_rejected_reason(decision))


def reviewed_packet(
    row: ReportRow, decisions: dict[str, ReviewDecision], bundle: DefinitionBundle | None
) -> ReportRow:
    """A packet's row with its sections' decisions applied: each decided section as :func:`reviewed_row`,
    its case's (the packet's own decision) as :func:`reviewed_case`, the packet's status, error and reason
    its worst section's (or its case's) again (functions/reading/sections.py)."""
    assert row.sections is not None
    sections = [
        section
        if section.status != "review"
        or (decision := decisions.get(storage.review_item(row.document_id, section.section_id))) is None
        else reviewed_section(
            section, decision, row_columns(bundle, section.class_name) if bundle is not None else []
        )
        for section in row.sections
    ]
    case = None if row.case is None else reviewed_case(row.case, decisions.get(row.document_id))
    status, error, reason = packet_status(sections, case)
    update = {"sections": sections, "status": status, "error": error, "reason": reason, "case": case}
    return row.model_copy(update=update)


def apply_decisions(job_id: str, rows: list[ReportRow], bundle: DefinitionBundle | None) -> list[ReportRow]:
    """The rows with the reviewers' decisions applied (a review item without one stays ``review``): a
    document's on its row, a packet's sections' on their section rows (the packet's row follows them); a
    re-split packet's row is its stored result's, the re-run's (functions/resplit.py)."""
    rows = split_rows(job_id, rows, bundle, split_documents(job_id))
    decisions = _read_decisions(job_id, [item for row in rows for item in review_items(row)])
    applied: list[ReportRow] = []
    for row in rows:
        if row.sections is not None:
            decided = any(item in decisions for item in review_items(row))
            applied.append(reviewed_packet(row, decisions, bundle) if decided else row)
        elif row.status == "review" and row.document_id in decisions:
            columns = row_columns(bundle, row.class_name) if bundle is not None else []
            applied.append(reviewed_row(row, decisions[row.document_id], columns))
        else:
            applied.append(row)
    return applied
