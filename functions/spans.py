"""One trace per job: a span at every durable boundary, written as a structured log line.

A span is two Powertools JSON log lines, ``span start`` when the boundary is entered and ``span end`` when
it is left (with its outcome and duration), so a worker killed mid-step leaves a start with no end: the
killed attempt is visible, which an exporter that sends finished spans only would hide. Every line carries
``job_id``, ``document_id``, ``step``, ``attempt`` (the state's retry count), ``redrive_count`` and
OpenTelemetry-shaped ids: ``trace_id`` derived from the job id (so every document of the Distributed Map,
each a trace of its own in X-Ray, joins its job), ``span_id``, ``parent_span_id`` and a link to the X-Ray
trace of the invocation.

The lines go wherever the function's logs go: CloudWatch Logs on AWS and on the local cloud, where
``docagent trace`` reads them. On AWS the boundary's ids are also X-Ray annotations (``job_id``, ``step``,
``document_id``), so ``annotation.job_id = "J"`` finds every segment of a job. No OpenTelemetry package is
needed in the Lambda asset (the Powertools layer has none): the record follows the OTLP span fields.
"""

from __future__ import annotations

import contextvars
import hashlib
import os
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from functions.observability import logger, tracer

SPAN_START = "span start"
SPAN_END = "span end"

_current: contextvars.ContextVar[Span | None] = contextvars.ContextVar("docagent_span", default=None)


def trace_id_for(job_id: str) -> str:
    """The job's OpenTelemetry trace id (32 hex digits): the same for every span of the job."""
    return hashlib.sha256(f"docagent-job:{job_id}".encode()).hexdigest()[:32]


def xray_trace_id() -> str | None:
    """The X-Ray trace of this invocation (Lambda sets ``_X_AMZN_TRACE_ID``: ``Root=1-...;Parent=...``)."""
    header = os.environ.get("_X_AMZN_TRACE_ID", "")
    for part in header.split(";"):
        key, _, value = part.partition("=")
        if key.strip() == "Root" and value:
            return value
    return None


@dataclass
class Span:
    name: str
    job_id: str
    step: str
    document_id: str | None
    attempt: int
    redrive_count: int
    parent_span_id: str | None
    span_id: str = field(default_factory=lambda: secrets.token_hex(8))
    start_ns: int = field(default_factory=time.time_ns)
    attributes: dict[str, Any] = field(default_factory=dict)
    outcome: str = "ok"

    def set_attributes(self, **attributes: Any) -> None:
        self.attributes.update(attributes)

    def set_attribute(self, name: str, value: Any) -> None:
        self.attributes[name] = value

    def record(self, event: str, **extra: Any) -> dict[str, Any]:
        link = xray_trace_id()
        return {
            "span_event": event,
            "span_name": self.name,
            "job_id": self.job_id,
            "document_id": self.document_id,
            "step": self.step,
            "attempt": self.attempt,
            "redrive_count": self.redrive_count,
            "trace_id": trace_id_for(self.job_id),
            "span_id": self.span_id,
            "parent_span_id": self.parent_span_id,
            "start_time_unix_nano": self.start_ns,
            "links": [{"xray_trace_id": link}] if link else [],
            **extra,
        }


@contextmanager
def span(
    name: str,
    *,
    job_id: str,
    step: str,
    document_id: str | None = None,
    attempt: int = 0,
    redrive_count: int = 0,
    attributes: dict[str, Any] | None = None,
) -> Iterator[Span]:
    """A span around one boundary. An exception ends it with ``status: ERROR`` and the error's type, and goes
    on; a process that dies ends nothing (the start line stays alone)."""
    parent = _current.get()
    opened = Span(
        name=name,
        job_id=job_id,
        step=step,
        document_id=document_id if document_id is not None else (parent.document_id if parent else None),
        attempt=attempt if parent is None else parent.attempt,
        redrive_count=redrive_count if parent is None else parent.redrive_count,
        parent_span_id=parent.span_id if parent else None,
        attributes=dict(attributes or {}),
    )
    if parent is None:
        for key, value in (("job_id", job_id), ("step", step), ("document_id", opened.document_id)):
            if value is not None:
                tracer.put_annotation(key=key, value=value)
    token = _current.set(opened)
    logger.info(SPAN_START, extra=opened.record("start", attributes=dict(opened.attributes)))
    status, error = "OK", None
    try:
        yield opened
    except BaseException as failure:
        status, error = "ERROR", type(failure).__name__
        opened.outcome = "error"
        raise
    finally:
        _current.reset(token)
        end_ns = time.time_ns()
        logger.info(
            SPAN_END,
            extra=opened.record(
                "end",
                end_time_unix_nano=end_ns,
                duration_ms=round((end_ns - opened.start_ns) / 1e6, 3),
                status=status,
                error=error,
                outcome=opened.outcome if status == "OK" else "error",
                attributes=opened.attributes,
            ),
        )
