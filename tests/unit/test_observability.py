"""Each model call is recorded with the OpenTelemetry GenAI attribute names, in the log and as a metric."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys

from functions.handlers.process_document import handler
from functions.spans import SPAN_END, SPAN_START, trace_id_for
from tests.fakes import FakeLambdaContext
from tests.support import document_event, items, prepare, seed_documents


def test_model_call_is_logged_with_genai_attributes_and_counted(cloud, capsys, caplog):
    seed_documents(1)
    job = prepare("job-otel")
    capsys.readouterr()
    with caplog.at_level(logging.INFO, logger="docagent"):
        handler(document_event(job, items(job)[0]).model_dump(mode="json"), FakeLambdaContext())

    [call] = [record.__dict__ for record in caplog.records if record.getMessage() == "model call"]
    assert call["gen_ai.system"] == "test.fake"
    assert call["gen_ai.operation.name"] == "chat"
    assert call["gen_ai.request.model"] == "fake-model"
    assert call["gen_ai.usage.input_tokens"] > 0
    assert call["gen_ai.usage.output_tokens"] > 0
    assert call["outcome"] == "ok"

    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith('{"_aws"')]
    [emf] = lines
    directive = emf["_aws"]["CloudWatchMetrics"][0]
    assert directive["Namespace"] == "DocAgent"
    assert {metric["Name"] for metric in directive["Metrics"]} >= {"ModelCalls", "DocumentsExtracted"}
    assert emf["ModelCalls"] == [1.0]
    assert emf["service"] == "docagent"


def test_every_boundary_of_a_document_is_a_span_of_its_jobs_trace(cloud, caplog):
    seed_documents(1)
    job = prepare("job-spans")
    with caplog.at_level(logging.INFO, logger="docagent"):
        handler(document_event(job, items(job)[0]).model_dump(mode="json"), FakeLambdaContext())
    starts = [r.__dict__ for r in caplog.records if r.getMessage() == SPAN_START]
    ends = {r.__dict__["span_id"]: r.__dict__ for r in caplog.records if r.getMessage() == SPAN_END}
    assert [s["span_name"] for s in starts] == [
        "document",
        "extract",
        "model call",
        "lookup-known-customer",
        "store",
    ]
    assert {s["span_id"] for s in starts} == set(ends), "every span that started ended"
    document = starts[0]
    assert document["parent_span_id"] is None
    assert {s["trace_id"] for s in starts} == {trace_id_for("job-spans")}
    assert all(s["job_id"] == "job-spans" and s["document_id"] == document["document_id"] for s in starts)
    assert all((s["attempt"], s["redrive_count"]) == (0, 0) for s in starts)
    by_name = {s["span_name"]: s for s in starts}
    assert by_name["model call"]["parent_span_id"] == by_name["extract"]["span_id"]
    assert by_name["extract"]["parent_span_id"] == document["span_id"]
    call = ends[by_name["model call"]["span_id"]]
    assert call["status"] == "OK" and call["outcome"] == "ok"
    assert call["attributes"]["gen_ai.request.model"] == "fake-model"
    assert call["attributes"]["gen_ai.operation.name"] == "chat"
    assert call["attributes"]["purpose"] == "extract"
    assert call["attributes"]["gen_ai.provider.name"] == "test.fake"
    assert call["attributes"]["gen_ai.usage.input_tokens"] > 0
    assert call["attributes"]["gen_ai.response.finish_reasons"] == ["stop"]
    assert ends[document["span_id"]]["outcome"] == "extracted"
    assert ends[by_name["extract"]["span_id"]]["attributes"]["durable_record_reused"] is False
    assert call["end_time_unix_nano"] >= call["start_time_unix_nano"]


def _tracer_in_a_new_process(**env: str) -> dict[str, object]:
    """The Tracer's provider and whether the X-Ray SDK's recorder was imported, in a fresh interpreter."""
    script = (
        "import json, sys\n"
        "from functions.observability import tracer\n"
        "print(json.dumps({'provider': type(tracer.provider).__name__, 'disabled': tracer.disabled,\n"
        "                  'xray_core': 'aws_xray_sdk.core' in sys.modules}))\n"
    )
    clean = {
        k: v for k, v in os.environ.items() if k not in {"POWERTOOLS_TRACE_DISABLED", "LAMBDA_TASK_ROOT"}
    }
    done = subprocess.run(
        [sys.executable, "-c", script], env={**clean, **env}, capture_output=True, text=True, check=True
    )
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_tracing_off_imports_no_xray_sdk_and_on_lambda_traces_with_xray() -> None:
    assert _tracer_in_a_new_process(POWERTOOLS_TRACE_DISABLED="true", LAMBDA_TASK_ROOT="/var/task") == {
        "provider": "NoTracing",
        "disabled": True,
        "xray_core": False,
    }
    assert _tracer_in_a_new_process() == {"provider": "NoTracing", "disabled": True, "xray_core": False}
    on_lambda = _tracer_in_a_new_process(LAMBDA_TASK_ROOT="/var/task")
    assert on_lambda == {"provider": "AsyncAWSXRayRecorder", "disabled": False, "xray_core": True}
