"""The export action above INLINE_ROWS_MAX: report.json no longer carries the rows, the export streams them
from the table (rows.jsonl) and writes the same files as for the same job with its rows inline."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from functions import s3_streams, storage
from functions.actions import export
from functions.definition import ExportAction
from functions.payloads.report import Report
from tests.support import BUCKET, list_keys, s3
from tests.unit.test_report_fan_in import fan_in, report_json, synthetic_job

DOCUMENTS = 600
ACTION = ExportAction(type="export", name="results")


def exported(job_id: str) -> dict[str, bytes]:
    """The job's report exported afresh (the previous files deleted first): each file's bytes by key."""
    prefix = storage.export_prefix(job_id, ACTION.name)
    for key in list_keys(prefix):
        s3().delete_object(Bucket=BUCKET, Key=key)
    report = Report.model_validate(report_json(job_id))
    assert export.export(job_id, ACTION, report) == prefix
    return {key: storage.get_bytes(key) for key in list_keys(prefix)}


def test_the_export_is_the_same_with_the_rows_inline_or_only_in_the_table(
    cloud: None, monkeypatch: Any
) -> None:
    monkeypatch.setattr(export, "READ_BATCH", 64)  # results read in several batches
    monkeypatch.setattr(s3_streams, "READ_CHUNK_BYTES", 4096)  # rows.jsonl streamed in many chunks
    job = synthetic_job("job-export-table", DOCUMENTS, part_size=200)
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
