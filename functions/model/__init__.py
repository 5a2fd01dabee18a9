"""Model providers: the ModelProvider protocol, Bedrock (Converse) and an offline deterministic extractor."""

from __future__ import annotations

from functions.model.base import ModelProvider, Prompt, load_prompt, parse_facts
from functions.model.bedrock import BedrockConverseProvider
from functions.model.offline import OfflineProvider
from functions.settings import Settings


def get_model_provider(settings: Settings, model_id: str | None = None) -> ModelProvider:
    """The MODEL_PROVIDER provider for ``model_id`` (default MODEL_ID; jobs pass their pinned id)."""
    chosen = model_id or settings.model_id
    if settings.model_provider == "bedrock":
        return BedrockConverseProvider(chosen)
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
