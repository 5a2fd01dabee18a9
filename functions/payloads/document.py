"""ProcessDocument's event, batch items and a document's stored result and outcome."""

from __future__ import annotations

import json
from typing import Literal

from pydantic import Field, JsonValue, model_validator

from functions.checks.fields import row_values
from functions.payloads.common import (
    DOCUMENT_ID_PATTERN,
    JOB_ID_PATTERN,
    DocumentStatus,
    SourceFormat,
    StrictModel,
)
from functions.payloads.evidence import Cascade, FieldEvidence
from functions.payloads.job import JobOptions, JobVersions, ManifestEntry
from functions.payloads.model_calls import CheckOutcome
from functions.payloads.ocr import OcrSummary
from functions.payloads.report import CaseOutcome, Ignorable, ReportRow, SectionRow


class ProcessDocumentEvent(StrictModel):
    job_id: str = Field(pattern=JOB_ID_PATTERN)
    options: JobOptions = Field(default_factory=JobOptions)
    document: ManifestEntry
    retry_count: int = Field(0, ge=0)
    redrive_count: int = Field(0, ge=0)


class BatchItem(StrictModel):
    """One item of a batched child's ``Items`` (the ItemSelector's output): its document."""

    document: ManifestEntry


class ProcessBatchEvent(StrictModel):
    """process_document's payload with ``documents_per_child`` > 1: the batch's items, the job once."""

    job_id: str = Field(pattern=JOB_ID_PATTERN)
    options: JobOptions = Field(default_factory=JobOptions)
    items: list[BatchItem] = Field(min_length=1)
    retry_count: int = Field(0, ge=0)
    redrive_count: int = Field(0, ge=0)

    def document_events(self) -> list[ProcessDocumentEvent]:
        """Each document as the per-document event it would be in a child of its own."""
        return [
            ProcessDocumentEvent(
                job_id=self.job_id,
                options=self.options,
                document=item.document,
                retry_count=self.retry_count,
                redrive_count=self.redrive_count,
            )
            for item in self.items
        ]


class StepFailure(StrictModel):
    """What a Catch puts at its ResultPath: the error's name and its cause (a Lambda function's error: the
    JSON ``{"errorMessage", "errorType", ...}``)."""

    Error: str
    Cause: str | None = None

    def message(self) -> str:
        """The cause's errorMessage (the cause itself when it is not a Lambda error's JSON), one line."""
        try:
            said = json.loads(self.Cause or "")
        except ValueError:
            said = None
        text = said.get("errorMessage") if isinstance(said, dict) else self.Cause
        return " ".join(str(text or "no cause given").split())[:1000]


class GiveUpEvent(StrictModel):
    """RecordDocumentFailure's payload (``"action": "give_up"``): ProcessDocument's own input, and the
    failure its Catch caught once its Retry ran out (ModelUnavailable, DocumentInProgress). Output as
    ProcessDocument's: a DocumentOutcome, or a BatchOutcome for ``items``."""

    action: Literal["give_up"]
    job_id: str = Field(pattern=JOB_ID_PATTERN)
    options: JobOptions = Field(default_factory=JobOptions)
    document: ManifestEntry | None = None
    items: list[BatchItem] | None = None
    failure: StepFailure
    retry_count: int = Field(0, ge=0)
    redrive_count: int = Field(0, ge=0)

    def document_events(self) -> list[ProcessDocumentEvent]:
        """Each document as ProcessDocument's per-document event."""
        documents = [self.document] if self.document is not None else [i.document for i in self.items or []]
        return [
            ProcessDocumentEvent(
                job_id=self.job_id,
                options=self.options,
                document=document,
                retry_count=self.retry_count,
                redrive_count=self.redrive_count,
            )
            for document in documents
        ]


class WindowCall(StrictModel):
    """One page window of a long PDF read window by window (functions/reading/page_windows.py) and its model
    call."""

    pages: tuple[int, int] = Field(description="the window's first and last page (1-based, inclusive)")
    model_call_id: str


