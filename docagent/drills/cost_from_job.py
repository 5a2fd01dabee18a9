"""``docagent cost --from-job JOB``: a finished (or stopped) job's actual model cost, from its journal, beside
what ``docagent cost`` estimates for a job of its size (the config's tokens per document and the assumed
output), and what its calls would have cost as batch inference (functions/spend.py)."""

from __future__ import annotations

from typing import Any

from docagent.drills import prices
from docagent.operations.records import JobRecords
from docagent.operations.spend import job_spend
from functions import spend
from stacks.config import DocAgentConfig


def compare(records: JobRecords, config: DocAgentConfig) -> dict[str, Any]:
    """The estimate, the actual figures and their ratio; ``batch_usd``: the same tokens at the batch price."""
    records.require_execution()
    actual = job_spend(records).model_dump(mode="json")
    documents = len(records.entries())
    input_tokens = documents * config.model_input_tokens_per_document
    output_tokens = documents * prices.ASSUMED_OUTPUT_TOKENS_PER_DOCUMENT
    estimate = spend.call_cost_usd(config.model_id, input_tokens, output_tokens)
    batch = sum(
        spend.call_cost_nano(call.model_id, call.input_tokens, call.output_tokens, "batch")
        for calls in records.model_calls.values()
        for call in calls
    )
    return {
        "job_id": records.job_id,
        "status": records.status,
        "documents": documents,
        "estimate": {
            "model_cost_usd": estimate,
            "model_id": config.model_id,
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
        },
        "actual": {
            "model_cost_usd": actual["model_cost_usd"],
            "per_document_usd": actual["per_document_usd"],
            "by_class": actual["by_class"],
            "model_calls": actual["model_calls"],
            "input_tokens": actual["input_tokens"],
            "output_tokens": actual["output_tokens"],
            "unpriced_models": actual["unpriced_models"],
            "batch_usd": spend.to_usd(batch),
        },
        "actual_over_estimate": round(actual["model_cost_usd"] / estimate, 4) if estimate else None,
        "budget": actual["budget"],
        "prices_as_of": spend.PRICES_AS_OF,
    }
