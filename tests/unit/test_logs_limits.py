"""``docagent logs``: by default every line of the job, however many; limits keep the newest lines."""

from __future__ import annotations

from typing import Any

from docagent.operations.logs import newest


def _lines(documents: int, per_document: int) -> list[dict[str, Any]]:
    """A job's lines in time order: a job-level line, then each document's lines interleaved."""
    lines: list[dict[str, Any]] = [{"document_id": None, "message": "job started"}]
    for attempt in range(per_document):
        lines += [{"document_id": f"d{index}", "message": f"line {attempt}"} for index in range(documents)]
    lines.append({"document_id": None, "message": "job finished"})
    return lines


def test_the_default_shows_a_job_with_more_lines_than_the_old_limit_whole():
    lines = _lines(documents=300, per_document=5)  # 1,502 lines: the old default (1,000) cut 502
    assert newest(lines, None, None) == lines


def test_per_document_keeps_each_documents_newest_lines_and_every_job_line():
    lines = _lines(documents=3, per_document=4)
    kept = newest(lines, None, 2)
    assert [line["message"] for line in kept if line["document_id"] is None] == [
        "job started",
        "job finished",
    ]
    for document in ("d0", "d1", "d2"):
        assert [line["message"] for line in kept if line["document_id"] == document] == ["line 2", "line 3"]
    assert kept == [line for line in lines if line in kept]  # still in time order


def test_limit_keeps_the_newest_lines_and_zero_keeps_none():
    lines = _lines(documents=2, per_document=3)
    assert newest(lines, 3, None) == lines[-3:]
    assert newest(lines, 0, None) == []
    assert newest(lines, -1, None) == lines
    assert newest(lines, 3, 1) == [lines[-3], lines[-2], lines[-1]]
