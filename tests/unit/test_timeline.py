"""tests/timeline.py's report: each worker's span and CPU, and the files that cost the most CPU first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.timeline import report


def test_the_report_gives_each_workers_span_and_the_costliest_files_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = [
        {"event": "start", "at": 100.0, "cpu": 1.0},
        {"event": "test", "id": "spec/a.py::t1", "start": 101, "end": 102, "cpu": 2.0, "machine_cpu": 2.5},
        {"event": "test", "id": "spec/b.py::t1", "start": 102, "end": 110, "cpu": 9.0, "machine_cpu": 12.0},
        {"event": "test", "id": "spec/a.py::t2", "start": 110, "end": 111, "cpu": 3.0, "machine_cpu": 3.5},
        {"event": "end", "at": 112.5, "cpu": 15.5},
    ]
    (tmp_path / "gw0.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    report(tmp_path)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "gw0: 3 tests, ended at 12.5 s, CPU 15.5 s"
    assert [line.split()[-1] for line in lines[1:]] == ["spec/b.py", "spec/a.py"]
    assert lines[2].split()[0] == "5.0"  # a.py's CPU: its two tests
    assert [line.split()[3] for line in lines[1:]] == ["12.0", "6.0"]  # and the machine's CPU beside it
