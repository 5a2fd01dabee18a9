"""``docagent inspect`` counts the model calls started and never finished (operations/unfinished_calls.py):
issue #49, after a ``kill -9`` of the local cloud it said 30 calls, 0 repeated; the endpoint served 36."""

from __future__ import annotations

import datetime as dt
import time
from typing import Any

import pytest
from botocore.exceptions import EndpointConnectionError, ReadTimeoutError

from docagent.operations.inspect_job import Inspector
from docagent.operations.trace_job import pair_spans
from docagent.operations.unfinished_calls import UnfinishedCalls, unfinished_calls, unfinished_cause
from functions.errors import ModelUnavailable
from functions.inference.converse import BedrockConverseProvider
from functions.payloads.model_calls import ModelCallRecord
from functions.reading.documents import DocumentInput, document_input
from functions.spans import SPAN_END, SPAN_START, Span

JOB = "j-crash"


def _attempt(document_id: str, *, killed: bool) -> list[dict[str, Any]]:
    """The log lines of one attempt of a document around a model call, as `docagent logs` reads them
    (functions/spans.py records); killed: the process died during the call (no end lines)."""
    document = Span("document", JOB, "document", document_id, 0, 0, None)
    call = Span("model call", JOB, "model_call", document_id, 0, 0, document.span_id)
    records = [{"message": SPAN_START, **opened.record("start")} for opened in (document, call)]
    if not killed:
        records += [{"message": SPAN_END, **ended.record("end", status="OK")} for ended in (call, document)]
    return [{"record": record, "request_id": f"r-{document.span_id}"} for record in records]


def _finished(document_id: str, started: dt.datetime) -> ModelCallRecord:
    return ModelCallRecord(
        call_id=f"{document_id}-extract",
        job_id=JOB,
        document_id=document_id,
        provider="aws.bedrock",
        model_id="model",
        prompt_version="v1",
        prompt_sha256="0" * 64,
        input_tokens=10,
        output_tokens=1,
        outcome="ok",
        retry_count=0,
        started_at=started.isoformat().replace("+00:00", "Z"),
        finished_at=started.isoformat().replace("+00:00", "Z"),
        duration_ms=1,
    )


def test_a_call_cut_off_is_counted_and_counted_as_repeated_once_made_again() -> None:
    lines = [line for document_id in ("d1", "d2", "d3") for line in _attempt(document_id, killed=True)]
    time.sleep(0.01)  # in flight when the cloud was killed; d1 and d2 retried after the restart, d3 not yet
    retried = dt.datetime.now(dt.UTC)
    lines += [line for document_id in ("d1", "d2") for line in _attempt(document_id, killed=False)]
    spans = pair_spans(lines)
    finished = {document_id: [_finished(document_id, retried)] for document_id in ("d1", "d2")}

    found = unfinished_calls(spans, JOB, finished)
    assert found.by_document == {"d1": 1, "d2": 1, "d3": 1} and found.remade == 2
    assert unfinished_calls(spans, "another-job", finished).count == 0

    documents = [
        {"document_id": document_id, "model_calls": [call.model_dump() for call in calls]}
        for document_id, calls in finished.items()
    ]
    totals = Inspector._model_call_totals(documents, found)
    assert (totals["count"], totals["repeated"], totals["unfinished"], totals["documents"]) == (5, 2, 3, 3)
    assert Inspector._model_call_totals(documents, UnfinishedCalls())["count"] == 2  # the journal alone


def test_a_journalled_attempt_whose_read_timed_out_is_named_timed_out() -> None:
    """`docagent demo`'s "model calls unfinished" names an attempt the model did not answer in time (#53:
    every first attempt timed out on a loaded machine, shown only as "ModelUnavailable 1")."""

    class Hung:
        def converse(self, **_: Any) -> Any:
            raise ReadTimeoutError(endpoint_url="http://127.0.0.1:1")

    class Down:
        def converse(self, **_: Any) -> Any:
            raise EndpointConnectionError(endpoint_url="http://127.0.0.1:1")

    def attempt(client: Any) -> dict[str, Any]:
        with pytest.raises(ModelUnavailable) as raised:
            BedrockConverseProvider("model", client).converse(_document(), "You read", "Extract.")
        record = {"call_id": "c", "job_id": JOB, "document_id": "d", "provider": "aws.bedrock"}
        return record | {
            "model_id": "model", "error": "ModelUnavailable", "message": str(raised.value), "retryable": True,
            "retry_count": 0, "started_at": "2026-12-07T00:00:00Z", "finished_at": "2026-12-07T00:00:06Z",
            "duration_ms": 6000,
        }  # fmt: skip

    assert unfinished_cause(attempt(Hung())) == "ModelUnavailable (timed out)"
    assert unfinished_cause(attempt(Down())) == "ModelUnavailable"


def _document() -> DocumentInput:
    return document_input(b"an invoice, total 12.00", "document-00001")
