"""VerifyJob's event and what the verification found."""

from __future__ import annotations

from pydantic import Field

from functions.payloads.common import JOB_ID_PATTERN, StrictModel
from functions.payloads.job import JobOptions
from functions.payloads.report import ReportAction, ReportSummary


class VerifyJobEvent(StrictModel):
    job_id: str = Field(pattern=JOB_ID_PATTERN)
    report: ReportSummary
    actions: list[ReportAction] | None = Field(
        None, description="RunActions' output, checked against storage"
    )
    retry_count: int = Field(0, ge=0)
    redrive_count: int = Field(0, ge=0)
    options: JobOptions = Field(default_factory=JobOptions)


class Verification(StrictModel):
    verified: bool
    checks: dict[str, str]
