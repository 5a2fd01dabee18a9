"""The body of the durable ``classify`` and ``extract`` steps (docs/design.md, "Model calls"): one real model
call, journalled (model-calls/) with its output before the step completes, so a call that finished is never
made again; calls that did not finish go to model-attempts/; a permanent refusal opens the job's breaker."""

from __future__ import annotations

import datetime as dt
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import JsonValue

from functions import s3_json, storage
from functions.checks.fields import FieldsInvalid
from functions.durability.faults import fault_point
from functions.errors import (
    DocumentNotLabelled,
    DocumentTooLong,
    DocumentUnreadable,
    ExtractionFailed,
    ModelAccessDenied,
    ModelCallRefused,
    ModelError,
    ModelNotAvailable,
    ModelReplyInvalid,
    ModelRequestInvalid,
)
from functions.inference import spending
from functions.inference.base import ModelProvider, sha256_text
from functions.inference.telemetry import genai_attributes, record_model_call
from functions.observability import logger
from functions.payloads.common import CallPurpose, ModelCallOutcome, utc_now
from functions.payloads.document import ProcessDocumentEvent
from functions.payloads.model_calls import ExtractionRecord, ModelAttemptRecord, ModelBreaker, ModelCallRecord
from functions.reading.documents import DocumentInput
from functions.settings import get_settings
from functions.spans import span

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext


@dataclass(frozen=True)
class CallSpec:
    """A model call of a document: what for, the prompts, how its reply is read (raises FieldsInvalid)."""

    purpose: CallPurpose
    class_name: str | None
    system: str
    user: str
    prompt_version: str
    read: Callable[[str], dict[str, JsonValue]]
    section_id: str | None = None  # the packet's section or page window read (functions/reading/sections.py)
    # a long PDF's page window (functions/reading/page_windows.py): journalled by it
    window: str | None = None

    @property
    def journal_name(self) -> str:
        """The call's name among a document's calls: its purpose, and its section when it reads one."""
        return self.purpose if self.section_id is None else f"{self.purpose}-{self.section_id}"


# The journal's records never change once written (one object per finished call, its id unique), so a
# process reads each once: a long document's windows each look for their own call in the journal, and without
# this every window read every earlier window's record (150 windows: 11,175 reads; 2026-12-07).
_JOURNAL: dict[tuple[str, str], ModelCallRecord] = {}
_JOURNAL_MOST = 20_000


def journal_of(job_id: str, document_id: str) -> list[ModelCallRecord]:
    """A document's journal (s3_json.list_model_calls), each record read from S3 once per process."""
    bucket = get_settings().bucket_name
    keys = [obj["Key"] for obj in s3_json.list_objects(storage.model_calls_prefix(job_id, document_id))]
    if len(_JOURNAL) + len(keys) > _JOURNAL_MOST:
        _JOURNAL.clear()
    for key in keys:
        if (bucket, key) not in _JOURNAL:
            _JOURNAL[bucket, key] = ModelCallRecord.model_validate(s3_json.get_json(key))
    return [_JOURNAL[bucket, key] for key in keys]


def clear_journal() -> None:
    """Forget the journal's records and the breaker this process read."""
    _JOURNAL.clear()
    _BREAKER_READ.clear()


_REFUSALS: dict[str, type[ModelCallRefused]] = {
    cls.__name__: cls for cls in (ModelAccessDenied, ModelNotAvailable, ModelRequestInvalid)
}


# The job's model breaker as this invocation read it for the document it calls the model for: read before
# the document's first call, and its later calls in the invocation (classify then extract, the windows of a
# long PDF, the cascade's escalation) use that read and the breaker the invocation opened (docs/design.md
# "Stopping fast": every document reads the breaker before it calls the model). One entry, the current one.
_BREAKER_READ: dict[tuple[str, str, str], ModelBreaker | None] = {}


def check_breaker(event: ProcessDocumentEvent, model_id: str, context: LambdaContext) -> None:
    """Fail at once, without a model call, while the job's model breaker is open (docs/design.md)."""
    seen = (context.aws_request_id, event.job_id, event.document.document_id)
    if seen not in _BREAKER_READ:
        _BREAKER_READ.clear()
        _BREAKER_READ[seen] = s3_json.get_model_breaker(event.job_id)
    breaker = _BREAKER_READ[seen]
    if breaker is None or breaker.model_id != model_id or breaker.open_until <= utc_now():
        return
    refusal = _REFUSALS.get(breaker.error, ModelCallRefused)
    raise refusal(
        f"not called: the job's model breaker is open until {breaker.open_until} (opened by document "
        f"{breaker.document_id}): {breaker.message}"
    )


