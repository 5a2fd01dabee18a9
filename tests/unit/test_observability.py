"""Each model call is recorded with the OpenTelemetry GenAI attribute names, in the log and as a metric."""

from __future__ import annotations

import json
import logging

from functions.handlers.process_document import handler
from tests.fakes import FakeLambdaContext
from tests.support import document_event, items, prepare, seed_documents


def test_model_call_is_logged_with_genai_attributes_and_counted(cloud, capsys, caplog):
    seed_documents(1)
    job = prepare("job-otel")
    capsys.readouterr()
    with caplog.at_level(logging.INFO, logger="docagent"):
        handler(document_event(job, items(job)[0]).model_dump(mode="json"), FakeLambdaContext())

    [call] = [record.__dict__ for record in caplog.records if record.getMessage() == "model call"]
    assert call["gen_ai.system"] == "docagent.offline"
    assert call["gen_ai.operation.name"] == "extract"
    assert call["gen_ai.request.model"] == "offline-regex-v1"
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
