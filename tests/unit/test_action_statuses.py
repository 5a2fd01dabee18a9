"""The actions' `when` and payload read the report's counts: the same as its rows' statuses when the rows are
inline, and still right when they are only in the table (a job above INLINE_ROWS_MAX documents)."""

from __future__ import annotations

from collections import Counter

from functions.actions.send import statuses, when_holds
from functions.definition.action_specs import HttpAction
from functions.payloads.job import JobVersions
from functions.payloads.report import MapRunSummary, Report, ReportRow, ReportTable

VERSIONS = JobVersions(
    model_id="m",
    prompt_version="p",
    prompt_sha256="0" * 64,
    code_version="c",
    created_at="2026-12-04T00:00:00Z",
)


def row(index: int, status: str) -> ReportRow:
    return ReportRow.model_validate(
        {"document_id": f"d{index}", "index": index, "key": f"k{index}", "status": status}
    )


def report(rows: list[ReportRow], **counts: int) -> Report:
    return Report(
        job_id="job-statuses",
        versions=VERSIONS,
        documents=sum(counts.values()),
        extracted=counts.get("extracted", 0),
        review=counts.get("review", 0),
        rejected=counts.get("rejected", 0),
        failed=counts.get("failed", 0),
        rejection_reasons={},
        rows=rows,
        rejected_documents=[],
        failed_documents=[],
        map_run=MapRunSummary(),
    )


def test_inline_rows_and_counts_say_the_same() -> None:
    rows = [row(0, "extracted"), row(1, "rejected"), row(2, "review"), row(3, "failed"), row(4, "extracted")]
    inline = report(rows, extracted=2, rejected=1, review=1, failed=1)
    by_rows = Counter(str(r.status) for r in rows)
    assert {name: statuses(inline)[name] for name in by_rows} == dict(by_rows)


def test_a_report_whose_rows_are_only_in_the_table_still_decides_the_when() -> None:
    table = ReportTable(csv_key="c", jsonl_key="j", rows=150_001, jsonl_segments=[1], inline=False)
    big = report([], extracted=150_000, rejected=1).model_copy(update={"table": table})
    action = HttpAction.model_validate({"type": "http", "name": "ticket", "url": "destination:tickets"})
    assert when_holds(action.model_copy(update={"when": "any_rejected"}), big)
    assert not when_holds(action.model_copy(update={"when": "all_accepted"}), big)
