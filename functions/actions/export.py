"""The export action: the job's results as files in the job bucket, idempotent by construction.

``jobs/{job}/exports/{name}/results.csv`` (one line per report row: the row's own fields, then its extracted
fields by name) and ``results.jsonl`` (each stored result, canonical JSON, in document order). Both are
deterministic bytes built from the stored results, so an attempt whose outcome is unknown just writes them
again: the same objects, the same bytes.

The rows are the report's (``report_rows``): report.json's inline rows, or, above INLINE_ROWS_MAX documents,
the table's rows.jsonl streamed (docs/design.md, "Report by fan-in"); either way the same files. Memory is
bounded: the CSV reads the rows twice (its columns, then its lines) and both files are written in parts
(functions/s3_streams.py). results.jsonl is a server-side copy of report/results.jsonl when the report's
partitions wrote it (a definition exporting JSON Lines: no result is read here, whatever the job's size); else
the results are read RESULTS_READ_BATCH at a time (report_fan_in.result_lines).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from typing import Any

from functions import s3_streams, storage
from functions.definition.action_specs import ExportAction
from functions.logic.report_fan_in import report_rows, result_lines
from functions.payloads.report import Report


def _flat(row: dict[str, Any]) -> dict[str, str]:
    """A report row as text cells: nested objects (the row's fields) spread into one column per field."""
    cells: dict[str, str] = {}
    for name, value in row.items():
        items = value.items() if isinstance(value, dict) else [(name, value)]
        for cell, item in items:
            if item is None:
                cells[cell] = ""
            elif isinstance(item, (dict, list)):
                cells[cell] = json.dumps(item, sort_keys=True, separators=(",", ":"))
            else:
                cells[cell] = str(item)
    return cells


def _flat_rows(report: Report) -> Iterator[dict[str, str]]:
    return (_flat(row.model_dump(mode="json")) for row in report_rows(report))


def write_csv(report: Report, out: s3_streams.MultipartWriter) -> None:
    """The columns are every row's cells in the order they first appear (a first pass over the rows), then
    one line per row (a second pass)."""
    columns: dict[str, None] = {}
    for row in _flat_rows(report):
        columns.update(dict.fromkeys(row))
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=list(columns), lineterminator="\n", restval="")
    writer.writeheader()
    for row in _flat_rows(report):
        writer.writerow(row)
        if text.tell() >= s3_streams.PART_BYTES:
            out.write(text.getvalue().encode("utf-8"))
            text.seek(0)
            text.truncate()
    out.write(text.getvalue().encode("utf-8"))


def write_jsonl(job_id: str, report: Report, out: s3_streams.MultipartWriter) -> None:
    """Every stored result of the report's rows, in index order (a row without a result is left out)."""
    for lines in result_lines(job_id, (row.document_id for row in report_rows(report))):
        out.write(lines)


def export(job_id: str, action: ExportAction, report: Report) -> str:
    """Write the action's files; returns their prefix."""
    for extension in action.formats:
        content_type = "text/csv" if extension == "csv" else "application/x-ndjson"
        key = storage.export_key(job_id, action.name, extension)
        table = report.table
        if (
            extension == "jsonl"
            and table is not None
            and table.results_key
            and table.results_bytes is not None
        ):
            # the report's partitions read the results (report/results.jsonl): a server-side copy here
            s3_streams.join_objects(
                key, [(table.results_key, table.results_bytes)], content_type=content_type
            )
            continue
        with s3_streams.MultipartWriter(key, content_type=content_type) as out:
            if extension == "csv":
                write_csv(report, out)
            else:
                write_jsonl(job_id, report, out)
    return storage.export_prefix(job_id, action.name)
