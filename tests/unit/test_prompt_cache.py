"""Caching where it pays (issue #54): a cachePoint after the system prompt only for a model whose minimum
cacheable prefix the prompt reaches (functions/inference/prompt_cache.py), the cached tokens read back from
Converse's usage and priced at the model's cache shares (functions/spend.py), and the local Bedrock answering
a cachePoint as Bedrock does (docagent/localcloud/bedrock/prompt_cache.py)."""

from __future__ import annotations

import json

import pytest

from docagent.localcloud.bedrock.backends import converse_answer
from docagent.localcloud.bedrock.prompt_cache import TTL_SECONDS, PromptCache
from functions import spend
from functions.inference.converse import converse_body, read_reply
from functions.inference.prompt_cache import CACHE_POINT, min_cache_tokens
from functions.payloads.model_calls import ModelCallRecord
from functions.reading.documents import document_input
from stacks.config import DEFAULT_CHEAP_MODEL_ID, DEFAULT_MODEL_ID

LITE, HAIKU = DEFAULT_CHEAP_MODEL_ID, DEFAULT_MODEL_ID
DOCUMENT = document_input(b"Invoice 1\nTotal EUR 10.00\n", "doc-1")


def _system(tokens: int) -> str:
    return "x" * (tokens * 4)


@pytest.mark.parametrize(
    ("model", "tokens", "cached"),
    [
        (LITE, 999, False),  # Nova: 1K a checkpoint
        (LITE, 1_000, True),
        (HAIKU, 4_095, False),  # Claude Haiku 4.5: 4,096
        (HAIKU, 4_096, True),
        ("anthropic.claude-3-haiku-20240307-v1:0", 50_000, False),  # no explicit caching listed
    ],
)
def test_a_cache_point_is_sent_only_above_the_models_minimum(model: str, tokens: int, cached: bool) -> None:
    body = converse_body(DOCUMENT, _system(tokens), "read it", 800, 0.0, model_id=model)
    assert body["system"][0] == {"text": _system(tokens)}
    assert (CACHE_POINT in body["system"]) is cached
    assert converse_body(DOCUMENT, _system(tokens), "read it", 800, 0.0)["system"] == [
        {"text": _system(tokens)}
    ]


def test_the_minimums_are_the_documented_ones() -> None:
    assert (min_cache_tokens(HAIKU), min_cache_tokens(LITE)) == (4_096, 1_000)
    assert min_cache_tokens("us.anthropic.claude-3-5-haiku-20241022-v1:0") == 2_048


def test_spend_prices_cached_tokens_at_the_models_shares() -> None:
    plain = spend.call_cost_nano(HAIKU, 5_000, 100)
    # 4,096 read from the cache at a tenth, the rest as input: cheaper than all as input
    read = spend.call_cost_nano(HAIKU, 904, 100, cache_read_tokens=4_096)
    written = spend.call_cost_nano(HAIKU, 904, 100, cache_write_tokens=4_096)
    price = spend.model_price(HAIKU)
    assert read == pytest.approx(plain - 4_096 * price.input_per_1000 * 0.9 * 1_000_000, abs=1)
    assert written == pytest.approx(plain + 4_096 * price.input_per_1000 * 0.25 * 1_000_000, abs=1)
    lite = spend.model_price(LITE)
    assert spend.call_cost_nano(LITE, 0, 0, cache_read_tokens=1_000) == pytest.approx(
        1_000 * lite.input_per_1000 * 0.25 * 1_000_000, abs=1
    )
    assert spend.call_cost_nano(LITE, 0, 0, "batch", cache_write_tokens=1_000) == pytest.approx(
        1_000 * lite.input_per_1000 * 0.5 * 1_000_000, abs=1
    )


def test_converse_usage_with_cache_tokens_is_recorded_and_priced() -> None:
    _, _, body = converse_answer("{}", "end_turn", 1_500, 20, 0.0, cached=(1_200, 0))
    answer = json.loads(body)
    assert answer["usage"] == {
        "inputTokens": 300,
        "outputTokens": 20,
        "cacheReadInputTokens": 1_200,
        "cacheWriteInputTokens": 0,
        "totalTokens": 1_520,
    }
    reply = read_reply(answer, LITE, 800)
    assert (reply.input_tokens, reply.cache_read_tokens, reply.cache_write_tokens) == (300, 1_200, 0)
    record = ModelCallRecord.model_validate(
        {
            "call_id": "c", "job_id": "j", "document_id": "d", "provider": "aws.bedrock", "model_id": LITE,
            "prompt_version": "v", "prompt_sha256": "s", "input_tokens": 300, "output_tokens": 20,
            "cache_read_tokens": 1_200, "outcome": "ok", "retry_count": 0, "started_at": "t",
            "finished_at": "t", "duration_ms": 1,
        }
    )  # fmt: skip
    assert spend.record_cost_nano(record) == spend.call_cost_nano(LITE, 300, 20, cache_read_tokens=1_200)
    assert spend.record_cost_nano(record.to_extraction()) == spend.record_cost_nano(record)
    assert "cacheReadInputTokens" not in json.loads(converse_answer("{}", "end_turn", 9, 1, 0.0)[2])["usage"]


def test_the_local_bedrock_writes_then_reads_a_prefix_above_the_minimum_within_its_ttl() -> None:
    now = [0.0]
    cache = PromptCache(clock=lambda: now[0])
    system = [{"text": _system(1_000)}, CACHE_POINT]
    assert cache.usage(LITE, system) == (0, 1_000)  # written
    now[0] = TTL_SECONDS - 1
    assert cache.usage(LITE, system) == (1_000, 0)  # read
    now[0] += TTL_SECONDS + 1
    assert cache.usage(LITE, system) == (0, 1_000)  # expired: written again
    assert cache.usage(HAIKU, system) == (0, 0)  # under Claude Haiku 4.5's 4,096
    assert cache.usage(LITE, [{"text": _system(1_000)}]) == (0, 0)  # no checkpoint
