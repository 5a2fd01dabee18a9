"""Model providers: the ModelProvider protocol and Bedrock (Converse); the prompts a definition's classes
get (functions/inference/prompts.py)."""

from __future__ import annotations

from collections.abc import Callable

from functions.inference.base import ModelProvider
from functions.inference.converse import BedrockConverseProvider
from functions.settings import Settings


def get_model_provider(
    settings: Settings, model_id: str | None = None, *, time_left: Callable[[], float] | None = None
) -> ModelProvider:
    """The Bedrock provider for ``model_id`` (default MODEL_ID; jobs pass their pinned id). ``time_left``
    (seconds left in the invocation) bounds each call's read timeout. Locally, the local cloud's Bedrock
    endpoint answers (docs/local-cloud.md)."""
    return BedrockConverseProvider(
        model_id or settings.model_id,
        max_tokens=settings.model_max_tokens,
        temperature=settings.model_temperature,
        time_left=time_left,
    )


__all__ = [
    "BedrockConverseProvider",
    "ModelProvider",
    "get_model_provider",
]
