"""Bedrock's failures, named: transient ones retried by the workflow, permanent ones stop the job fast."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from functions import s3_json, storage
from functions.errors import (
    DocumentRejected,
    DocumentTooLong,
    ModelAccessDenied,
    ModelCallRefused,
    ModelError,
    ModelNotAvailable,
    ModelRequestInvalid,
    ModelThrottled,
    ModelUnavailable,
)
from functions.inference import BedrockConverseProvider
from functions.inference.instructions import extract_instruction
from functions.logic.process_document import process_document
from functions.reading.documents import DocumentInput
from functions.settings import get_settings
from tests.fakes import CountingProvider, FakeLambdaContext
from tests.moto_state import build_once
from tests.support import SEEDED_REPLIES, document_event, items, prepare, seed_documents
from tests.unit.test_model import GOOD_REPLY, converse_response, text_document

MODEL = "us.anthropic.claude-haiku-4-5-20251001-v1:0"
USER = extract_instruction("invoice", "document-00000")


@pytest.fixture
def stubbed() -> Any:
    client = boto3.client("bedrock-runtime", region_name="us-east-1")
    with Stubber(client) as stubber:
        yield client, stubber


@pytest.mark.parametrize(
    ("code", "status", "message", "expected"),
    [
        ("ThrottlingException", 429, "Too many requests, please wait before trying again.", ModelThrottled),
        ("ServiceQuotaExceededException", 400, "Your request exceeds the service quota", ModelThrottled),
        ("ServiceUnavailableException", 503, "Service unavailable", ModelUnavailable),
        ("ModelTimeoutException", 408, "Model timed out", ModelUnavailable),
        ("ModelNotReadyException", 429, "Model is not ready", ModelThrottled),
        ("InternalServerException", 500, "Internal error", ModelUnavailable),
        ("AccessDeniedException", 403, "You don't have access to the model", ModelAccessDenied),
        ("ResourceNotFoundException", 404, "Model not found", ModelNotAvailable),
        ("ValidationException", 400, "The provided model identifier is invalid.", ModelNotAvailable),
        ("ValidationException", 400, "temperature: must be <= 1", ModelRequestInvalid),
    ],
)
def test_each_bedrock_error_has_a_docagent_name(stubbed, code, status, message, expected) -> None:
    client, stubber = stubbed
    stubber.add_client_error("converse", code, message, http_status_code=status)
    with pytest.raises(expected) as raised:
        BedrockConverseProvider(MODEL, client).converse(text_document("x"), "p", USER)
    assert code in str(raised.value)
    if issubclass(expected, ModelCallRefused):
        assert "Fix:" in str(raised.value) and MODEL in str(raised.value)


def test_inference_config_comes_from_the_settings(stubbed) -> None:
    client, stubber = stubbed
    stubber.add_response(
        "converse",
        converse_response(json.dumps(GOOD_REPLY)),
        {
            "modelId": MODEL,
            "system": [{"text": "p"}],
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"document": {"format": "txt", "name": "document-00000", "source": {"bytes": b"x"}}},
                        {"text": USER},
                    ],
                }
            ],
            "inferenceConfig": {"maxTokens": 321, "temperature": 0.25},
        },
    )
    BedrockConverseProvider(MODEL, client, max_tokens=321, temperature=0.25).converse(
        text_document("x"), "p", USER
    )


@pytest.mark.parametrize(
    ("remaining", "expected"), [(60.0, 42), (500.0, 60), (3.0, 2), (10.9, 7), (1.4, 0.9), (0.6, 0.4)]
)
def test_the_read_timeout_stays_below_the_invocation_s_remaining_time(remaining, expected) -> None:
    provider = BedrockConverseProvider(MODEL, time_left=lambda: remaining)
    assert provider.read_timeout() == expected
    assert provider.read_timeout() < remaining


def test_no_call_is_started_without_time_for_it() -> None:
    with pytest.raises(ModelUnavailable, match="not enough for a model call") as raised:
        BedrockConverseProvider(MODEL, time_left=lambda: 0.4).read_timeout()
    assert raised.value.call_made is False  # nothing sent: nothing to journal


# ------------------------------------------------------------------------------ in process_document


class RefusingProvider(CountingProvider):
    """Raises ``errors`` in turn (one per call), then answers the seeded invoices with their labels."""

    def __init__(self, *errors: ModelError | DocumentRejected) -> None:
        super().__init__(SEEDED_REPLIES, model_id=MODEL)
        self._errors = list(errors)

    def converse(self, document: DocumentInput, system: str, user: str) -> Any:
        if self._errors:
            self.calls.append(document.data.decode())
            raise self._errors.pop(0)
        return super().converse(document, system, user)


@pytest.fixture
def job(cloud):
    def build():
        seed_documents(4)
        prepared = prepare("job-model")
        return prepared, items(prepared)

    return build_once("model_failures.job", build)


def _attempts(job_id: str, document_id: str) -> list[dict[str, Any]]:
    return [
        s3_json.get_json(obj["Key"])
        for obj in s3_json.list_objects(storage.model_attempts_prefix(job_id, document_id))
    ]


def test_a_throttled_attempt_is_journalled_and_the_retry_makes_the_one_finished_call(job) -> None:
    prepared, entries = job
    entry = entries[0]
    provider = RefusingProvider(ModelThrottled("Bedrock ThrottlingException: slow down"))
    with pytest.raises(ModelThrottled):
        process_document(document_event(prepared, entry), FakeLambdaContext(), provider=provider)
    assert s3_json.list_model_calls(prepared.job_id, entry.document_id) == []
    outcome = process_document(document_event(prepared, entry), FakeLambdaContext(), provider=provider)
    again = process_document(document_event(prepared, entry), FakeLambdaContext(), provider=provider)
    assert outcome == again and outcome.status == "extracted"
    assert len(provider.calls) == 2  # the throttled attempt and the one finished call, never a third
    assert len(s3_json.list_model_calls(prepared.job_id, entry.document_id)) == 1
    [attempt] = _attempts(prepared.job_id, entry.document_id)
    assert (attempt["error"], attempt["retryable"]) == ("ModelThrottled", True)


def test_a_document_too_long_for_the_model_is_its_own_rejection_and_the_breaker_stays_closed(job) -> None:
    prepared, entries = job
    provider = RefusingProvider(DocumentTooLong("Bedrock: Input is too long for requested model."))
    outcome = process_document(document_event(prepared, entries[0]), FakeLambdaContext(), provider=provider)
    assert (outcome.status, outcome.error) == ("rejected", "DocumentTooLong")
    [call] = s3_json.list_model_calls(prepared.job_id, entries[0].document_id)
    assert call.outcome == "DocumentTooLong" and "Input is too long" in str(call.reason)
    assert s3_json.get_model_breaker(prepared.job_id) is None
    again = process_document(document_event(prepared, entries[0]), FakeLambdaContext(), provider=provider)
    assert again == outcome and len(provider.calls) == 1, "a retry or redrive never calls the model again"
    others = [
        process_document(document_event(prepared, entry), FakeLambdaContext(), provider=provider).status
        for entry in entries[1:]
    ]
    assert others == ["extracted"] * len(entries[1:])


def test_a_permanent_refusal_opens_the_breaker_and_later_documents_fail_without_a_call(job) -> None:
    prepared, entries = job
    refusing = RefusingProvider(ModelAccessDenied("Bedrock AccessDeniedException: no. Fix: use the form"))
    with pytest.raises(ModelAccessDenied):
        process_document(document_event(prepared, entries[0]), FakeLambdaContext(), provider=refusing)
    breaker = s3_json.get_model_breaker(prepared.job_id)
    assert breaker is not None and breaker.error == "ModelAccessDenied"
    assert breaker.document_id == entries[0].document_id

    untouched = CountingProvider(SEEDED_REPLIES, model_id=MODEL)
    for entry in entries[1:]:
        with pytest.raises(ModelAccessDenied, match=r"breaker is open.*Fix: use the form"):
            process_document(document_event(prepared, entry), FakeLambdaContext(), provider=untouched)
    assert untouched.calls == []
    [attempt] = _attempts(prepared.job_id, entries[0].document_id)
    assert (attempt["error"], attempt["retryable"]) == ("ModelAccessDenied", False)


def test_the_breaker_closes_after_its_cool_down(job, env) -> None:
    prepared, entries = job
    env.setenv("MODEL_BREAKER_SECONDS", "0")
    get_settings.cache_clear()
    with pytest.raises(ModelNotAvailable):
        process_document(
            document_event(prepared, entries[0]),
            FakeLambdaContext(),
            provider=RefusingProvider(ModelNotAvailable("Bedrock ResourceNotFoundException")),
        )
    probe = CountingProvider(SEEDED_REPLIES, model_id=MODEL)
    outcome = process_document(document_event(prepared, entries[1]), FakeLambdaContext(), provider=probe)
    assert outcome.status == "extracted" and len(probe.calls) == 1
