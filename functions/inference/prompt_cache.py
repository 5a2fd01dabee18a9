"""Prompt caching where it pays (docs/cost.md, "Caching where it pays"): a Converse ``cachePoint`` block after
the system prompt (a class's instructions, its schema's fields and the evidence paragraph: the same for every
document of the class), only for a model whose minimum cacheable prefix the prompt reaches. Below the
minimum Bedrock does not cache and the checkpoint only takes one of the request's four, so none is sent.

Minimum tokens per cache checkpoint (AWS, Bedrock User Guide "Prompt caching for faster model inference",
"Supported models": looked up 2026-12-07): Claude Haiku 4.5 4,096; Claude 3.5 Haiku 2,048; Claude 3.7
Sonnet, Sonnet 4 and 4.5, Opus 4 and 4.1 1,024; Amazon Nova Micro, Lite, Pro and Premier 1K (``system`` and
``messages`` only, at most 20K tokens cached). Claude 3 Haiku is not in the list: never cached. The first
entry whose key is in the model id wins.

The prompt's tokens are estimated at four characters a token (functions/budget.py's rule), on the short side
for JSON and numbers, so a prompt near the minimum is sent without a checkpoint rather than with a useless
one.
"""

from __future__ import annotations

from typing import Any

MIN_CACHE_TOKENS: tuple[tuple[str, int], ...] = (
    ("claude-haiku-4-5", 4_096),
    ("claude-3-5-haiku", 2_048),
    ("claude-3-7-sonnet", 1_024),
    ("claude-sonnet-4", 1_024),
    ("claude-opus-4-1", 1_024),
    ("claude-opus-4-2", 1_024),
    ("amazon.nova-micro", 1_000),
    ("amazon.nova-lite", 1_000),
    ("amazon.nova-pro", 1_000),
    ("amazon.nova-premier", 1_000),
)
CHARACTERS_PER_TOKEN = 4
CACHE_POINT: dict[str, Any] = {"cachePoint": {"type": "default"}}


def min_cache_tokens(model_id: str) -> int | None:
    """The model's minimum tokens per cache checkpoint; None: no explicit prompt caching known for it."""
    return next((minimum for key, minimum in MIN_CACHE_TOKENS if key in model_id), None)


def prompt_tokens(system: str) -> int:
    """The system prompt's tokens, estimated (characters / 4, rounded down)."""
    return len(system) // CHARACTERS_PER_TOKEN


def system_blocks(system: str, model_id: str | None) -> list[dict[str, Any]]:
    """The Converse ``system`` field: the prompt, and a cache checkpoint after it when the model caches and
    the prompt reaches its minimum (None: the model is not known here, nothing cached)."""
    minimum = None if model_id is None else min_cache_tokens(model_id)
    if minimum is None or prompt_tokens(system) < minimum:
        return [{"text": system}]
    return [{"text": system}, CACHE_POINT]