def _open_breaker(
    event: ProcessDocumentEvent, model_id: str, refusal: ModelCallRefused, context: LambdaContext
) -> None:
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    until = now + dt.timedelta(seconds=get_settings().model_breaker_seconds)
    breaker = ModelBreaker(
        job_id=event.job_id,
        model_id=model_id,
        error=type(refusal).__name__,
        message=str(refusal),
        document_id=event.document.document_id,
        opened_at=now.isoformat().replace("+00:00", "Z"),
        open_until=until.isoformat().replace("+00:00", "Z"),
    )
    s3_json.put_model_breaker(breaker)
    _BREAKER_READ.clear()
    _BREAKER_READ[context.aws_request_id, event.job_id, event.document.document_id] = breaker
    logger.error("model breaker opened", extra={"error": type(refusal).__name__, "model_id": model_id})


def _journal_attempt(
    event: ProcessDocumentEvent,
    provider: ModelProvider,
    error: ModelError,
    *,
    call_id: str,
    started_at: str,
    duration_ms: int,
) -> None:
    """A call that did not finish is journalled too (model-attempts/): the journal holds every attempt."""
    s3_json.put_model_attempt(
        ModelAttemptRecord(
            call_id=call_id,
            job_id=event.job_id,
            document_id=event.document.document_id,
            provider=provider.system,
            model_id=provider.model_id,
            error=type(error).__name__,
            message=str(error),
            retryable=not isinstance(error, ModelCallRefused),
            retry_count=event.retry_count,
            redrive_count=event.redrive_count,
            started_at=started_at,
            finished_at=utc_now(),
            duration_ms=duration_ms,
        )
    )


def finished_call(
    provider: ModelProvider, document: DocumentInput, spec: CallSpec, call_id: str
) -> ExtractionRecord:
    """One model call that finished: its fields, why its reply gave none (ExtractionFailed), or the model's
    refusal of the document itself (this document's rejection, not the job's failure). A call that did not
    finish (a ModelError) propagates."""
    failed = {
        "call_id": call_id,
        "ok": False,
        "purpose": spec.purpose,
        "class_name": spec.class_name,
        "section_id": spec.section_id,
    }
    try:
        reply = provider.converse(document, spec.system, spec.user)
    except ExtractionFailed as failure:
        return ExtractionRecord.model_validate(
            {
                **failed,
                "error": failure.error_name,
                "reason": failure.reason,
                "model_id": failure.model_id or provider.model_id,
                "input_tokens": failure.input_tokens,
                "output_tokens": failure.output_tokens,
                "tokens_clamped": failure.tokens_clamped,
            }
        )
    except (DocumentUnreadable, DocumentTooLong) as refused:
        return ExtractionRecord.model_validate(
            {**failed, "error": refused.error_name, "reason": refused.reason, "model_id": provider.model_id}
        )
    usage = {
        "model_id": reply.model_id,
        "input_tokens": reply.input_tokens,
        "output_tokens": reply.output_tokens,
        "cache_read_tokens": reply.cache_read_tokens,
        "cache_write_tokens": reply.cache_write_tokens,
        "inference": reply.inference,
        "tokens_clamped": reply.tokens_clamped,
    }
    try:
        fields = spec.read(reply.text)
    except FieldsInvalid as invalid:
        return ExtractionRecord.model_validate(
            {**failed, **usage, "error": ExtractionFailed.__name__, "reason": str(invalid)}
        )
    return ExtractionRecord.model_validate({**failed, **usage, "ok": True, "fields": fields})


def call_outcome(record: ExtractionRecord) -> ModelCallOutcome:
    """How a finished call is journalled: ok, or why it gave no fields."""
    if record.ok:
        return "ok"
    if record.error == DocumentTooLong.__name__:
        return "DocumentTooLong"
    if record.error == ModelReplyInvalid.__name__:
        return "ModelReplyInvalid"
    unreadable = {DocumentUnreadable.__name__, DocumentNotLabelled.__name__}
    return "DocumentUnreadable" if record.error in unreadable else "ExtractionFailed"


def finish_reason(record: ExtractionRecord) -> str:
    """The OpenTelemetry ``gen_ai.response.finish_reasons`` entry: ``length`` for a reply cut off at the token
    limit, ``stop`` for a reply that ended on its own (valid or not: a bad reply is still a finished one)."""
    return "length" if record.reason and "cut off" in record.reason else "stop"


