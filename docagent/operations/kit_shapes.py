"""The ``--json`` shapes of the kit's commands: ``docagent definition validate|publish|list|show`` (job
definitions, docagent/kit) and ``docagent review accept|reject|list|export`` (the review queue). Part of the
contract docagent/operations/json_shapes.py registers by command."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, JsonValue

from docagent.kit.problems import Problem as DefinitionProblem
from docagent.operations.json_output import Output
from functions.payloads.evidence import FieldEvidence
from functions.payloads.report import SectionRow
from functions.resplit import SplitDecision
from functions.reviews import ReviewDecision


class DefinitionValidateOutput(Output):
    """``docagent definition validate PATH``: every problem of the folder (exit 2 if any)."""

    folder: str
    name: str | None = Field(description="the definition's name, when job.json names one")
    ok: bool
    sha256: str | None = Field(description="the version publishing it would give, when it is valid")
    problems: list[DefinitionProblem] = Field(description="one per problem (docagent/kit/problems.py)")
    actions_checked: str = Field(
        description="whether the actions were checked against a reachable deployment's allow-list, as "
        "publish and start check them, or why not"
    )
    models_checked: str = Field(
        description="whether job.json's models were checked against the models a reachable deployment's "
        "functions may call (its MODELS_ALLOWED), as publish and start check them, or why not"
    )
    notes: list[str] = Field(
        default_factory=list,
        description="what is no problem but worth knowing: each field graded support by default (a boolean, "
        "free text; docs/defining-a-job.md, 'Checks and outcome'); none when the definition has problems",
    )


class DefinitionPublishOutput(Output):
    """``docagent definition publish PATH``: the version written (once) and made current."""

    name: str
    sha256: str
    version: str = Field(description="name@first 12 hex digits, as inspect shows a job's pin")
    written: bool = Field(description="false: this version was published before (its bundle is immutable)")
    moved: bool = Field(description="false: it already was the current version (publishing changed nothing)")
    key: str
    current_key: str
    published_at: str
    previous: list[str] = Field(description="earlier versions, newest first")


class DefinitionRow(Output):
    name: str
    sha256: str
    version: str
    published_at: str
    published_by: str | None
    earlier_versions: int


class DefinitionListOutput(Output):
    """``docagent definition list``: the published definitions and their current versions."""

    count: int
    definitions: list[DefinitionRow]


class DefinitionShowOutput(Output):
    """``docagent definition show NAME``: its current (or --version) bundle."""

    name: str
    sha256: str
    version: str
    current: bool = Field(description="this is the version new jobs pin")
    published_at: str | None
    published_by: str | None
    previous: list[str]
    classes: list[str]
    actions: list[str]
    definition: dict[str, Any] = Field(description="job.json as published (docs/defining-a-job.md)")


class ReviewWaitRelease(Output):
    """What a decision did to the job's wait for its review queue."""

    job_id: str
    status: Literal["waiting", "released"]
    documents: int
    decided: int
    released_by: str | None
    sent: bool = Field(description="this decision completed the queue and sent SendTaskSuccess")
    settled: str | None = Field(
        description="TaskTimedOut, InvalidToken or TaskDoesNotExist: the token was settled already"
    )


class ReviewDecisionOutput(Output, ReviewDecision):
    """``docagent review accept|reject JOB ITEM``: the decision as stored (docs/design.md, "Review")."""

    item: str = Field(
        description="the review item decided: DOCUMENT, or DOCUMENT#SECTION for a packet's section"
    )
    written: bool = Field(description="false: the same decision was already recorded, nothing was written")
    review_key: str = Field(description="the S3 key of the decision, beside the item's result")
    review_wait: ReviewWaitRelease | None = Field(
        None, description="null: the job does not wait for its review queue (or has not reached the wait)"
    )


class ReviewQueueItem(Output):
    """A review item: a document whose result is review, or a packet's section whose own result is."""

    item: str = Field(description="what `review accept|reject` takes: DOCUMENT, or DOCUMENT#SECTION")
    document_id: str
    section_id: str | None = Field(
        description="a packet's section (functions/reading/sections.py); null: a document"
    )
    pages: list[int] | None = Field(
        description="a section's first and last page in its packet; null: a document"
    )
    index: int
    class_name: str | None
    fields: dict[str, JsonValue] | None = Field(description="its fields as the model read them")
    reason: str | None = Field(description="why its checks or its evidence sent it to review")
    error: str | None
    decision: ReviewDecision | None = Field(description="null: waiting for a reviewer")
    confidence: float | None = Field(
        None,
        description="its least certain field's confidence (functions/evidence/grounding.py); null: no "
        "evidence",
    )
    evidence: dict[str, FieldEvidence] = Field(
        default_factory=dict, description="each field's evidence and confidence, by path"
    )


class ReviewListOutput(Output):
    """``docagent review list JOB``: the review items (documents whose result is review, packets' sections
    whose own result is), the least certain first (then in job order, a packet's sections in page order)."""

    job_id: str
    documents: list[ReviewQueueItem] = Field(description="the review items")
    waiting: int = Field(description="items without a decision")


class ExportedLabel(Output):
    document_id: str
    item: str = Field(description="the review item: DOCUMENT, or DOCUMENT#SECTION (its pages written alone)")
    label: str = Field(description="the NAME.label.json written")
    corrections: int = Field(description="fields the reviewer changed")


class ReviewExportOutput(Output):
    """``docagent review export JOB DIR``: the accepted review items written as labelled samples."""

    job_id: str
    directory: str
    exported: list[ExportedLabel]


class ResplitRun(Output):
    """The packet run again after a re-split: its outcome and its sections."""

    status: Literal["extracted", "review", "rejected"]
    error: str | None
    reason: str | None
    sections: list[SectionRow]


class ReviewSplitOutput(Output, SplitDecision):
    """``docagent review split JOB DOCUMENT --pages ...``: the re-split as stored and the packet re-run
    (docs/design.md, "Re-splitting a packet")."""

    written: bool = Field(description="false: the same split was already recorded, nothing was written")
    split_key: str = Field(description="the S3 key of the decision")
    rerun: ResplitRun
    review_wait: ReviewWaitRelease | None = Field(
        None, description="null: the job does not wait for its review queue (or has not reached the wait)"
    )
