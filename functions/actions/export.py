"""The export action: the job's results as files in the job bucket, idempotent by construction.

``jobs/{job}/exports/{name}/results.csv`` (one line per report row: the row's own fields, then its extracted
fields by name) and ``results.jsonl`` (each stored result, canonical JSON, in document order). Both are
deterministic bytes built from the stored results, so an attempt whose outcome is unknown just writes them
again: the same objects, the same bytes.
"""

from __future__ import annotations

import csv
import io
import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from functions import storage
from functions.definition import ExportAction
from functions.payloads.report import Report

_READ_WORKERS = 16


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


def results_csv(report: Report) -> bytes:
    rows = [_flat(row.model_dump(mode="json")) for row in sorted(report.rows, key=lambda r: r.index)]
    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(row))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(columns), lineterminator="\n", restval="")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue().encode("utf-8")


def results_jsonl(job_id: str, report: Report) -> bytes:
    """Every stored result of the report's rows, in index order (a row without a result is left out)."""
    ids = [row.document_id for row in sorted(report.rows, key=lambda r: r.index)]

    def read(document_id: str) -> Any:
        return storage.get_json_or_none(storage.result_key(job_id, document_id))

    if not ids:
        return b""
    with ThreadPoolExecutor(max_workers=min(_READ_WORKERS, len(ids))) as pool:
        results = list(pool.map(read, ids))
    lines = [json.dumps(result, sort_keys=True, separators=(",", ":")) for result in results if result]
    return "".join(f"{line}\n" for line in lines).encode("utf-8")


def export(job_id: str, action: ExportAction, report: Report) -> str:
    """Write the action's files; returns their prefix."""
    for extension in action.formats:
        data = results_csv(report) if extension == "csv" else results_jsonl(job_id, report)
        content_type = "text/csv" if extension == "csv" else "application/x-ndjson"
        storage.put_bytes(storage.export_key(job_id, action.name, extension), data, content_type=content_type)
    return storage.export_prefix(job_id, action.name)
