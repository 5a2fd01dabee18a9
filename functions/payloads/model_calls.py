"""A model call's journal records, its attempts, the model breaker, lookups and check outcomes."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, JsonValue

from functions.payloads.common import CallPurpose, InferenceMode, ModelCallOutcome, StrictModel


class ModelReply(StrictModel):
    """What a ModelProvider returns for a finished call: the reply's text (functions/checks/fields.py reads
    it)."""

    text: str
    model_id: str
    input_tokens: int = Field(ge=0)
    output_tokens: int = Field(ge=0)
    cache_read_tokens: int = Field(0, ge=0, description="input tokens read from the prompt cache")
    cache_write_tokens: int = Field(0, ge=0, description="input tokens written to the prompt cache")
    inference: InferenceMode = "on_demand"
    tokens_clamped: str | None = Field(
        None,
        description="why the tokens recorded are not the ones the answer reported: clamped at what the "
        "request allowed (its maxTokens, the model's context window), or unknown (an unreadable answer)",
    )


class ExtractionRecord(StrictModel):
    """Result of the durable ``classify`` and ``extract`` steps: a finished model call, successful or not.
    ``fields``: the normalised, schema-valid fields (extract) or ``{"class": NAME or null}`` (classify)."""

    call_id: str
    ok: bool
    purpose: CallPurpose = "extract"
    class_name: str | None = None
    section_id: str | None = Field(
        None, description="the part of a packet read (functions/reading/sections.py)"
    )
    fields: dict[str, JsonValue] | None = None
    error: str | None = None
    reason: str | None = None
    model_id: str
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = Field(0, ge=0, description="input tokens read from the prompt cache")
    cache_write_tokens: int = Field(0, ge=0, description="input tokens written to the prompt cache")
    inference: InferenceMode = "on_demand"
    tokens_clamped: str | None = Field(
        None,
        description="why the tokens recorded are not the ones the answer reported: clamped at what the "
        "request allowed (its maxTokens, the model's context window), or unknown (an unreadable answer)",
    )


class ModelCallRecord(StrictModel):
    """jobs/{job}/model-calls/{document_id}/{call_id}.json: one per model call really made.

    Written before the ``classify`` or ``extract`` step completes, with the call's output, so it doubles as a
    write-ahead log: if the process dies after the call but before the step's record is saved, the retry
    reuses this output (the newest record of the same purpose and page window) instead of calling the model
    again.
    """

    call_id: str
    job_id: str
    document_id: str
    purpose: CallPurpose = "extract"
    class_name: str | None = Field(None, description="the class extracted (null for a classify call)")
    section_id: str | None = Field(
        None,
        description="the packet's section or page window read (functions/reading/sections.py); null: "
        "the whole",
    )
    window: str | None = Field(
        None, description="the page window of a long PDF it read (p0021-0040); null: the whole document"
    )
    provider: str
    model_id: str
    prompt_version: str
    prompt_sha256: str
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int = Field(0, ge=0, description="input tokens read from the prompt cache")
    cache_write_tokens: int = Field(0, ge=0, description="input tokens written to the prompt cache")
    outcome: ModelCallOutcome
    fields: dict[str, JsonValue] | None = None
    reason: str | None = None
    retry_count: int
    started_at: str
    finished_at: str
    duration_ms: int
    inference: InferenceMode = Field(
        "on_demand", description="on_demand, or batch: an output record of the job's batch job"
    )
    tokens_clamped: str | None = Field(
        None,
        description="why the tokens recorded are not the ones the answer reported: clamped at what the "
        "request allowed (its maxTokens, the model's context window), or unknown (an unreadable answer)",
    )

    @property
    def journal_name(self) -> str:
        """The call's name among its document's calls: its purpose, and its section when it read one (as
        functions/inference/calls.py CallSpec.journal_name)."""
        return self.purpose if self.section_id is None else f"{self.purpose}-{self.section_id}"

    def to_extraction(self) -> ExtractionRecord:
        return ExtractionRecord(
            call_id=self.call_id,
            ok=self.outcome == "ok",
            purpose=self.purpose,
            class_name=self.class_name,
            section_id=self.section_id,
            fields=self.fields,
            error=None if self.outcome == "ok" else self.outcome,
            reason=self.reason,
            model_id=self.model_id,
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            cache_read_tokens=self.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens,
            inference=self.inference,
            tokens_clamped=self.tokens_clamped,
        )


class ModelAttemptRecord(StrictModel):
    """jobs/{job}/model-attempts/{document_id}/{call_id}.json: one per model call that did not finish
    (throttled, unavailable, refused). With model-calls/ (the finished calls) the journal holds every
    attempt."""

    call_id: str
    job_id: str
    document_id: str
    provider: str
    model_id: str
    error: str
    message: str
    retryable: bool
    retry_count: int
    redrive_count: int = 0
    started_at: str
    finished_at: str
    duration_ms: int


class ModelBreaker(StrictModel):
    """jobs/{job}/model-breaker.json: the job's model circuit breaker, opened by the first permanent refusal.

    While it is open (until ``open_until``), a document that would call the model fails at once with the same
    error instead. It closes by itself after the cool-down (the next document probes the model again), and
    ``docagent redrive`` removes it before it redrives (the operator has fixed the cause)."""

    job_id: str
    model_id: str
    error: str
    message: str
    document_id: str
    opened_at: str
    open_until: str


class LookupRecord(StrictModel):
    """Result of a durable ``lookup-{check}`` step: the reference table's row for the key, if any."""

    table: str
    key: str
    found: bool
    row: dict[str, JsonValue] | None = None


class CheckOutcome(StrictModel):
    """One check of a document's class, as it went (DocumentResult.checks, in the definition's order); a
    packet's result: its case's (job.json ``case``: a ``requires`` named by its class, then its rules)."""

    name: str
    type: Literal["rule", "lookup", "requires"]
    passed: bool
    on_fail: Literal["reject", "review"]
    error: str | None = Field(None, description="the check's error name when it failed")
    reason: str | None = None
