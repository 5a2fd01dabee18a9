"""Cheaper model first (functions/inference/cascade.py): the cheap model's fields the grounding would send to
review (or its whole document, when it gave no fields) are extracted again by the strong model in the durable
``escalate`` step, journalled and never repeated after a crash; the result records which model gave each
field and each model's cost."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from docagent.operations.step_records import document_steps
from functions import s3_json
from functions.definition.job_spec import ClassBundle, DefinitionBundle, JobDefinition
from functions.inference import calls
from functions.inference.cascade import cascaded, merged, to_escalate
from functions.inference.evidence import EVIDENCE_KEY
from functions.logic.process_document import process_document
from functions.payloads.common import CallPurpose
from functions.payloads.evidence import WHOLE_DOCUMENT
from functions.payloads.job import PreparedJob
from functions.payloads.model_calls import ExtractionRecord
from functions.settings import get_settings
from tests.fakes import CountingProvider, FakeLambdaContext, SimulatedCrash
from tests.moto_state import build_once
from tests.support import PREFIX, document_event, items, prepare, put_object

CHEAP, STRONG = "anthropic.claude-3-haiku-20240307-v1:0", "global.anthropic.claude-haiku-4-5-20251001-v1:0"
SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "additionalProperties": False,
    "required": ["policy", "filed"],
    "properties": {
        "policy": {"type": "string", "x-normalise": "upper"},
        "filed": {"type": "string", "format": "date", "x-normalise": "date"},
        "note": {"type": ["string", "null"]},
    },
}
TEXT = "CLAIM P-0001 filed 2026-01-10 by Ada"
RIGHT = {"policy": "P-0001", "filed": "2026-01-10", "note": "by Ada"}
WRONG_DATE = {**RIGHT, "filed": "2026-01-11"}  # valid for the schema, absent from the document


def bundle(models: list[str] | None = (CHEAP, STRONG)) -> DefinitionBundle:  # type: ignore[assignment]
    spec = {"description": "a claim", "schema": "claim.json"}
    definition: dict[str, Any] = {"name": "cascade", "classes": {"claim": spec}}
    if models is not None:
        definition["models"] = list(models)
    return DefinitionBundle.model_validate(
        {"definition": definition, "classes": {"claim": {"spec": spec, "schema": SCHEMA}}}
    )


def claim_class() -> ClassBundle:
    return bundle().class_bundle("claim")


def record(
    fields: dict[str, Any] | None, quotes: dict[str, str], model: str, **rest: Any
) -> ExtractionRecord:
    evidence = {path: {"quote": quote, "page": 1} for path, quote in quotes.items()}
    return ExtractionRecord.model_validate(
        {
            "call_id": f"call-{model[:6]}",
            "ok": fields is not None,
            "fields": None if fields is None else {**fields, EVIDENCE_KEY: evidence},
            "model_id": model,
            "input_tokens": 1000,
            "output_tokens": 100,
            **rest,
        }
    )


QUOTES = {"policy": "P-0001", "filed": "2026-01-10", "note": "by Ada"}


def test_models_name_two_different_model_ids() -> None:
    assert bundle().definition.models == [CHEAP, STRONG]
    with pytest.raises(ValueError, match="two different model ids"):
        bundle([CHEAP, CHEAP])
    with pytest.raises(ValueError, match="at least 2 items"):
        bundle([CHEAP])
    # a definition without models dumps as before: its version does not change
    assert "models" not in JobDefinition.model_validate(bundle(None).definition.model_dump()).model_dump()


def test_only_the_fields_the_grounding_would_send_to_review_are_escalated() -> None:
    pages = [TEXT]
    assert to_escalate(record(RIGHT, QUOTES, CHEAP), claim_class(), pages) == {}
    wrong = to_escalate(record(WRONG_DATE, QUOTES, CHEAP), claim_class(), pages)  # the quote disagrees
    assert list(wrong) == ["filed"] and "not grounded" in wrong["filed"]
    failed = record(None, {}, CHEAP, error="ExtractionFailed", reason="model reply is not valid JSON")
    assert list(to_escalate(failed, claim_class(), pages)) == [WHOLE_DOCUMENT]
    # a document the cheap model's Bedrock refused (too long, unreadable) is not the cheap model's failing
    for refusal in ("DocumentTooLong", "DocumentUnreadable"):
        refused = record(None, {}, CHEAP, error=refusal, reason="Input is too long for requested model.")
        assert to_escalate(refused, claim_class(), pages) == {}


def test_the_strong_models_values_replace_the_escalated_fields_only() -> None:
    first = record({**WRONG_DATE, "note": "cheap note"}, {**QUOTES, "filed": "11 Jan 2026"}, CHEAP)
    strong = record({**RIGHT, "note": "strong note"}, QUOTES, STRONG)
    fields = merged(first, strong, ["filed"]).fields
    assert fields is not None
    assert {k: v for k, v in fields.items() if k != EVIDENCE_KEY} == {**RIGHT, "note": "cheap note"}
    assert fields[EVIDENCE_KEY]["filed"] == {"quote": "2026-01-10", "page": 1}  # type: ignore[index,call-overload]
    without_note = record({"policy": "P-0001", "filed": "2026-01-10"}, {"filed": "2026-01-10"}, STRONG)
    fields = merged(first, without_note, ["filed", "note"]).fields
    assert fields is not None and "note" not in fields and "note" not in fields[EVIDENCE_KEY]  # type: ignore[operator]
    failed_strong = record(None, {}, STRONG, error="ExtractionFailed", reason="cut off")
    assert merged(first, failed_strong, ["filed"]) == first  # the cheap fields stay (then: review)


def test_a_document_the_cheap_model_got_right_never_calls_the_strong_one() -> None:
    def strong() -> ExtractionRecord:
        raise AssertionError("the strong model was called")

    result, cascade = cascaded(
        (CHEAP, STRONG), record(RIGHT, QUOTES, CHEAP), claim_class(), lambda: [TEXT], strong
    )
    assert result.fields is not None and result.fields["filed"] == "2026-01-10"
    assert (cascade.escalated, cascade.escalate_call_id) == ([], None)
    assert cascade.field_models == dict.fromkeys(RIGHT, CHEAP)
    # priced with functions/spend.py: 1000 in, 100 out at $0.25 / $1.25 per million
    assert cascade.cost_usd == {CHEAP: 0.000375, STRONG: 0.0}


def test_a_cheap_reply_without_fields_is_extracted_whole_by_the_strong_model() -> None:
    failed = record(None, {}, CHEAP, error="ExtractionFailed", reason="model reply is not valid JSON")
    result, cascade = cascaded(
        (CHEAP, STRONG), failed, claim_class(), lambda: [TEXT], lambda: record(RIGHT, QUOTES, STRONG)
    )
    assert result.ok and result.call_id == failed.call_id
    assert cascade.escalated == [WHOLE_DOCUMENT] and cascade.field_models == dict.fromkeys(RIGHT, STRONG)
    assert cascade.cost_usd[STRONG] == pytest.approx(0.0015)  # 1000 x $1 + 100 x $5 per million


# ---------------------------------------------------------------------------- through process_document


class TwoModels(CountingProvider):
    """The cheap model moves the date a day (its first extraction; its quote, the document's, then disagrees
    with it, as the local model's ``corrupt`` fault does); the strong one reads it right."""

    def __init__(self) -> None:
        super().__init__({TEXT: json.dumps(RIGHT)})
        self.extractions = 0

    def converse(self, document: Any, system: str, user: str) -> Any:
        reply = super().converse(document, system, user)
        self.extractions += 1
        if self.extractions == 1:
            text = json.loads(reply.text)
            text["filed"] = "2026-01-11"
            return reply.model_copy(update={"text": json.dumps(text)})
        return reply


@pytest.fixture
def job(cloud: None) -> PreparedJob:
    def build() -> PreparedJob:
        put_object(f"{PREFIX}claim.txt", TEXT)
        return prepare("job-cascade", definition=bundle())

    return build_once("cascade.job", build)


def test_the_strong_model_gives_the_field_the_cheap_one_got_wrong(job: PreparedJob) -> None:
    model = TwoModels()
    entry = items(job)[0]
    outcome = process_document(document_event(job, entry), FakeLambdaContext(), provider=model)
    assert outcome.status == "extracted"
    result = s3_json.get_result(job.job_id, entry.document_id)
    assert result is not None and result.fields == RIGHT and result.cascade is not None
    assert result.cascade.escalated == ["filed"]
    assert result.cascade.field_models == {"policy": CHEAP, "filed": STRONG, "note": CHEAP}
    journal = s3_json.list_model_calls(job.job_id, entry.document_id)
    purposes: list[CallPurpose] = sorted(call.purpose for call in journal)
    assert purposes == ["escalate", "extract"]
    assert result.cascade.escalate_call_id == next(c.call_id for c in journal if c.purpose == "escalate")
    assert result.evidence["filed"].grounding == "grounded"
    # the operator's commands (inspect, trace) know the step: its durable record is where they look
    assert document_steps(bundle(), result) == ["extract", "escalate"] == document_steps(bundle())
    assert document_steps(bundle(None)) == ["extract"]


def test_a_model_the_deployment_does_not_allow_fails_the_document_before_any_call(
    job: PreparedJob, env: pytest.MonkeyPatch
) -> None:
    """MODELS_ALLOWED (the deployment's model_id and extra_model_ids) lacks the definition's cheap model: the
    document is rejected with ModelNotAllowed naming it and the fix, and no model is called (on AWS the call
    would be refused later with AccessDenied)."""
    env.setenv("MODELS_ALLOWED", json.dumps(["fake-model", STRONG]))
    get_settings.cache_clear()
    model, entry = TwoModels(), items(job)[0]
    outcome = process_document(document_event(job, entry), FakeLambdaContext(), provider=model)
    assert (outcome.status, outcome.error) == ("rejected", "ModelNotAllowed")
    result = s3_json.get_result(job.job_id, entry.document_id)
    assert result is not None and result.reason is not None
    assert CHEAP in result.reason and STRONG not in result.reason.split("(")[0]
    assert "extra_model_ids" in result.reason
    assert model.asked == [] and s3_json.list_model_calls(job.job_id, entry.document_id) == []


def test_models_the_deployment_allows_are_called(job: PreparedJob, env: pytest.MonkeyPatch) -> None:
    env.setenv("MODELS_ALLOWED", json.dumps(["fake-model", CHEAP, STRONG]))
    get_settings.cache_clear()
    model, entry = TwoModels(), items(job)[0]
    outcome = process_document(document_event(job, entry), FakeLambdaContext(), provider=model)
    assert outcome.status == "extracted" and model.asked == ["extract", "extract"]


def test_a_crash_after_the_strong_call_never_repeats_it(
    job: PreparedJob, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The process dies right after the strong call was journalled, before its durable step completed: the
    retry (after the dead invocation's deadline) finds the journalled call and reuses it; the model is called
    twice in all, never a third time."""
    real = calls.journal_call

    def dying(*args: Any, **kwargs: Any) -> Any:
        journalled = real(*args, **kwargs)
        if journalled.purpose == "escalate":
            raise SimulatedCrash("killed after the strong call was journalled")
        return journalled

    monkeypatch.setattr(calls, "journal_call", dying)
    model, entry = TwoModels(), items(job)[0]
    with pytest.raises(SimulatedCrash):
        process_document(document_event(job, entry), FakeLambdaContext(timeout_ms=800), provider=model)
    monkeypatch.setattr(calls, "journal_call", real)
    time.sleep(0.9)  # the dead invocation's deadline: its in-progress record of the step expires
    outcome = process_document(document_event(job, entry, retry_count=1), FakeLambdaContext(), provider=model)
    assert outcome.status == "extracted" and model.asked == ["extract", "extract"]
    result = s3_json.get_result(job.job_id, entry.document_id)
    assert result is not None and result.fields == RIGHT


def test_fields_of_both_models_the_schema_refuses_together_are_the_strong_models_alone() -> None:
    """A rule across fields (here: this date with the cheap model's note is refused) may refuse two valid
    replies mixed: the strong model's reply is then taken whole."""
    schema = {
        **SCHEMA,
        "not": {
            "properties": {"filed": {"const": "2026-01-10"}, "note": {"const": "cheap note"}},
            "required": ["filed", "note"],
        },
    }
    spec = {"description": "a claim", "schema": "claim.json"}
    crossed = ClassBundle.model_validate({"spec": spec, "schema": schema})
    first = record({**WRONG_DATE, "note": "cheap note"}, QUOTES, CHEAP)
    strong = record({**RIGHT, "note": "strong note"}, QUOTES, STRONG)
    result, cascade = cascaded((CHEAP, STRONG), first, crossed, lambda: [TEXT], lambda: strong)
    assert result.fields is not None and result.fields["note"] == "strong note"
    assert cascade.escalated == [WHOLE_DOCUMENT] and cascade.field_models == dict.fromkeys(RIGHT, STRONG)
    assert cascade.reasons[-1] == "the fields of both models together do not match the class's schema"
