"""The local Bedrock's prompt cache (docs/local-cloud.md): a Converse request whose ``system`` holds a
``cachePoint`` block caches the system text before it, as Bedrock does (AWS, "Prompt caching for faster model
inference", looked up 2026-12-07): only when that prefix reaches the model's minimum tokens per checkpoint
(functions/inference/prompt_cache.py), for five minutes from its last use. The answer's ``usage`` then counts
the prefix as ``cacheWriteInputTokens`` (the first call) or ``cacheReadInputTokens`` (a call within the TTL),
and ``inputTokens`` only what was neither.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from docagent.localcloud.bedrock import billed_tokens
from functions.inference.prompt_cache import min_cache_tokens

TTL_SECONDS = 300


class PromptCache:
    """Cached prefixes by model and text digest, with when each was last used."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._used: dict[tuple[str, str], float] = {}
        self._lock = threading.Lock()

    def usage(self, model_id: str, system: Iterable[Mapping[str, Any]]) -> tuple[int, int]:
        """(read, written) tokens of the request's cached prefix: (0, 0) without a checkpoint, for a model
        that does not cache, or below its minimum."""
        blocks = list(system)
        points = [index for index, block in enumerate(blocks) if "cachePoint" in block]
        minimum = min_cache_tokens(model_id)
        if not points or minimum is None:
            return 0, 0
        prefix = "".join(str(block.get("text", "")) for block in blocks[: points[-1]] if "text" in block)
        tokens = billed_tokens.text_tokens(prefix)
        if tokens < minimum:
            return 0, 0
        key = (model_id, hashlib.sha256(prefix.encode()).hexdigest())
        now = self._clock()
        with self._lock:
            last = self._used.get(key)
            self._used[key] = now
        return (tokens, 0) if last is not None and now - last <= TTL_SECONDS else (0, tokens)
