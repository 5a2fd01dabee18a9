"""The report by fan-in (functions/logic/report_fan_in.py) against the previous path (build_report):
the same report, field by field, for the same 1,000-document job (every kind of document, seven partitions,
several result files and routed objects each: what the logic does at any size; `docagent bench --fan-in` runs
it at a million); the table streamed beside it. The jobs are written straight into moto (tests/moto_state.py
``put_straight``): what the fan-in reads of them goes through the API."""

from __future__ import annotations

import csv
import io
import json
from decimal import Decimal
from functools import partial
from typing import Any

import pytest

from docagent.drills.fan_in_job import SyntheticJob, kind_of, write_fan_in_job
from functions import s3_json, s3_streams, storage
from functions.handlers.build_report import handler
from functions.logic.build_report import build_report
from functions.logic.report_fan_in import merge_report, read_plan, report_partition, summarize_results
from functions.payloads.fan_in import PartitionEvent, ReportPlan, SummarizeEvent
from functions.payloads.job import JobOptions, JobVersions
from functions.payloads.report import BuildReportEvent, Report, ReportSummary
from functions.reviews import ReviewDecision, decision_id
from tests.fakes import FakeLambdaContext
from tests.moto_state import put_straight
from tests.support import BUCKET, example_bundle, publish_definition, s3

DOCUMENTS = 1000


def synthetic_job(
    job_id: str,
    documents: int = DOCUMENTS,
    *,
    actions: list[Any] | None = None,
    clean: bool = False,
    **sizes: int,
) -> SyntheticJob:
    """A job of ``documents`` synthetic results under the invoice example's definition (with ``actions``
    instead of its own, when given); ``clean``: every document extracted (a job that verifies)."""
    bundle = example_bundle("invoices")
    if actions is not None:
        definition = bundle.definition.model_copy(update={"actions": actions})
        bundle = bundle.model_copy(update={"definition": definition})
    publish_definition(bundle)
    versions = JobVersions(
        model_id="m",
        prompt_version="p",
        prompt_sha256="0" * 64,
        code_version="c",
        created_at="2026-12-04T00:00:00Z",
        definition=bundle.name,
        definition_sha256=bundle.sha256,
    )
    sizes = {"part_size": 300, "entries_per_file": 700, **sizes}
    return write_fan_in_job(
        s3(),
        BUCKET,
        job_id,
        documents,
        bundle=bundle,
        versions=versions,
        clean=clean,
        put=partial(put_straight, BUCKET),
        **sizes,
    )


def fan_in(job: SyntheticJob) -> tuple[ReportPlan, ReportSummary]:
    """What the state machine runs: SummarizeResults, a ReportPartitions child per partition, BuildReport."""
    plan = summarize_results(SummarizeEvent(action="summarize", job_id=job.job_id, map_run=job.map_run))
    for partition in plan.partitions:
        report_partition(PartitionEvent(action="partial", job_id=job.job_id, partition=partition))
    event = BuildReportEvent(job_id=job.job_id, map_run=job.map_run)
    return plan, merge_report(event, plan)


def report_json(job_id: str) -> dict[str, Any]:
    data = s3_json.get_json(storage.report_key(job_id))
    assert isinstance(data, dict)
    return data


