"""docagent/localcloud/bedrock/backends.py: what `--model` parses to, and real Bedrock behind the local cloud
(botocore's Stubber: the request goes as the function sent it, bytes as bytes; the answer and its errors come
back as Converse's)."""

from __future__ import annotations

import json

import boto3
import pytest
from botocore.stub import Stubber

from docagent.localcloud.bedrock.backends import BedrockBackend, ModelChoice, backend_of, parse_model

MODEL = "eu.anthropic.claude-sonnet-4-5-20250929-v1:0"


def test_a_model_spec_is_labels_bedrock_or_an_openai_url() -> None:
    assert parse_model("labels") == ModelChoice()
    assert parse_model("bedrock", record=True) == ModelChoice(kind="bedrock", record=True)
    ollama = parse_model("openai=http://127.0.0.1:11434/v1/#llama3.1")
    assert (ollama.url, ollama.model_name, ollama.mode()) == (
        "http://127.0.0.1:11434/v1",
        "llama3.1",
        "openai (http://127.0.0.1:11434/v1)",
    )
    assert parse_model(ollama.spec()) == ollama
    assert backend_of(ModelChoice()) is None
    for bad in ("gpt", "openai=127.0.0.1:11434", "openai="):
        with pytest.raises(ValueError, match="--model"):
            parse_model(bad)


def _stubbed() -> tuple[BedrockBackend, Stubber]:
    client = boto3.client("bedrock-runtime", region_name="eu-west-1")
    return BedrockBackend(client), Stubber(client)


def test_bedrock_gets_the_request_as_sent_and_answers_as_converse() -> None:
    backend, stubber = _stubbed()
    messages = [
        {
            "role": "user",
            "content": [
                {"document": {"format": "txt", "name": "document-00001", "source": {"bytes": "SGVsbG8="}}},
                {"text": "Extract ..."},
            ],
        }
    ]
    sent = [
        {
            **messages[0],
            "content": [
                {"document": {**messages[0]["content"][0]["document"], "source": {"bytes": b"Hello"}}},
                messages[0]["content"][1],
            ],
        }
    ]
    stubber.add_response(
        "converse",
        {
            "output": {"message": {"role": "assistant", "content": [{"text": '{"total": "1.00"}'}]}},
            "stopReason": "end_turn",
            "usage": {"inputTokens": 120, "outputTokens": 9, "totalTokens": 129},
            "metrics": {"latencyMs": 5},
        },
        {
            "modelId": MODEL,
            "system": [{"text": "You read"}],
            "messages": sent,
            "inferenceConfig": {"maxTokens": 50},
        },
    )
    with stubber:
        status, _, body = backend.converse(MODEL, [{"text": "You read"}], messages, 50, "Hello")
    answer = json.loads(body)
    assert status == 200 and answer["output"]["message"]["content"][0]["text"] == '{"total": "1.00"}'
    assert answer["usage"] == {"inputTokens": 120, "outputTokens": 9, "totalTokens": 129}


def test_a_bedrock_refusal_keeps_its_status_and_code() -> None:
    backend, stubber = _stubbed()
    stubber.add_client_error("converse", "ThrottlingException", "Too many requests", 429)
    with stubber:
        status, headers, body = backend.converse(
            MODEL, [], [{"role": "user", "content": [{"text": "x"}]}], 10, ""
        )
    assert (status, headers["x-amzn-ErrorType"]) == (429, "ThrottlingException")
    assert json.loads(body)["message"] == "Too many requests"
