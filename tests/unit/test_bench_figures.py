"""`docagent bench`'s figures: CPU seconds counted from getrusage, and the text view's per-operation table."""

from __future__ import annotations

import subprocess
import sys

import pytest
from rich.console import Console

from docagent.drills.benchmarks import print_figures
from docagent.drills.cpu import cpu_clock, cpu_figures


def test_a_child_process_cpu_counts_once_it_has_exited():
    before = cpu_clock()
    burn = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass\n"
    subprocess.run([sys.executable, "-c", burn], check=True)
    after = cpu_clock()
    figures = cpu_figures(before, after, after, documents=2)
    assert figures["workers"] >= 0.3
    # The parts are rounded to hundredths; the per-document figure is computed before rounding.
    parts = figures["workers"] + figures["endpoint_process"]
    assert figures["per_document"] == pytest.approx(parts / 2, abs=0.01)


def test_the_text_view_shows_milliseconds_requests_and_cpu_by_operation():
    run = {
        "documents": 200,
        "documents_per_child": 1,
        "status": "SUCCEEDED",
        "wall_seconds": 30.5,
        "phase_seconds": {"synth": 0.0, "job": 20.0},
        "job_seconds_per_document": 0.1,
        "cpu_seconds": {"endpoint_process": 20.0, "workers": 30.0, "per_document": 0.25},
        "requests_per_document_by_operation": {"dynamodb:PutItem": 2.05, "s3:GetObject": 3.3},
        "endpoint_ms_per_request": {"dynamodb:PutItem": 18.25, "s3:GetObject": 1.5},
        "endpoint_cpu_ms_per_document": {"dynamodb:PutItem": 7.5, "s3:GetObject": 4.25},
    }
    figures = {
        "lambda_overhead": {"invocations": 300, "runtime_median_ms": 1.2, "endpoint_median_ms": 5.4},
        "persistence": {
            "changes_each": 300,
            "in_memory": {"s3_put_median_ms": 3.0, "dynamodb_put_median_ms": 2.0},
            "on_disk": {"s3_put_median_ms": 9.0, "dynamodb_put_median_ms": 8.0},
            "restart": {"ms_per_change": 0.5},
        },
        "demo": [run],
    }
    console = Console(record=True, width=200)
    print_figures(figures, console)
    text = console.export_text()
    assert "CPU 0.25 s per document (endpoint process 20.0 s, workers 30.0 s)" in text
    rows = {
        line.split("│")[1].strip(): line.split("│")[2:5] for line in text.splitlines() if line.count("│") == 5
    }
    assert [cell.strip() for cell in rows["dynamodb:PutItem"]] == ["2.05", "18.25", "7.50"]
    assert [cell.strip() for cell in rows["s3:GetObject"]] == ["3.3", "1.50", "4.25"]