def test_the_fan_in_report_is_the_previous_report_field_by_field(cloud: None, monkeypatch: Any) -> None:
    # each partition's routed rows (~40 KB here) written in several objects, as a big job's are
    monkeypatch.setattr("functions.logic.report_fan_in.ROUTED_FLUSH_BYTES", 8192)
    job = synthetic_job("job-fan-in-1000", part_size=150, entries_per_file=350)
    before = build_report(BuildReportEvent(job_id=job.job_id, map_run=job.map_run))
    previous = report_json(job.job_id)

    plan, after = fan_in(job)
    current = report_json(job.job_id)

    assert len(plan.partitions) == 7  # 1,000 documents in parts of 150
    assert all(partition.routed > 1 for partition in plan.partitions)
    assert job.map_run.ResultWriterDetails is not None
    files = s3_json.get_json(job.map_run.ResultWriterDetails.Key)["ResultFiles"]
    assert len(files["SUCCEEDED"]) == 3  # result files of 350 entries: each one's rows routed to 3 partitions
    assert after == before
    assert set(current) == set(previous)
    assert previous.pop("table") is None and current["table"]["rows"] == DOCUMENTS  # the one addition
    for name, value in previous.items():
        assert current[name] == value, f"report.json's {name} differs"
    # The job exercises every path of the rows: each kind of document is in the report.
    statuses = {row["status"] for row in previous["rows"]}
    assert statuses == {"extracted", "review", "rejected", "failed"}
    errors = {failure["error"] for failure in previous["failed_documents"]}
    assert errors == {"States.TaskFailed", None, "NoResult"}  # failed child, pending child, unrecorded
    assert previous["map_run"]["result_files_read"] is True
    assert previous["totals"]["amount-by-currency"].keys() == {"EUR", "GBP", "USD"}
    # both paths sum the extracted rows only (the default counts): no review or rejected row adds to a total
    expected: dict[str, Decimal] = {}
    for row in previous["rows"]:
        if row["status"] == "extracted":
            currency = row["fields"]["currency"]
            expected[currency] = expected.get(currency, Decimal(0)) + Decimal(row["fields"]["amount"])
    assert current["totals"]["amount-by-currency"] == {
        name: str(sum_) for name, sum_ in sorted(expected.items())
    }


def test_the_table_holds_every_row_in_index_order_as_csv_and_json_lines(cloud: None) -> None:
    job = synthetic_job("job-fan-in-table", 1000, part_size=250)
    fan_in(job)
    report = Report.model_validate(report_json(job.job_id))
    assert report.table is not None and report.table.inline
    lines = s3_json.get_bytes(report.table.jsonl_key).decode().splitlines()
    assert [json.loads(line) for line in lines] == [row.model_dump(mode="json") for row in report.rows]
    assert report.table.jsonl_segments and sum(report.table.jsonl_segments) == len("\n".join(lines)) + 1
    table = list(csv.DictReader(io.StringIO(s3_json.get_bytes(report.table.csv_key).decode())))
    assert [row["document_id"] for row in table] == [row.document_id for row in report.rows]
    assert [row["status"] for row in table] == [row.status for row in report.rows]
    extracted = next(i for i in range(1000) if kind_of(i) == "extracted")
    assert table[extracted]["currency"] == report.rows[extracted].fields["currency"]


def test_above_the_inline_cap_the_rows_are_only_in_the_table(cloud: None, monkeypatch: Any) -> None:
    monkeypatch.setattr("functions.logic.report_fan_in.INLINE_ROWS_MAX", 100)
    job = synthetic_job("job-fan-in-big", 600, part_size=200)
    fan_in(job)
    report = Report.model_validate(report_json(job.job_id))
    assert report.table is not None and not report.table.inline
    assert (report.rows, report.rejected_documents, report.failed_documents) == ([], [], [])
    assert report.documents == report.table.rows == 600
    assert len(s3_json.get_bytes(report.table.jsonl_key).decode().splitlines()) == 600


def test_the_handler_merges_the_plan_or_takes_the_previous_path_without_one(cloud: None) -> None:
    job = synthetic_job("job-fan-in-handler", 400)
    event = {"job_id": job.job_id, "map_run": job.map_run.model_dump(mode="json")}
    assert read_plan(job.job_id) is None
    previous = handler(event, FakeLambdaContext())
    assert report_json(job.job_id)["table"] is None

    plan = handler({**event, "action": "summarize"}, FakeLambdaContext())
    for partition in plan["partitions"]:
        done = handler(
            {"action": "partial", "job_id": job.job_id, "partition": partition}, FakeLambdaContext()
        )
        assert done["key"] == storage.report_partial_key(job.job_id, partition["partition"])
    assert handler(event, FakeLambdaContext()) == previous
    assert report_json(job.job_id)["table"]["rows"] == 400


