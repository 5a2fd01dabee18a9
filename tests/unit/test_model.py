"""Model providers: the offline extractor's measured accuracy; Bedrock Converse through a botocore Stubber."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from docagent.drills.synthetic import generate_documents
from functions.documents import DocumentInput
from functions.errors import DocumentTooLong, DocumentUnreadable, ExtractionFailed, ModelRequestInvalid
from functions.model import BedrockConverseProvider, OfflineProvider, get_model_provider, load_prompt
from functions.model.base import PROMPTS_DIR
from functions.settings import get_settings

FIELDS = ("customer_id", "invoice_number", "invoice_date", "amount", "currency", "category")
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


def test_offline_extraction_accuracy_on_200_synthetic_documents():
    documents = generate_documents(200, seed=42)
    provider = OfflineProvider()
    correct = failed_documents = 0
    misses: dict[str, int] = dict.fromkeys(FIELDS, 0)
    for document in documents:
        try:
            facts = provider.extract(text_document(document.text), load_prompt("extract-v2").text).facts
        except ExtractionFailed:
            failed_documents += 1  # every field of a rejected extraction counts as wrong
            continue
        for field in FIELDS:
            if getattr(facts, field) == getattr(document.truth, field):
                correct += 1
            else:
                misses[field] += 1
    accuracy = correct / (len(documents) * len(FIELDS))
    print(
        f"\noffline extraction field accuracy: {accuracy:.4f} over {len(documents)} documents x "
        f"{len(FIELDS)} fields; rejected documents: {failed_documents}; misses per field: {misses}"
    )
    assert accuracy >= 0.95


def test_offline_extractor_reads_label_variants_and_ignores_distractors():
    text = """Globex Corporation | Invoice # 2026/0042 | March 14, 2026
Bill to: Ada Lovelace (Client no. 42)
Expense type: software
Net 1.000,00 €, tax 190,00 €
Amount payable: 1.190,00 € - due 13.04.2026
Order ref PO-55555
"""
    facts = OfflineProvider().extract(text_document(text), "").facts
    assert (facts.customer_id, facts.invoice_number, facts.invoice_date) == (
        "CUST-00042", "2026/0042", dt.date(2026, 3, 14),
    )  # fmt: skip
    assert (facts.amount, facts.currency, facts.category) == (Decimal("1190.00"), "EUR", "software")


def test_offline_extractor_counts_tokens_by_words():
    text = "Invoice number: A-1\nDate: 2026-01-02\nCustomer ID: CUST-00001\nTotal: EUR 10.00\n"
    response = OfflineProvider("offline-x").extract(text_document(text), "two words")
    assert response.model_id == "offline-x"
    assert response.input_tokens == 2 + 11
    assert response.facts.category == "other"


def test_offline_extractor_rejects_a_document_without_facts():
    with pytest.raises(ExtractionFailed, match="does not match the extraction schema") as raised:
        OfflineProvider().extract(text_document("Dear team, see you on Monday."), "")
    assert raised.value.output_tokens > 0


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


def test_bedrock_provider_sends_the_prompt_and_parses_the_reply(bedrock):
    client, stubber = bedrock
    prompt = load_prompt("extract-v2").text
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
                        {
                            "text": "Extract the invoice facts from the attached document document-00000. "
                            "Reply with the JSON object only."
                        },
                    ],
                }
            ],
            "inferenceConfig": {"maxTokens": 800, "temperature": 0.0},
        },
    )
    response = BedrockConverseProvider("anthropic.claude-3-haiku-20240307-v1:0", client).extract(
        text_document("INVOICE 42"), prompt
    )
    assert response.facts.amount == Decimal("1234.56")
    assert (response.input_tokens, response.output_tokens) == (812, 64)
    assert response.model_id == "anthropic.claude-3-haiku-20240307-v1:0"


def test_bedrock_reply_in_a_code_fence_is_accepted(bedrock):
    client, stubber = bedrock
    stubber.add_response("converse", converse_response(f"```json\n{json.dumps(GOOD_REPLY)}\n```"))
    assert (
        BedrockConverseProvider("m", client).extract(text_document("x"), "p").facts.customer_id
        == "CUST-00042"
    )


@pytest.mark.parametrize(
    ("reply", "stop_reason", "message"),
    [
        ('{"customer_id": "CUST-00042", "amount": ', "end_turn", "not valid JSON"),
        ("Sure! Here are the facts you asked for.", "end_turn", "not valid JSON"),
        ("", "end_turn", "reply is empty"),
        ("[1, 2]", "end_turn", "JSON list, not an object"),
        (json.dumps({**GOOD_REPLY, "currency": "euros"}), "end_turn", "currency"),
        (
            json.dumps({k: v for k, v in GOOD_REPLY.items() if k != "invoice_date"}),
            "end_turn",
            "invoice_date",
        ),
        (json.dumps(GOOD_REPLY)[:40], "max_tokens", "cut off"),
    ],
)
def test_bedrock_bad_replies_are_extraction_failures(bedrock, reply, stop_reason, message):
    client, stubber = bedrock
    stubber.add_response("converse", converse_response(reply, stop_reason))
    with pytest.raises(ExtractionFailed, match=message) as raised:
        BedrockConverseProvider("m", client).extract(text_document("x"), "p")
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
        BedrockConverseProvider("m", client).extract(
            DocumentInput(data=b"%PDF-1.7 broken", format="pdf", name="document-00007"), "p"
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
        BedrockConverseProvider("m", client).extract(text_document("x " * 10), "p")
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
        BedrockConverseProvider("m", client).extract(text_document("x"), "p")


def test_provider_is_chosen_by_settings(env):
    assert isinstance(get_model_provider(get_settings()), OfflineProvider)
    env.setenv("MODEL_PROVIDER", "bedrock")
    get_settings.cache_clear()
    provider = get_model_provider(get_settings(), "pinned-model")
    assert isinstance(provider, BedrockConverseProvider)
    assert provider.model_id == "pinned-model"


def test_prompt_versions_map_to_files_with_a_sha256():
    prompt = load_prompt("extract-v2")
    assert prompt.text == (PROMPTS_DIR / "extract_v2.txt").read_text()
    assert "document block" in prompt.text and load_prompt("extract-v1").sha256 != prompt.sha256
    assert len(prompt.sha256) == 64
    assert "JSON" in prompt.text
    with pytest.raises(ValueError, match="no prompt file"):
        load_prompt("extract-v999")
    with pytest.raises(ValueError, match="invalid prompt version"):
        load_prompt("../../etc/passwd")
