"""The model provider: Bedrock Converse through a botocore Stubber (the reply's text back)."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from functions.budget import MAX_INPUT_TOKENS
from functions.errors import (
    DocumentTooLong,
    DocumentUnreadable,
    ExtractionFailed,
    ModelReplyInvalid,
    ModelRequestInvalid,
)
from functions.inference import BedrockConverseProvider, get_model_provider
from functions.inference.converse import read_reply
from functions.inference.instructions import extract_instruction
from functions.reading.documents import DocumentInput
from functions.settings import get_settings

GOOD_REPLY = {
    "customer_id": "CUST-00042",
    "invoice_number": "INV-2026-00042",
    "invoice_date": "2026-03-14",
    "amount": "1234.56",
    "currency": "EUR",
    "category": "hardware",
    "summary": "Two monitors and a dock.",
}


def text_document(text: str) -> DocumentInput:
    return DocumentInput(data=text.encode(), format="txt", name="document-00000")


def converse_response(text: str, stop_reason: str = "end_turn") -> dict[str, Any]:
    return {
        "output": {"message": {"role": "assistant", "content": [{"text": text}]}},
        "stopReason": stop_reason,
        "usage": {"inputTokens": 812, "outputTokens": 64, "totalTokens": 876},
        "metrics": {"latencyMs": 420},
    }


@pytest.fixture
def bedrock():
    client = boto3.client("bedrock-runtime", region_name="us-east-1")
    with Stubber(client) as stubber:
        yield client, stubber
        stubber.assert_no_pending_responses()


def test_bedrock_provider_sends_the_prompts_and_returns_the_reply(bedrock):
    client, stubber = bedrock
    prompt = "You extract the fields of a claim."
    user = extract_instruction("claim", "document-00000")
    stubber.add_response(
        "converse",
        converse_response(json.dumps(GOOD_REPLY)),
        {
            "modelId": "anthropic.claude-3-haiku-20240307-v1:0",
            "system": [{"text": prompt}],
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {
                            "document": {
                                "format": "txt",
                                "name": "document-00000",
                                "source": {"bytes": b"INVOICE 42"},
                            }
                        },
                        {"text": user},
                    ],
                }
            ],
            "inferenceConfig": {"maxTokens": 800, "temperature": 0.0},
        },
    )
    response = BedrockConverseProvider("anthropic.claude-3-haiku-20240307-v1:0", client).converse(
        text_document("INVOICE 42"), prompt, user
    )
    assert json.loads(response.text) == GOOD_REPLY
    assert (response.input_tokens, response.output_tokens) == (812, 64)
    assert response.model_id == "anthropic.claude-3-haiku-20240307-v1:0"


def test_a_reply_cut_off_at_the_token_limit_is_an_extraction_failure(bedrock):
    client, stubber = bedrock
    stubber.add_response("converse", converse_response(json.dumps(GOOD_REPLY)[:40], "max_tokens"))
    with pytest.raises(ExtractionFailed, match="cut off at 800 tokens") as raised:
        BedrockConverseProvider("m", client).converse(text_document("x"), "p", "u")
    assert (raised.value.input_tokens, raised.value.output_tokens, raised.value.model_id) == (812, 64, "m")


@pytest.mark.parametrize(
    "message",
    [
        "The model returned the following errors: messages.0.content.0.source.bytes: "
        "The document source bytes could not be parsed as the specified format.",
        "The PDF specified was not valid",
    ],
)
def test_bedrock_refusing_the_document_is_that_documents_rejection(bedrock, message):
    client, stubber = bedrock
    stubber.add_client_error("converse", "ValidationException", message, http_status_code=400)
    with pytest.raises(DocumentUnreadable, match="Bedrock refused the pdf document"):
        BedrockConverseProvider("m", client).converse(
            DocumentInput(data=b"%PDF-1.7 broken", format="pdf", name="document-00007"), "p", "u"
        )


@pytest.mark.parametrize(
    "message",
    [
        "Input is too long for requested model.",
        "The model returned the following errors: Input is too long for requested model.",
        "prompt is too long: 215000 tokens > 200000 maximum",
        "The model returned the following errors: input length and `max_tokens` exceed context limit: "
        "199000 + 800 > 200000, decrease input length or `max_tokens` and try again",
    ],
)
def test_bedrock_refusing_the_documents_length_is_that_documents_rejection(bedrock, message):
    client, stubber = bedrock
    stubber.add_client_error("converse", "ValidationException", message, http_status_code=400)
    with pytest.raises(DocumentTooLong, match="longer than the model's context window") as raised:
        BedrockConverseProvider("m", client).converse(text_document("x " * 10), "p", "u")
    assert message in str(raised.value), "Bedrock's own words are kept in the reason"


@pytest.mark.parametrize(
    "message",
    [
        "temperature: must be <= 1",
        "The maximum tokens you requested exceeds the model limit of 64000.",
        "Malformed input request: #: extraneous key [top_k] is not permitted, please reformat your input",
        "Something Bedrock says that nobody listed yet.",  # unknown: the safe default, the breaker
    ],
)
def test_bedrock_validation_errors_about_the_request_stay_errors(bedrock, message):
    client, stubber = bedrock
    stubber.add_client_error("converse", "ValidationException", message, http_status_code=400)
    with pytest.raises(ModelRequestInvalid):  # the job's problem, not the document's (issue 10's breaker)
        BedrockConverseProvider("m", client).converse(text_document("x"), "p", "u")


def test_the_provider_takes_the_jobs_pinned_model(env):
    assert get_model_provider(get_settings()).model_id == "fake-model"  # MODEL_ID
    provider = get_model_provider(get_settings(), "pinned-model")
    assert isinstance(provider, BedrockConverseProvider)
    assert provider.model_id == "pinned-model"


def test_recorded_tokens_never_exceed_what_the_request_allowed() -> None:
    """Issue 49: a 50 MB reply was priced $62.50, its tokens estimated from its length. The usage is clamped
    at the request's maxTokens and the context window, and the clamp named in the record."""
    answer = converse_response(json.dumps(GOOD_REPLY))
    answer["usage"] = {"inputTokens": 10**9, "outputTokens": 10**7, "totalTokens": 10**9 + 10**7}
    reply = read_reply(answer, "m", 800)
    assert (reply.input_tokens, reply.output_tokens) == (MAX_INPUT_TOKENS, 800)
    assert reply.tokens_clamped == (
        "output tokens 10,000,000 reported, clamped at the request's maxTokens 800; input tokens "
        "1,000,000,000 reported, clamped at the context window's 200,000"
    )
    with pytest.raises(ExtractionFailed) as cut:
        read_reply({**answer, "stopReason": "max_tokens"}, "m", 800)
    assert (cut.value.output_tokens, cut.value.tokens_clamped) == (800, reply.tokens_clamped)
    assert read_reply(converse_response("{}"), "m", 800).tokens_clamped is None  # as reported


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"usage": {"inputTokens": "lots", "outputTokens": 5}}, "usage.inputTokens: Input should be a valid"),
        ({"usage": None}, "usage: Input should be a valid dictionary"),
        ({"output": {"message": {"content": "hi"}}}, "output.message.content: Input should be a valid list"),
        ({"stopReason": 7}, "stopReason: Input should be a valid string (got '7')"),
    ],
)
def test_an_answer_that_is_no_converse_answer_is_the_documents_failure(
    change: dict[str, Any], said: str
) -> None:
    with pytest.raises(ModelReplyInvalid) as raised:
        read_reply({**converse_response("{}"), **change}, "m", 800)
    assert str(raised.value).startswith("model reply is not a Converse answer: ") and said in str(
        raised.value
    )
    assert raised.value.error_name == "ModelReplyInvalid" and raised.value.output_tokens == 0
