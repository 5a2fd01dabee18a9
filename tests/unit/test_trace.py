"""`docagent trace`: spans paired from log lines into job → document → step → model call, and the AWS reads
(CloudWatch Logs filter, X-Ray trace summaries) checked with botocore's Stubber."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import boto3
from botocore.stub import ANY, Stubber

from docagent.kit.loader import read_bundle
from docagent.operations.context import OperatorContext
from docagent.operations.trace_job import (
    DOCUMENT_STEPS,
    build_trace,
    document_entry,
    span_lines,
    trace_steps,
    xray_trace_ids,
)
from functions.spans import SPAN_END, SPAN_START, trace_id_for
from tests.support import EXAMPLES, without_models

JOB = "job-trace"
T0 = 1_800_000_000_000_000_000
REQUEST = "0db85336-dad3-4fc3-b9d1-d21ae9b2fce0"


def span_line(
    name: str,
    span_id: str,
    *,
    request: str,
    parent: str | None = None,
    document: str | None = None,
    step: str | None = None,
    attempt: int = 0,
    redrive: int = 0,
    end: dict[str, Any] | None = None,
    attributes: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    base = {
        "job_id": JOB,
        "document_id": document,
        "span_name": name,
        "step": step or name,
        "attempt": attempt,
        "redrive_count": redrive,
        "trace_id": trace_id_for(JOB),
        "span_id": span_id,
        "parent_span_id": parent,
        "start_time_unix_nano": T0 + len(span_id),
        "function_request_id": request,
        "attributes": attributes or {},
    }
    lines = [
        {"function": "ProcessDocument", "request_id": request, "record": {"message": SPAN_START, **base}}
    ]
    if end is not None:
        record = {"message": SPAN_END, **base, "status": "OK", "outcome": "ok", "duration_ms": 5.0, **end}
        lines.append({"function": "ProcessDocument", "request_id": request, "record": record})
    return lines


def killed(request: str) -> dict[str, Any]:
    return {"function": "ProcessDocument", "request_id": request, "record": None}


def crashed_document_lines() -> list[dict[str, Any]]:
    """doc-1: attempt 0 killed while storing, then completed after the redrive."""
    genai = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "aws.bedrock",
        "gen_ai.request.model": "model-x",
        "gen_ai.usage.input_tokens": 10,
        "gen_ai.usage.output_tokens": 3,
        "gen_ai.response.finish_reasons": ["stop"],
    }
    return [
        *span_line("document", "d1", request="r1", document="doc-1", attributes={"document_index": 1}),
        *span_line("extract", "e1", request="r1", parent="d1", document="doc-1", end={}),
        *span_line(
            "model call",
            "m1",
            request="r1",
            parent="e1",
            document="doc-1",
            step="model_call",
            end={"attributes": genai},
        ),
        *span_line("store", "s1", request="r1", parent="d1", document="doc-1"),
        killed("r1"),
        *span_line(
            "document",
            "d2",
            request="r2",
            document="doc-1",
            redrive=1,
            end={"outcome": "extracted"},
            attributes={"document_index": 1},
        ),
        *span_line("extract", "e2", request="r2", parent="d2", document="doc-1", redrive=1, end={}),
        *span_line("store", "s2", request="r2", parent="d2", document="doc-1", redrive=1, end={}),
        *span_line("prepare", "p1", request="r0", end={}),
    ]


ITEMS = [{"document_id": "doc-0", "index": 0}, {"document_id": "doc-1", "index": 1}]
HISTORY = [
    {"type": "ExecutionStarted", "timestamp": dt.datetime(2026, 11, 30, tzinfo=dt.UTC)},
    {
        "type": "ExecutionFailed",
        "timestamp": dt.datetime(2026, 11, 30, 0, 1, tzinfo=dt.UTC),
        "executionFailedEventDetails": {"error": "States.ExceedToleratedFailureThreshold"},
    },
    {"type": "ExecutionRedriven", "timestamp": dt.datetime(2026, 11, 30, 0, 2, tzinfo=dt.UTC)},
    {"type": "TaskScheduled", "timestamp": dt.datetime(2026, 11, 30, 0, 2, tzinfo=dt.UTC)},
]


def test_a_killed_attempt_the_redrive_and_the_completion_of_a_document() -> None:
    trace = build_trace(
        JOB, {"status": "RUNNING", "redriveCount": 1}, HISTORY, ITEMS, crashed_document_lines()
    )
    assert trace["trace_id"] == trace_id_for(JOB)
    assert [event["type"] for event in trace["events"]] == [
        "ExecutionStarted",
        "ExecutionFailed",
        "ExecutionRedriven",
    ]
    (untouched, crashed) = trace["documents"]
    assert untouched["document_id"] == "doc-0" and untouched["status"] == "not reached"
    assert untouched["spans"] == []
    assert crashed["status"] == "completed" and crashed["outcome"] == "extracted"
    assert crashed["attempts"] == 2 and crashed["killed_attempts"] == 1
    assert crashed["redriven"] and crashed["completed_after_redrive"]
    assert crashed["model_calls"] == 1
    first, second = crashed["spans"]
    assert first["status"] == "killed" and first["redrive_count"] == 0
    assert [(child["name"], child["status"]) for child in first["children"]] == [
        ("extract", "completed"),
        ("store", "killed"),
    ]
    (call,) = first["children"][0]["children"]
    assert call["attributes"]["gen_ai.request.model"] == "model-x"
    assert call["attributes"]["gen_ai.response.finish_reasons"] == ["stop"]
    assert second["status"] == "completed" and second["redrive_count"] == 1
    steps = {step["step"]: step["status"] for step in trace["steps"]}
    assert steps == {
        "prepare": "completed",
        "report": "not reached",
        "actions": "not reached",
        "verify": "not reached",
    }
    assert trace["killed_attempts"] == 1


def test_an_attempt_whose_end_is_missing_without_a_runtime_report_is_unfinished_not_killed() -> None:
    lines = [line for line in crashed_document_lines() if line["record"] is not None]
    trace = build_trace(JOB, {}, [], ITEMS, lines, document_id="doc-1")
    (crashed,) = trace["documents"]
    assert crashed["spans"][0]["status"] == "unfinished"
    assert crashed["killed_attempts"] == 0 and crashed["unfinished_attempts"] == 1


def test_a_document_stopped_mid_way_lists_the_steps_it_never_reached() -> None:
    lines = [*crashed_document_lines()[:3], killed("r1")]  # the document and extract spans, then death
    trace = build_trace(JOB, {}, [], ITEMS, lines, document_id="doc-1")
    (document,) = trace["documents"]
    assert document["status"] == "killed"
    assert document["not_reached"] == ["model_call", "customer_lookup", "store"]


def aws_context() -> OperatorContext:
    session = boto3.session.Session(
        aws_access_key_id="test", aws_secret_access_key="test", region_name="us-east-1"
    )
    return OperatorContext(
        endpoint=None,
        stack_name="DocAgent",
        outputs={
            "StateMachineArn": "arn:aws:states:us-east-1:123456789012:stateMachine:DocAgent-DocumentReview",
            "ProcessDocumentFunctionName": "DocAgent-ProcessDocument",
        },
        session=session,
    )


def test_on_aws_spans_come_from_a_json_filter_on_the_job_and_traces_from_xray_annotations() -> None:
    ctx = aws_context()
    since = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.UTC)
    lambda_client, logs, xray = ctx.client("lambda"), ctx.client("logs"), ctx.client("xray")
    record = {"message": SPAN_START, "job_id": JOB, "span_id": "a", "function_request_id": REQUEST}
    with Stubber(lambda_client) as lambdas, Stubber(logs) as log_stub, Stubber(xray) as xray_stub:
        lambdas.add_response(
            "get_function",
            {"Configuration": {"LoggingConfig": {"LogGroup": "/docagent/process"}}},
            {"FunctionName": "DocAgent-ProcessDocument"},
        )
        log_stub.add_response(
            "filter_log_events",
            {"events": [{"timestamp": 1, "message": json.dumps(record), "logStreamName": "s"}]},
            {
                "logGroupName": "/docagent/process",
                "filterPattern": f'{{ $.job_id = "{JOB}" }}',
                "startTime": ANY,
            },
        )
        for phrase in ("Runtime exited", "Task timed out"):
            log_stub.add_response(
                "filter_log_events",
                {
                    "events": [
                        {"timestamp": 2, "message": f"RequestId: {REQUEST} Error: Runtime exited with error"}
                    ]
                }
                if phrase == "Runtime exited"
                else {"events": []},
                {"logGroupName": "/docagent/process", "filterPattern": f'"{phrase}"', "startTime": ANY},
            )
        lines = span_lines(ctx, JOB, since)
        xray_stub.add_response(
            "get_trace_summaries",
            {"TraceSummaries": [{"Id": "1-abc-def"}, {"Id": "1-abc-fed"}]},
            {
                "StartTime": since,
                "EndTime": since + dt.timedelta(hours=6),
                "FilterExpression": f'annotation.job_id = "{JOB}"',
                "TimeRangeType": "Event",
            },
        )
        xray_stub.add_response(
            "get_trace_summaries",
            {"TraceSummaries": [{"Id": "1-abc-def"}]},
            {
                "StartTime": since + dt.timedelta(hours=6),
                "EndTime": since + dt.timedelta(hours=7),
                "FilterExpression": f'annotation.job_id = "{JOB}"',
                "TimeRangeType": "Event",
            },
        )
        found = xray_trace_ids(ctx, JOB, since, since + dt.timedelta(hours=7))
        lambdas.assert_no_pending_responses()
        log_stub.assert_no_pending_responses()
        xray_stub.assert_no_pending_responses()
    assert [line["record"] for line in lines if line["record"]] == [record]
    assert [line["request_id"] for line in lines if line["record"] is None] == [REQUEST]
    assert found == {
        "filter_expression": f'annotation.job_id = "{JOB}"',
        "trace_ids": ["1-abc-def", "1-abc-fed"],
    }
    trace = build_trace(JOB, {}, [], [], [], xray=found)
    assert trace["xray"]["trace_ids"] == ["1-abc-def", "1-abc-fed"]


def test_the_local_cloud_has_no_xray() -> None:
    ctx = aws_context()
    ctx.endpoint = "http://127.0.0.1:9"
    now = dt.datetime.now(dt.UTC)
    assert xray_trace_ids(ctx, JOB, now, now) is None


def test_a_definitions_documents_are_traced_through_its_own_steps():
    cascade = read_bundle(EXAMPLES / "invoices")  # the default's cascade: the strong model's step too
    assert trace_steps(cascade) == ("extract", "escalate", "model_call", "lookup-known-customer", "store")
    invoices = without_models(cascade)
    assert trace_steps(None) == DOCUMENT_STEPS, "a job prepared before definitions"
    assert trace_steps(invoices) == ("extract", "model_call", "lookup-known-customer", "store")
    entry = document_entry({"document_id": "doc-1", "index": 0}, [], trace_steps(invoices))
    assert entry["not_reached"] == ["extract", "model_call", "lookup-known-customer", "store"]
