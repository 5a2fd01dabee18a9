"""Amazon Bedrock through the Converse API."""

from __future__ import annotations

from typing import TYPE_CHECKING

from functions import aws
from functions.errors import ExtractionFailed
from functions.model.base import parse_facts
from functions.models import ModelResponse

if TYPE_CHECKING:
    from mypy_boto3_bedrock_runtime import BedrockRuntimeClient

MAX_OUTPUT_TOKENS = 800


class BedrockConverseProvider:
    """Asks for JSON only (the system prompt), then parses and validates the reply against ExtractedFacts."""

    system = "aws.bedrock"
    operation = "chat"

    def __init__(self, model_id: str, client: BedrockRuntimeClient | None = None) -> None:
        self._model_id = model_id
        self._client = client

    @property
    def model_id(self) -> str:
        return self._model_id

    def extract(self, text: str, prompt: str) -> ModelResponse:
        client = self._client or aws.bedrock_runtime_client()
        response = client.converse(
            modelId=self._model_id,
            system=[{"text": prompt}],
            messages=[
                {
                    "role": "user",
                    "content": [
                        {"text": f"<document>\n{text}\n</document>\n\nReply with the JSON object only."}
                    ],
                }
            ],
            inferenceConfig={"maxTokens": MAX_OUTPUT_TOKENS, "temperature": 0.0},
        )
        usage = response.get("usage", {})
        input_tokens = int(usage.get("inputTokens", 0))
        output_tokens = int(usage.get("outputTokens", 0))
        reply = "".join(
            block.get("text", "")
            for block in response.get("output", {}).get("message", {}).get("content", [])
        )
        if response.get("stopReason") == "max_tokens":
            raise ExtractionFailed(
                f"model reply was cut off at {MAX_OUTPUT_TOKENS} tokens (stopReason max_tokens)",
                model_id=self._model_id,
                input_tokens=input_tokens,
                output_tokens=output_tokens,
            )
        facts = parse_facts(
            reply, model_id=self._model_id, input_tokens=input_tokens, output_tokens=output_tokens
        )
        return ModelResponse(
            facts=facts, model_id=self._model_id, input_tokens=input_tokens, output_tokens=output_tokens
        )
