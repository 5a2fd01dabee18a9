"""The export action above INLINE_ROWS_MAX: report.json no longer carries the rows, the export streams them
from the table (rows.jsonl) and writes the same files as for the same job with its rows inline."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from functions import s3_json, s3_streams, storage
from functions.actions import export
from functions.definition.action_specs import ExportAction
from functions.logic import report_fan_in
from functions.payloads.report import Report
from tests.support import BUCKET, list_keys, s3
from tests.unit.test_report_fan_in import fan_in, report_json, synthetic_job

DOCUMENTS = 300
ACTION = ExportAction(type="export", name="results")


def exported(job_id: str) -> dict[str, bytes]:
    """The job's report exported afresh (the previous files deleted first): each file's bytes by key."""
    prefix = storage.export_prefix(job_id, ACTION.name)
    for key in list_keys(prefix):
        s3().delete_object(Bucket=BUCKET, Key=key)
    report = Report.model_validate(report_json(job_id))
    assert export.export(job_id, ACTION, report) == prefix
    return {key: s3_json.get_bytes(key) for key in list_keys(prefix)}


def test_the_export_is_the_same_with_the_rows_inline_or_only_in_the_table(
    cloud: None, monkeypatch: Any
) -> None:
    monkeypatch.setattr(report_fan_in, "RESULTS_READ_BATCH", 64)  # results read in several batches
    monkeypatch.setattr(s3_streams, "READ_CHUNK_BYTES", 4096)  # rows.jsonl streamed in many chunks
    job = synthetic_job("job-export-table", DOCUMENTS, part_size=100)
    fan_in(job)
    inline = Report.model_validate(report_json(job.job_id))
    assert inline.table is not None and inline.table.inline and len(inline.rows) == DOCUMENTS
    before = exported(job.job_id)

    monkeypatch.setattr("functions.logic.report_fan_in.INLINE_ROWS_MAX", 100)
    fan_in(job)
    big = Report.model_validate(report_json(job.job_id))
    assert big.table is not None and not big.table.inline and big.rows == []
    after = exported(job.job_id)

    assert after == before
    prefix = storage.export_prefix(job.job_id, ACTION.name)
    table = list(csv.DictReader(io.StringIO(after[f"{prefix}results.csv"].decode())))
    assert [row["document_id"] for row in table] == [row.document_id for row in inline.rows]
    assert {row["status"] for row in table} == {"extracted", "review", "rejected", "failed"}
    results = [json.loads(line) for line in after[f"{prefix}results.jsonl"].decode().splitlines()]
    stored = {
        key.rsplit("/", 1)[1].removesuffix(".json") for key in list_keys(storage.results_prefix(job.job_id))
    }
    in_order = [row.document_id for row in inline.rows if row.document_id in stored]
    assert [result["document_id"] for result in results] == in_order and len(in_order) > DOCUMENTS // 2


def test_a_definition_exporting_json_lines_has_its_report_partitions_read_the_results(
    cloud: None, monkeypatch: Any
) -> None:
    """With an export action of JSON Lines in the definition, each report partition writes its stored results
    and BuildReport joins them (report/results.jsonl): the export copies it, never reading a result itself,
    and its bytes are those of the export that reads every result (docs/design.md, "Report by fan-in")."""
    monkeypatch.setattr(report_fan_in, "RESULTS_READ_BATCH", 64)
    job = synthetic_job("job-export-joined", DOCUMENTS, actions=[ACTION], part_size=100)
    plan, _ = fan_in(job)
    report = Report.model_validate(report_json(job.job_id))
    assert report.table is not None and report.table.results_key == storage.report_results_key(job.job_id)
    segments = [storage.report_segment_key(job.job_id, p.partition, "results.jsonl") for p in plan.partitions]
    assert len(segments) == 3 and all(key in list_keys(storage.report_root(job.job_id)) for key in segments)
    joined = exported(job.job_id)

    read = {key: value for key, value in joined.items() if key.endswith(".jsonl")}
    reads: list[str] = []
    monkeypatch.setattr(
        export, "result_lines", lambda *args: reads.append("read") or iter(())
    )  # the export must not read a result when the report joined them
    assert exported(job.job_id) == joined and reads == []
    monkeypatch.undo()
    # the same job without the joined results: the export reads every result, to the same bytes
    without = report.model_copy(update={"table": report.table.model_copy(update={"results_key": None})})
    prefix = storage.export_prefix(job.job_id, ACTION.name)
    export.export(job.job_id, ACTION, without)
    assert s3_json.get_bytes(f"{prefix}results.jsonl") == read[f"{prefix}results.jsonl"]
    lines = read[f"{prefix}results.jsonl"].decode().splitlines()
    assert len(lines) > DOCUMENTS // 2 and all(json.loads(line)["job_id"] == job.job_id for line in lines)
