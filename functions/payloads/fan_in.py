"""The report's and the verification's fan-in (docs/design.md, "Report by fan-in", "Verification by fan-in"):
partitions of a job (one per manifest part), their events and what each leaves in S3."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from functions.payloads.common import JOB_ID_PATTERN, StrictModel
from functions.payloads.job import JobOptions
from functions.payloads.report import ChildFailure, MapRunInfo, MapRunSummary, ReportRow, ReportSummary

# The Distributed Maps of the fan-in (statemachines/document_review.asl.json): not the review's Map Run.
FAN_IN_MAP_LABELS = frozenset({"report-partitions", "verify-partitions"})


def map_run_label(map_run_arn: str) -> str:
    """``...:mapRun:{state machine}/{label}:{id}`` → label."""
    return map_run_arn.split(":mapRun:", 1)[-1].rsplit(":", 1)[0].rsplit("/", 1)[-1]


class Partition(StrictModel):
    """One partition of a job: a manifest part (``key`` null: the entries inline in a manifest from before
    the paged listing), its documents ``first_index`` .. ``first_index + count - 1``. ``list_after`` /
    ``list_until``: the range of result names (``{document_id}.json``) whose orphans this partition looks
    for, exclusive / inclusive (null: unbounded); the partitions' ranges cover every name exactly once."""

    partition: int = Field(ge=0)
    key: str | None = None
    first_index: int = Field(ge=0)
    count: int = Field(ge=0)
    list_after: str | None = None
    list_until: str | None = None
    routed: int = Field(0, ge=0, description="objects of rows SummarizeResults routed to it")


class ReportPlan(StrictModel):
    """jobs/{job}/report/plan.json, SummarizeResults' output: the Map Run's counts and the partitions."""

    map_run: MapRunSummary
    partitions: list[Partition]


class SummarizeEvent(StrictModel):
    action: Literal["summarize"]
    job_id: str = Field(pattern=JOB_ID_PATTERN)
    map_run: MapRunInfo = Field(default_factory=MapRunInfo)
    options: JobOptions = Field(default_factory=JobOptions)
    retry_count: int = Field(0, ge=0)
    redrive_count: int = Field(0, ge=0)


class PartitionEvent(StrictModel):
    """A ReportPartitions child (``partial``) or a VerifyPartitions child (``verify_partition``)."""

    action: Literal["partial", "verify_partition"]
    job_id: str = Field(pattern=JOB_ID_PATTERN)
    partition: Partition
    options: JobOptions = Field(default_factory=JobOptions)
    report: ReportSummary | None = None
    retry_count: int = Field(0, ge=0)
    redrive_count: int = Field(0, ge=0)


class PartitionDone(StrictModel):
    """A partition child's output (small: the Map keeps no result)."""

    partition: int
    key: str


class RoutedItem(StrictModel):
    """One line of jobs/{job}/report/rows/part-NNNNN/*.jsonl: a succeeded child's row, or a failed or pending
    child's failure for one of its documents."""

    row: ReportRow | None = None
    failure: ChildFailure | None = None


class ReportCounts(StrictModel):
    """What adds up across partitions: counts, rejection reasons, the definition's totals (exact decimal
    sums as text), the model cost in nano-dollars (null: no row carries one)."""

    documents: int = 0
    extracted: int = 0
    review: int = 0
    rejected: int = 0
    failed: int = 0
    sections: int = 0  # a packet's sections (functions/reading/sections.py)
    rejection_reasons: dict[str, int] = Field(default_factory=dict)
    totals: dict[str, dict[str, str]] = Field(default_factory=dict)
    cost_nano: int | None = None


class ReportPartial(StrictModel):
    """jobs/{job}/report/partials/part-NNNNN.json: one partition's counts, its rejected rows and failures,
    and its table segments' sizes (``csv_bytes`` includes the header in partition 0)."""

    partition: int
    counts: ReportCounts
    rejected_documents: list[ReportRow]
    failed_documents: list[ChildFailure]
    csv_bytes: int
    jsonl_bytes: int
    results_bytes: int | None = None  # its stored results' segment (the definition exports JSON Lines)


class SampleVerdict(StrictModel):
    """One sampled result, as a partition found it: its hash rank (the job-wide sample takes the lowest)."""

    document_id: str
    rank: str
    problem: Literal["invalid", "differs"] | None = None


class PartitionVerdict(StrictModel):
    """jobs/{job}/verify/part-NNNNN.json: what VerifyPartitions found for one partition (counts of the rows
    whose document has a stored result, by status; the first documents of each problem and their number)."""

    partition: int
    key: str | None
    documents: int
    missing: list[str] = Field(default_factory=list)
    missing_count: int = 0
    orphan_candidates: list[str] = Field(default_factory=list)
    rows_cover_partition: bool = True
    rows_without_result: list[str] = Field(default_factory=list)
    rows_without_result_count: int = 0
    stored_by_status: dict[str, int] = Field(default_factory=dict)
    unjournalled: list[str] = Field(default_factory=list)
    unjournalled_count: int = 0
    sample: list[SampleVerdict] = Field(default_factory=list)
    smallest_name: str | None = None
    largest_name: str | None = None
