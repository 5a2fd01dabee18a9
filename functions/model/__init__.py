"""Model providers: the ModelProvider protocol, Bedrock (Converse) and an offline deterministic extractor."""

from __future__ import annotations

from collections.abc import Callable

from functions.model.base import ModelProvider, Prompt, load_prompt, parse_facts
from functions.model.bedrock import BedrockConverseProvider
from functions.model.offline import OfflineProvider
from functions.settings import Settings


def get_model_provider(
    settings: Settings, model_id: str | None = None, *, time_left: Callable[[], float] | None = None
) -> ModelProvider:
    """The MODEL_PROVIDER provider for ``model_id`` (default MODEL_ID; jobs pass their pinned id).
    ``time_left`` (seconds left in the invocation) bounds each Bedrock call's read timeout."""
    chosen = model_id or settings.model_id
    if settings.model_provider == "bedrock":
        return BedrockConverseProvider(
            chosen,
            max_tokens=settings.model_max_tokens,
            temperature=settings.model_temperature,
            time_left=time_left,
        )
    return OfflineProvider(chosen)


__all__ = [
    "BedrockConverseProvider",
    "ModelProvider",
    "OfflineProvider",
    "Prompt",
    "get_model_provider",
    "load_prompt",
    "parse_facts",
]
