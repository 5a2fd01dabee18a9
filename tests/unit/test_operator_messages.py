"""What the operator's commands tell a user: no internal tags such as "(R3)" (the shared spec's rule numbers
belong in comments and docstrings), `list --limit` refuses what would silently show nothing, and `status` and
`inspect` count a job's documents with one computation."""

from __future__ import annotations

import ast
import datetime as dt
import json
import re
from pathlib import Path
from typing import Any

import pytest

from docagent import cli
from docagent.operations.context import OperatorContext
from docagent.operations.inspect_documents import document_counts as inspect_counts
from docagent.operations.inspect_documents import document_view
from docagent.operations.records import JobRecords
from functions.payloads.document import DocumentResult
from functions.payloads.job import ManifestEntry

PACKAGE = Path(__file__).resolve().parents[2] / "docagent"
TAG = re.compile(r"\((?:shared spec )?[A-Z]\d{1,2}(?:[,-] ?[A-Z]?\d{1,2})*\)")


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def tagged_messages(source: str) -> list[str]:
    """The strings of a module, docstrings aside, that carry a rule tag such as "(R3)"."""
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
        and TAG.search(node.value)
    ]


def test_user_messages_carry_no_internal_tags():
    found = {
        str(path.relative_to(PACKAGE.parent)): tagged
        for path in sorted(PACKAGE.rglob("*.py"))
        if (tagged := tagged_messages(path.read_text()))
    }
    assert found == {}


def test_the_tag_scan_finds_a_tag_in_a_message_and_not_in_a_docstring():
    source = 'def f():\n    """Why (shared spec R3)."""\n    return "running (R3)", "a (M1-M4) b"\n'
    assert tagged_messages(source) == ["running (R3)", "a (M1-M4) b"]


@pytest.mark.parametrize("limit", ["0", "-1", "ten"])
def test_list_refuses_a_limit_below_one(limit, capsys):
    with pytest.raises(SystemExit) as refused:
        cli.main(["list", "--limit", limit, "--json"])
    assert refused.value.code == 2
    assert "--limit" in capsys.readouterr().err


def closed_job(results: set[str], children: dict[str, str], *, map_run_status: str = "FAILED") -> JobRecords:
    """A job's records after its Map Run closed: which documents have a stored result, each child's status."""
    context = OperatorContext(
        endpoint=None,
        stack_name="DocAgent",
        outputs={"BucketName": "bucket", "StateMachineArn": "arn:aws:states:us-east-1:1:stateMachine:x"},
        session=None,  # type: ignore[arg-type]
    )
    records = JobRecords(context, "job-1")
    groups: dict[str, list[dict[str, Any]]] = {"SUCCEEDED": [], "FAILED": [], "PENDING": []}
    for document_id, status in children.items():
        group = status if status in groups else "FAILED"
        entry = {"Input": json.dumps({"document": {"document_id": document_id}}), "Status": status}
        groups[group].append({**entry, "Error": None if status == "SUCCEEDED" else "ModelThrottled"})
    entries = [
        ManifestEntry(document_id=name, key=f"incoming/{name}", index=i) for i, name in enumerate("abcde")
    ]
    counts = {"total": 5, "succeeded": 1, "failed": 1, "aborted": 2, "pending": 1}
    records.__dict__.update(
        description={"status": "FAILED"},
        map_run={"status": map_run_status, "mapRunArn": "arn:map-run", "itemCounts": counts},
        map_run_files=groups,
        result_ids=results,
        _entries=entries,
        definition={"States": {}},
    )
    return records


def test_status_and_inspect_count_documents_alike():
    """After a throttled document failed the Map Run: a child aborted after storing its result is done (a
    redrive returns it), one aborted before is failed, one never started is pending; status and inspect
    both say so (the Map Run's item counts would say 1 succeeded, 3 failed)."""
    children = {"a": "SUCCEEDED", "b": "ABORTED", "c": "FAILED", "d": "ABORTED"}
    records = closed_job({"a", "b"}, children)
    counts = records.document_counts()
    assert counts == {
        "total": 5,
        "succeeded": 2,
        "failed": 2,
        "running": 0,
        "pending": 1,
        "results_stored": 2,
    }
    at = dt.datetime.now(dt.UTC)
    by_document = records.map_run_entries_by_document()
    views = [
        document_view(
            records,
            at,
            entry,
            result=DocumentResult.model_construct(status="extracted")
            if entry.document_id in {"a", "b"}
            else None,
            calls=[],
            steps={},
            map_entry=by_document.get(entry.document_id),
            redrives=[],
            processor_task=None,
        )
        for entry in records.entries()
    ]
    inspected = inspect_counts(views)
    assert (inspected["committed"], inspected["failed"], inspected["pending"]) == (2, 2, 1)
    # While the Map Run runs, its item counts are what there is.
    running = closed_job({"a"}, {}, map_run_status="RUNNING")
    assert running.document_counts()["failed"] == 3 and running.document_counts()["pending"] == 1