class DocumentResult(Ignorable):
    """jobs/{job_id}/results/{document_id}.json: exactly one per document, extracted, review or rejected.

    A packet's section has one too (results/{document_id}/sections/{section_id}.json: ``section_id`` and
    ``pages`` set); the packet's own result lists its ``sections`` and has no class or fields."""

    job_id: str = Field(pattern=JOB_ID_PATTERN)
    document_id: str = Field(pattern=DOCUMENT_ID_PATTERN)
    key: str
    index: int = Field(ge=0)
    status: DocumentStatus
    class_name: str | None = None
    fields: dict[str, JsonValue] | None = None
    attached: dict[str, dict[str, JsonValue]] = Field(
        default_factory=dict, description="rows found by lookup checks, by the check's attach name"
    )
    checks: list[CheckOutcome] = Field(default_factory=list)
    evidence: dict[str, FieldEvidence] = Field(
        default_factory=dict,
        description="each field's evidence and confidence by path (functions/evidence/grounding.py)",
    )
    cascade: Cascade | None = Field(
        None, description="the cheap and the strong model's parts (a definition naming two models)"
    )
    error: str | None = None
    reason: str | None = None
    model_call_id: str | None = None
    classify_call_id: str | None = None
    windows: list[WindowCall] = Field(
        default_factory=list,
        description="a long PDF's page windows, each its own extraction (docs/design.md, Page windows)",
    )
    model_cost_usd: float | None = Field(
        None, description="its model calls priced (functions/spend.py); null: no dated price, or older"
    )
    ocr: OcrSummary | None = Field(
        None, description="its pages without a text layer read by OCR (docs/design.md, Page text by OCR)"
    )
    versions: JobVersions
    format: SourceFormat | None = None
    processed_at: str
    sha256: str | None = Field(
        None, pattern=r"^[0-9a-f]{64}$", description="of the bytes read (null: not read)"
    )
    section_id: str | None = Field(
        None,
        pattern=r"^s[0-9]{4}-[0-9]{4}(-r1)?$",  # functions/reading/sections.py SECTION_ID_PATTERN
        description="a packet's section's result (functions/reading/sections.py)",
    )
    pages: tuple[int, int] | None = Field(None, description="a section's first and last page, from 1")
    sections: list[SectionRow] | None = Field(
        None, description="a packet's sections, each as its report row shows it (null: not a packet)"
    )
    case: CaseOutcome | None = Field(
        None, description="a packet's case checks decided (job.json case; its outcomes: ``checks``)"
    )

    @model_validator(mode="after")
    def _consistent(self) -> DocumentResult:
        if self.sections is not None:
            if not self.sections or self.fields is not None or self.class_name is not None:
                raise ValueError("a packet's result lists its sections and has no class or fields of its own")
            if self.status == "rejected" and not self.error:
                raise ValueError("a rejected result needs an error name")
            return self
        unclassified = self.section_id is not None and self.class_name is None and self.fields is None
        if self.status == "review" and unclassified and not self.error:
            return self  # a packet's section of no class in review (job.json unclassified_pages)
        if self.status != "rejected" and (self.fields is None or self.class_name is None or self.error):
            raise ValueError(f"a {self.status} result needs a class and fields and no error")
        if self.status == "rejected" and not self.error:
            raise ValueError("a rejected result needs an error name")
        return self

    @property
    def class_label(self) -> str | None:
        """The class as the console and ``inspect`` show it: a packet's is ``packet: `` and its sections'
        classes, each once in page order (``no class`` for a section without one); else the class."""
        if self.sections is None:
            return self.class_name
        names = [part.class_name or "no class" for part in self.sections]
        return "packet: " + ", ".join(dict.fromkeys(names))

    @property
    def sections_in_review(self) -> int:
        """A packet's sections whose own outcome is review: its review items (docs/design.md, "Packets")."""
        return sum(part.status == "review" for part in self.sections or [])

    def report_row(self, columns: list[str]) -> ReportRow:
        """This document's row of report.json (carried in the child's output, see DocumentOutcome): the
        ``columns`` of its fields as text (functions/checks/fields.py ``row_values``)."""
        return ReportRow(
            document_id=self.document_id,
            index=self.index,
            key=self.key,
            status=self.status,
            class_name=self.class_name,
            error=self.error,
            reason=self.reason,
            fields=row_values(self.fields, columns) if self.fields is not None else {},
            model_call_id=self.model_call_id,
            model_cost_usd=self.model_cost_usd,
            sections=self.sections,
            case=self.case,
        )

    def section_row(self, columns: list[str]) -> SectionRow:
        """This section's part of its packet's report row."""
        assert self.section_id is not None and self.pages is not None
        return SectionRow(
            section_id=self.section_id,
            pages=self.pages,
            status=self.status,
            class_name=self.class_name,
            error=self.error,
            reason=self.reason,
            fields=row_values(self.fields, columns) if self.fields is not None else {},
            ignored=self.ignored,
        )


class DocumentOutcome(StrictModel):
    """process_document's output: small, the Map's per-child result.

    ``row`` is the document's report row: the ResultWriter's result files carry it to build_report and
    verify_job, so neither reads one object per document. Null only in outputs of code from before it existed.
    """

    document_id: str
    status: DocumentStatus
    result_key: str
    error: str | None = None
    row: ReportRow | None = None


class BatchOutcome(StrictModel):
    """process_document's output for a batch: one DocumentOutcome per item, in the batch's order."""

    outcomes: list[DocumentOutcome]