def test_a_repeat_of_every_step_writes_the_same_report(cloud: None) -> None:
    job = synthetic_job("job-fan-in-repeat", 500)
    fan_in(job)
    first = s3_json.get_bytes(storage.report_key(job.job_id))
    table = s3_json.get_bytes(storage.report_table_key(job.job_id, "csv"))
    fan_in(job)
    assert s3_json.get_bytes(storage.report_key(job.job_id)) == first
    assert s3_json.get_bytes(storage.report_table_key(job.job_id, "csv")) == table


@pytest.mark.parametrize("chunk", [1, 7, 4096])
def test_json_values_are_streamed_from_arrays_and_json_lines(
    cloud: None, monkeypatch: Any, chunk: int
) -> None:
    monkeypatch.setattr(s3_streams, "READ_CHUNK_BYTES", chunk)
    values: list[Any] = [{"a": "é€𝄞", "n": [1, 2.5, None]}, 12345, "text, with ] and [", True, {"b": {}}]
    s3_json.put_bytes("streams/array.json", json.dumps(values).encode(), content_type="application/json")
    body = "".join(json.dumps(value) + "\n" for value in values).encode()
    s3_json.put_bytes("streams/lines.jsonl", body, content_type="application/jsonl")
    assert list(s3_streams.iter_json_values("streams/array.json")) == values
    assert list(s3_streams.iter_json_values("streams/lines.jsonl")) == values


def test_a_joined_table_is_its_segments_in_order(cloud: None, monkeypatch: Any) -> None:
    monkeypatch.setattr(s3_streams, "MIN_PART_BYTES", 5 * 1024 * 1024)
    big = b"x" * (5 * 1024 * 1024 + 3)
    parts = [("seg/0", b"head\n"), ("seg/1", big), ("seg/2", b"tail")]
    for key, body in parts:
        s3_json.put_bytes(key, body, content_type="text/plain")
    size = s3_streams.join_objects(
        "seg/joined", [(key, len(body)) for key, body in parts], content_type="text/plain"
    )
    assert s3_json.get_bytes("seg/joined") == b"".join(body for _, body in parts)
    assert size == sum(len(body) for _, body in parts)


def test_with_the_review_wait_both_paths_apply_the_same_decisions(cloud: None) -> None:
    job = synthetic_job("job-fan-in-review", 600, part_size=150)
    reviewed = [index for index in range(600) if kind_of(index) == "review"]
    assert len(reviewed) >= 6
    for number, index in enumerate(reviewed[:6]):
        document_id = f"doc-{index:07d}.pdf"
        decision = ReviewDecision(
            decision_id=decision_id(job.job_id, document_id),
            job_id=job.job_id,
            document_id=document_id,
            verdict="accepted" if number % 2 else "rejected",
            class_name="invoice",
            fields={"currency": "CHF", "amount": "10.00"},
            reason=None if number % 2 else "not ours",
            decided_by="reviewer",
            decided_at="2026-12-04T01:00:00Z",
        )
        s3_json.put_json(storage.review_key(job.job_id, document_id), decision)
    options = JobOptions(wait_for_review=True)
    build_report(BuildReportEvent(job_id=job.job_id, map_run=job.map_run, options=options))
    previous = report_json(job.job_id)
    plan = summarize_results(SummarizeEvent(action="summarize", job_id=job.job_id, map_run=job.map_run))
    for partition in plan.partitions:
        event = PartitionEvent(action="partial", job_id=job.job_id, partition=partition, options=options)
        report_partition(event)
    merge_report(BuildReportEvent(job_id=job.job_id, map_run=job.map_run, options=options), plan)
    current = report_json(job.job_id)
    current.pop("table")
    previous.pop("table")
    assert current == previous
    assert "CHF" in current["totals"]["amount-by-currency"]  # an accepted correction counts
    assert current["rejection_reasons"].get("ReviewRejected", 0) >= 1