def journal_call(
    event: ProcessDocumentEvent,
    provider: ModelProvider,
    spec: CallSpec,
    record: ExtractionRecord,
    *,
    started_at: str,
    duration_ms: int,
) -> ModelCallRecord:
    """A finished model call into the journal (model-calls/), with its output."""
    call = ModelCallRecord(
        call_id=record.call_id,
        job_id=event.job_id,
        document_id=event.document.document_id,
        purpose=spec.purpose,
        class_name=spec.class_name,
        section_id=spec.section_id,
        window=spec.window,
        provider=provider.system,
        model_id=record.model_id,
        prompt_version=spec.prompt_version,
        prompt_sha256=sha256_text(spec.system),
        input_tokens=record.input_tokens,
        output_tokens=record.output_tokens,
        cache_read_tokens=record.cache_read_tokens,
        cache_write_tokens=record.cache_write_tokens,
        outcome=call_outcome(record),
        fields=record.fields,
        reason=record.reason,
        retry_count=event.retry_count,
        started_at=started_at,
        finished_at=utc_now(),
        duration_ms=duration_ms,
        inference=record.inference,
        tokens_clamped=record.tokens_clamped,
    )
    key = s3_json.put_model_call(call)
    if len(_JOURNAL) < _JOURNAL_MOST:  # the next step's look at the journal reads it from here, not from S3
        _JOURNAL[get_settings().bucket_name, key] = call
    return call


def _fault(name: str, event: ProcessDocumentEvent, context: LambdaContext) -> None:
    fault_point(
        "before_model_call" if name == "before" else "after_model_call",
        event.options,
        event.retry_count,
        job_id=event.job_id,
        redrive_count=event.redrive_count,
        document_index=event.document.index,
        context=context,
    )


def call_once(
    event: ProcessDocumentEvent,
    spec: CallSpec,
    document: DocumentInput,
    provider: ModelProvider,
    context: LambdaContext,
) -> ExtractionRecord:
    """The body of a durable model step: one real model call, journalled before the step completes.

    If the journal already holds a finished call of this purpose and page window for this document (the
    process died after the call but before the step's record was saved), its output is reused: a finished call
    is never made again.
    """
    journal = [
        call
        for call in journal_of(event.job_id, event.document.document_id)
        if call.purpose == spec.purpose and call.section_id == spec.section_id and call.window == spec.window
    ]
    if journal:
        logger.info(
            "reusing the journalled model call",
            extra={"model_call_id": journal[-1].call_id, "purpose": spec.purpose},
        )
        with span("model call", job_id=event.job_id, step="model_call") as replayed:
            replayed.outcome = "replayed"
            replayed.set_attributes(model_call_id=journal[-1].call_id, replayed=True, purpose=spec.purpose)
        spending.settle_call(event, journal[-1], replayed=True)
        return journal[-1].to_extraction()
    check_breaker(event, provider.model_id, context)
    spending.reserve_call(
        event, spec.journal_name, provider.model_id, document, len(spec.system) + len(spec.user)
    )
    _fault("before", event, context)

    now = time.time()
    stamp = f"{time.strftime('%Y%m%dT%H%M%S', time.gmtime(now))}{int(now * 1000) % 1000:03d}Z"
    call_id = f"{stamp}-{uuid.uuid4().hex[:8]}"
    started_at, started = utc_now(), time.monotonic()
    with span("model call", job_id=event.job_id, step="model_call") as call_span:
        try:
            record = finished_call(provider, document, spec, call_id)
        except ModelError as error:
            duration_ms = int((time.monotonic() - started) * 1000)
            if error.call_made:
                _journal_attempt(
                    event, provider, error, call_id=call_id, started_at=started_at, duration_ms=duration_ms
                )
            logger.warning(
                "model call did not finish",
                extra={"model_call_id": call_id, "outcome": type(error).__name__, "duration_ms": duration_ms},
            )
            if isinstance(error, ModelCallRefused):
                _open_breaker(event, provider.model_id, error, context)
            spending.release_call(event, spec.journal_name)
            raise  # the span ends as ERROR with the error's name
        duration_ms = int((time.monotonic() - started) * 1000)
        attributes = genai_attributes(
            system=provider.system,
            operation=provider.operation,
            model_id=record.model_id,
            input_tokens=record.input_tokens,
            output_tokens=record.output_tokens,
        )
        outcome = call_outcome(record)
        call_span.outcome = outcome
        call_span.set_attributes(
            **attributes,
            model_call_id=call_id,
            purpose=spec.purpose,
            **{
                "gen_ai.provider.name": provider.system,
                "gen_ai.response.finish_reasons": [finish_reason(record)],
            },
        )
    record_model_call(attributes, outcome=outcome, duration_ms=duration_ms, call_id=call_id)
    call = journal_call(event, provider, spec, record, started_at=started_at, duration_ms=duration_ms)
    spending.settle_call(event, call)
    _fault("after", event, context)
    return record
