"""BuildReport's event and the job's report: rows, Map Run summary, approval and actions."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
)

from functions.payloads.common import JOB_ID_PATTERN, StrictModel
from functions.payloads.job import JobOptions, JobVersions


class WriterDetails(BaseModel):
    model_config = ConfigDict(extra="ignore")

    Bucket: str
    Key: str


class MapRunInfo(BaseModel):
    """The Distributed Map's ResultPath output; tolerant of missing fields (local interpreters)."""

    model_config = ConfigDict(extra="ignore")

    MapRunArn: str | None = None
    ResultWriterDetails: WriterDetails | None = None


class BuildReportEvent(StrictModel):
    job_id: str = Field(pattern=JOB_ID_PATTERN)
    map_run: MapRunInfo = Field(default_factory=MapRunInfo)
    retry_count: int = Field(0, ge=0)
    redrive_count: int = Field(0, ge=0)
    options: JobOptions = Field(default_factory=JobOptions)

    @field_validator("map_run", mode="before")
    @classmethod
    def _tolerate_other_shapes(cls, value: Any) -> Any:
        """Without a ResultWriter (or on an interpreter that ignores it) the Map's output is the list of the
        children's outputs: nothing to read then, the stored results are the source of truth."""
        return value if isinstance(value, (dict, MapRunInfo)) else {}


class ChildFailure(StrictModel):
    document_id: str
    status: str
    error: str | None = None
    cause: str | None = None
    execution_arn: str | None = None


class CaseOutcome(StrictModel):
    """A packet's case checks decided (job.json ``case``; functions/checks/cases.py): ``extracted`` when every
    required class is there and every case rule holds, else the worst failure's status, error and reasons.
    The packet's status is the worse of it and its worst section's (functions/reading/sections.py
    packet_status)."""

    status: Literal["extracted", "review", "rejected"]
    error: str | None = None
    reason: str | None = None


class Ignorable(StrictModel):
    """A packet's section (its result, its row) the job may ignore: ``ignored``, dumped only when true."""

    ignored: bool = Field(
        False, description="a section of no class the job ignores (job.json unclassified_pages: ignore)"
    )

    @model_serializer(mode="wrap")
    def _without_unset_ignored(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Not ignored, it dumps as before ``ignored`` existed."""
        data: dict[str, Any] = handler(self)
        if not data.get("ignored"):
            data.pop("ignored", None)
        return data


class SectionRow(Ignorable):
    """A packet's section in its document's row (functions/reading/sections.py): its own outcome and
    columns."""

    section_id: str
    pages: tuple[int, int]
    status: Literal["extracted", "review", "rejected"]
    class_name: str | None = None
    error: str | None = None
    reason: str | None = None
    fields: dict[str, str | None] = Field(default_factory=dict)


class ReportRow(StrictModel):
    """A document's row: ``fields`` holds its class's columns (and the fields the definition's totals read),
    each value as text (null: absent); ``sections``: a packet's sections (null: not a packet)."""

    document_id: str
    index: int
    key: str
    status: Literal["extracted", "review", "rejected", "failed"]
    class_name: str | None = None
    error: str | None = None
    reason: str | None = None
    fields: dict[str, str | None] = Field(default_factory=dict)
    model_call_id: str | None = None
    model_cost_usd: float | None = None
    sections: list[SectionRow] | None = None
    case: CaseOutcome | None = Field(None, description="a packet's case checks (null: none, or not a packet)")


class MapRunSummary(StrictModel):
    map_run_arn: str | None = None
    result_files_read: bool = False
    result_writer_bucket: str | None = None
    result_writer_key: str | None = None
    succeeded: int = 0
    failed: int = 0
    pending: int = 0


class ReportApproval(StrictModel):
    """The report's ``approval`` section, written by the RecordApproval step once the operator approved.

    Its times are the operator's (from the decision), not the writer's clock, so rewriting it is byte-stable.
    """

    decision: Literal["approved"]
    decided_by: str
    decided_at: str
    reason: str | None = None
    requested_at: str


class ReportAction(StrictModel):
    """One entry of the report's ``actions`` section (written by RunActions from the actions' done.json, so
    rewriting it is byte-stable). ``outcome``: ``performed`` (done by this job), ``reconciled`` (an earlier
    attempt with an unknown outcome had done it), ``skipped`` (its ``when`` did not hold)."""

    name: str
    type: Literal["http", "eventbridge", "sns", "export"]
    outcome: Literal["performed", "reconciled", "skipped"]
    idempotency_key: str
    reference: str | None = Field(
        None, description="the target's id (http record id, EventBridge event id, SNS message id, export key)"
    )
    done_at: str


class ReportTable(StrictModel):
    """The per-document table beside report.json (docs/design.md, "Report by fan-in"): one row per manifest
    document in index order, as CSV (a header, then the row's own fields and its fields by name) and JSON
    Lines (ReportRow). ``jsonl_segments``: the JSON Lines bytes of each partition, in order (a partition's
    rows are a byte range of rows.jsonl). ``inline``: report.json's ``rows``, ``rejected_documents`` and
    ``failed_documents`` hold them too (jobs up to INLINE_ROWS_MAX documents); else they are empty and the
    table is the report's rows."""

    csv_key: str
    jsonl_key: str
    rows: int
    jsonl_segments: list[int]
    inline: bool
    # the stored results joined (storage.report_results_key), when the definition exports JSON Lines
    results_key: str | None = None
    results_bytes: int | None = None


class Report(StrictModel):
    """jobs/{job_id}/report.json: deterministic for the same inputs (no wall-clock fields of its own).

    ``approval`` is null unless the job required approval and was approved (set by RecordApproval).
    """

    job_id: str
    versions: JobVersions
    documents: int
    extracted: int
    review: int = 0
    rejected: int
    failed: int
    sections: int = Field(
        0, ge=0, description="the packets' sections, each its own result (functions/reading/sections.py)"
    )
    rejection_reasons: dict[str, int]
    # The definition's totals by name, then by the value of its ``by`` field ("" without one): the sum of
    # its ``sum`` field over the accepted (extracted) documents, as text.
    totals: dict[str, dict[str, str]] = Field(default_factory=dict)
    # The rows' model costs summed (functions/spend.py), rounded to the nano-dollar; null: no row has one.
    model_cost_usd: float | None = None
    rows: list[ReportRow]
    rejected_documents: list[ReportRow]
    failed_documents: list[ChildFailure]
    map_run: MapRunSummary
    approval: ReportApproval | None = None
    actions: list[ReportAction] | None = None
    table: ReportTable | None = None


class ReportSummary(StrictModel):
    """build_report's output (and the ``report`` field of later events)."""

    report_key: str
    documents: int = Field(ge=0)
    extracted: int = Field(ge=0)
    review: int = Field(0, ge=0)
    rejected: int = Field(ge=0)

    @classmethod
    def of(cls, report_key: str, report: Report) -> ReportSummary:
        """The summary of ``report``, stored at ``report_key``."""
        return cls(
            report_key=report_key,
            documents=report.documents,
            extracted=report.extracted,
            review=report.review,
            rejected=report.rejected,
        )
