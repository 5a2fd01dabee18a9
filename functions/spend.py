"""What a finished model call costs: the one dated price table of the project (docs/cost.md).

``docagent cost`` estimates a job with it, the budget (functions/budget.py) reserves and settles with it, and
the operator's actual cost of a job (the journalled calls' tokens) is priced with it. Amounts are kept in
integer nano-dollars (1e-9 USD) so that sums are exact and do not depend on the order of the calls: an
unstopped job and a stopped-then-redriven one spend exactly the same.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from functions.payloads.common import InferenceMode

PRICES_AS_OF = "2026-11-30"
NANO_PER_USD = 1_000_000_000
# Batch inference bills half the on-demand price, input and output alike. Looked up 2026-12-02:
# https://aws.amazon.com/bedrock/pricing/ ("Batch ... 50% lower price compared to on-demand"), confirmed by
# https://www.wring.co/blog/aws-bedrock-batch-inference-guide ("Output tokens receive the same 50% discount")
# and https://clauder-navi.com/en/bedrock-claude-cost/ ("Batch API (50% discount on both input and output)").
BATCH_PRICE_FACTOR = 0.5


# What a model reads through Converse ("Supported models and model features", looked up 2026-12-07:
# https://docs.aws.amazon.com/bedrock/latest/userguide/conversation-inference-supported-models-features.html):
# text always, "image" (the Vision column), "document" (the Document chat column: a PDF or DOCX block).
TEXT_ONLY: frozenset[str] = frozenset({"text"})
TEXT_AND_DOCUMENTS: frozenset[str] = frozenset({"text", "document"})
EVERYTHING: frozenset[str] = frozenset({"text", "image", "document"})


# Prompt caching (docs/cost.md, "Caching where it pays"): a token read from the cache or written to it is
# billed at a share of the input price. Anthropic's models on Bedrock: cache write 1.25x, cache read 0.1x (5
# minute TTL; looked up 2026-12-07: https://aws.amazon.com/bedrock/pricing/ as summarised by
# https://clauder-navi.com/en/bedrock-claude-cost/, "Prompt Caching (cache write at 1.25x, cache read at
# 0.1x)"). Amazon Nova: cache read 75 % off input (Nova Pro $0.20 against $0.80 per 1M,
# https://www.swfte.com/de/blog/amazon-nova-pro-pricing, "As of May 2026"); no cache-write price is listed for
# Nova, so a written token is priced as an input token (1.0x).
CLAUDE_CACHE = (0.1, 1.25)
NOVA_CACHE = (0.25, 1.0)


@dataclass(frozen=True)
class ModelPrice:
    """On-demand price per 1,000 tokens; ``matches`` is a substring of the model or inference profile id;
    ``reads``: what Converse lets the model read (text, image, document), None where not recorded;
    ``cache``: (read, write) shares of the input price of a cached token."""

    matches: str
    input_per_1000: float
    output_per_1000: float
    source: str
    reads: frozenset[str] | None = None
    cache: tuple[float, float] = CLAUDE_CACHE

    def batch_per_1000(self) -> tuple[float, float]:
        """(input, output) per 1,000 tokens on batch inference."""
        return self.input_per_1000 * BATCH_PRICE_FACTOR, self.output_per_1000 * BATCH_PRICE_FACTOR


# Bedrock on-demand, per 1,000 tokens. As of 2026-11: https://aws.amazon.com/bedrock/pricing/ (Anthropic);
# Claude 3 Haiku $0.25 / $1.25 per million (also https://inventivehq.com/blog/aws-bedrock-pricing-guide,
# checked again 2026-12-04: the cheap model of the cascade figures, docs/evaluation.md "Cheaper model first"),
# Claude 3.5 Haiku $0.80 / $4.00 per million (https://deploybase.ai/articles/amazon-bedrock-pricing),
# Claude Haiku 4.5 $1 / $5 per million on the global endpoint, regional (us.*) 10% more
# (https://clauder-navi.com/en/bedrock-claude-cost/). The first entry whose ``matches`` is in the id wins.
# Amazon Nova, looked up 2026-12-07 (us-east-1, on-demand, per 1M tokens input / output; the in-Region id
# amazon.nova-*-v1:0 and the us./eu. geographic profiles alike): Nova Micro $0.035 / $0.14, Nova Lite $0.06 /
# $0.24, Nova Pro $0.80 / $3.20 (https://aws.amazon.com/bedrock/pricing/ as quoted by
# https://pristren.com/blog/amazon-nova-micro-ultra-fast and
# https://www.swfte.com/de/blog/amazon-nova-pro-pricing,
# "As of May 2026": Pro batch $0.40 / $1.60, i.e. BATCH_PRICE_FACTOR; the Presidentlin llm-pricing-calculator
# table lists Micro batch $0.0175 / $0.07 and Lite batch $0.03 / $0.12, half again). Converse: Micro reads
# text only (no document chat, no vision), Lite and Pro read text, images and documents (the page above).
# Nova 2 Lite (amazon.nova-2-lite-v1:0, cross-Region profiles only) is not priced: no AWS price was found on
# 2026-12-07 (resellers quote $0.38 / $3.16 with their margin), so its id is named as unpriced, not guessed.
NOVA_SOURCE = "https://aws.amazon.com/bedrock/pricing/ (looked up 2026-12-07)"
MODEL_PRICES: tuple[ModelPrice, ...] = (
    ModelPrice("claude-3-haiku", 0.00025, 0.00125, "https://aws.amazon.com/bedrock/pricing/", EVERYTHING),
    ModelPrice(
        "claude-3-5-haiku", 0.0008, 0.004, "https://aws.amazon.com/bedrock/pricing/", TEXT_AND_DOCUMENTS
    ),
    ModelPrice("global.anthropic.claude-haiku-4-5", 0.001, 0.005, "https://aws.amazon.com/bedrock/pricing/"),
    ModelPrice("claude-haiku-4-5", 0.0011, 0.0055, "https://aws.amazon.com/bedrock/pricing/ (regional +10%)"),
    ModelPrice("amazon.nova-micro", 0.000035, 0.00014, NOVA_SOURCE, TEXT_ONLY, NOVA_CACHE),
    ModelPrice("amazon.nova-lite", 0.00006, 0.00024, NOVA_SOURCE, EVERYTHING, NOVA_CACHE),
    ModelPrice("amazon.nova-pro", 0.0008, 0.0032, NOVA_SOURCE, EVERYTHING, NOVA_CACHE),
)


# Amazon Textract DetectDocumentText (the OCR of a page without a text layer, functions/reading/ocr/), per
# 1,000 pages: $1.50 for the first million pages a month, $0.60 beyond (looked up 2026-12-07:
# https://aws.amazon.com/textract/pricing/, "Detect Document Text API", as quoted by public cost notes:
# "$1.50 per 1,000 pages for the first 1 million pages, and $0.60 per 1,000 pages over a million").
# docagent prices every page at the first tier: never under-counted.
OCR_PRICES_AS_OF = "2026-12-07"
OCR_PRICE_PER_1000_PAGES = 1.50
OCR_PRICE_SOURCE = "https://aws.amazon.com/textract/pricing/ (Detect Document Text API, looked up 2026-12-07)"


def ocr_cost_nano(pages: int) -> int:
    """``pages`` read by OCR (one DetectDocumentText call each), in nano-dollars."""
    return round(pages * OCR_PRICE_PER_1000_PAGES * NANO_PER_USD / 1000)


def plus(cost_usd: float | None, more_usd: float | None) -> float | None:
    """A document's model cost with its OCR's added (None stays None: a model without a dated price)."""
    if cost_usd is None or not more_usd:
        return cost_usd
    return to_usd(to_nano(cost_usd) + to_nano(more_usd))


def model_price(model_id: str) -> ModelPrice:
    """The price of a model id; LookupError naming the known models when there is none."""
    for price in MODEL_PRICES:
        if price.matches in model_id:
            return price
    known = ", ".join(price.matches for price in MODEL_PRICES)
    raise LookupError(f"no price for model {model_id!r} in functions/spend.py (known: {known})")


def price_factor(mode: InferenceMode) -> float:
    """The share of the on-demand price a call made this way costs (batch: BATCH_PRICE_FACTOR)."""
    return BATCH_PRICE_FACTOR if mode == "batch" else 1.0


def call_cost_nano(
    model_id: str,
    input_tokens: int,
    output_tokens: int,
    mode: InferenceMode = "on_demand",
    *,
    cache_read_tokens: int = 0,
    cache_write_tokens: int = 0,
) -> int:
    """A model call's cost in nano-dollars, rounded up (never under-counted). ``input_tokens`` are those
    neither read from nor written to the prompt cache (Converse's ``inputTokens`` with caching: AWS, "Prompt
    caching", looked up 2026-12-07); the cached ones are priced at the model's ``cache`` shares."""
    price = model_price(model_id)
    factor = price_factor(mode)
    read, write = price.cache
    input_equivalent = input_tokens + cache_read_tokens * read + cache_write_tokens * write
    # per 1,000 tokens in USD = per token in micro-dollars * 1,000, so per token in nano-dollars * 1e3 / 1e3
    usd_per_1000 = input_equivalent * price.input_per_1000 + output_tokens * price.output_per_1000
    nano = usd_per_1000 * factor * 1_000_000
    return int(-(-round(nano * 1000) // 1000))


class CallTokens(Protocol):
    """What a finished call's record says of its tokens (ModelCallRecord, ExtractionRecord)."""

    model_id: str
    input_tokens: int
    output_tokens: int
    inference: InferenceMode
    cache_read_tokens: int
    cache_write_tokens: int


def record_cost_nano(call: CallTokens) -> int:
    """A journalled call's cost (``call_cost_nano`` of its model, tokens, cached tokens and mode)."""
    return call_cost_nano(
        call.model_id,
        call.input_tokens,
        call.output_tokens,
        call.inference,
        cache_read_tokens=call.cache_read_tokens,
        cache_write_tokens=call.cache_write_tokens,
    )


def records_cost_usd(calls: Iterable[CallTokens]) -> float | None:
    """Finished calls' records priced together; None when a model has no dated price."""
    try:
        return to_usd(sum(record_cost_nano(call) for call in calls))
    except LookupError:
        return None


def call_cost_usd(
    model_id: str, input_tokens: int, output_tokens: int, mode: InferenceMode = "on_demand"
) -> float:
    """A finished model call's cost in US dollars (the dated price of its model, on-demand or batch)."""
    return to_usd(call_cost_nano(model_id, input_tokens, output_tokens, mode))


def to_usd(nano: int) -> float:
    return round(nano / NANO_PER_USD, 9)


def to_nano(usd: float) -> int:
    return round(usd * NANO_PER_USD)


def calls_cost_usd(calls: Iterable[tuple[str, int, int, InferenceMode]]) -> float | None:
    """(model id, input tokens, output tokens, mode) of finished calls priced together; None when a model has
    no dated price."""
    try:
        return to_usd(sum(call_cost_nano(*call) for call in calls))
    except LookupError:
        return None
