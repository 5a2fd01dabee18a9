"""The model calls that were started and never finished: what the journal cannot hold.

The journal (jobs/JOB/model-calls/, model-attempts/) records a call when it ends: a worker killed during the
call (its own ``kill -9``, the local cloud's, a timeout) leaves no record, although the model answered it
and billed it. Its trace does: the call's ``span start`` log line is written before the request is sent
(functions/inference/calls.py), and a call that never finished has no ``span end`` (docagent trace: killed or
unfinished). ``docagent inspect`` counts these with the finished calls (issue #49: after a ``kill -9`` of the
local cloud it said 30 calls, 0 repeated, while the endpoint had served 36).

A started call is counted as made again when a finished call of the same document started after it (its
retry, or a redrive). Without a log line (logs not delivered yet, or expired) a call is not counted here.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from docagent.operations.display import as_datetime
from docagent.operations.records import JobRecords
from docagent.operations.trace_job import pair_spans, span_lines
from functions.inference.converse import TIMED_OUT
from functions.payloads.model_calls import ModelAttemptRecord, ModelCallRecord

UNENDED = frozenset({"killed", "unfinished"})


@dataclass
class UnfinishedCalls:
    """Model calls started and not finished, per document; ``remade``: those a later finished one repeated."""

    by_document: dict[str, int] = field(default_factory=dict)
    remade: int = 0

    @property
    def count(self) -> int:
        return sum(self.by_document.values())


def unfinished_calls(
    spans: list[dict[str, Any]], job_id: str, finished: dict[str, list[ModelCallRecord]]
) -> UnfinishedCalls:
    """From the job's spans (trace_job.pair_spans) and its journal of finished calls, per document."""
    found = UnfinishedCalls()
    for span in spans:
        document_id = span.get("document_id")
        if span["step"] != "model_call" or span["job_id"] != job_id or span["status"] not in UNENDED:
            continue
        if not document_id:
            continue
        found.by_document[document_id] = found.by_document.get(document_id, 0) + 1
        started = dt.datetime.fromtimestamp(int(span["start_time_unix_nano"] or 0) / 1e9, dt.UTC)
        later = [as_datetime(call.started_at) for call in finished.get(document_id, [])]
        if any(when is not None and when >= started for when in later):
            found.remade += 1
    return found


def read_unfinished_calls(records: JobRecords, since: dt.datetime | None) -> UnfinishedCalls:
    """The job's unfinished model calls, from its functions' logs since ``since`` (the execution's start)."""
    lines = span_lines(records.ctx, records.job_id, since)
    return unfinished_calls(pair_spans(lines), records.job_id, records.model_calls)


def unfinished_cause(attempt: dict[str, Any]) -> str:
    """A journalled attempt's (model-attempts/: a call that ended without a reply) error, "timed out" added
    when its read timeout ran out: a worker slow to start on a busy machine leaves its call too little of
    a compressed timeout (``docagent demo``'s time scale)."""
    record = ModelAttemptRecord.model_validate(attempt)
    return f"{record.error} (timed out)" if record.message.startswith(TIMED_OUT) else record.error
