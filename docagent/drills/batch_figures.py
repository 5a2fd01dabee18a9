"""What a job's model calls cost, by how each was made (on-demand or batch inference), and what the local
cloud's batch jobs of a job were: the figures ``docagent demo --inference`` prints (docs/batch.md)."""

from __future__ import annotations

from typing import Any

from docagent.drills import prices
from functions.batch.facts import price_share
from functions.batch.jobs import batch_job_name
from functions.models import ModelCallRecord


def call_cost_usd(call: ModelCallRecord, model_id: str) -> float:
    """One finished call at the model's on-demand price, times its mode's share (batch: half).

    TODO(issue 25, part 1): functions/spend.py's pricing function (model id, tokens, mode) replaces this."""
    price = prices.model_price(model_id)
    on_demand = (
        call.input_tokens / 1000 * price.input_per_1000 + call.output_tokens / 1000 * price.output_per_1000
    )
    return on_demand * price_share(call.inference)


def model_cost(journal: dict[str, list[ModelCallRecord]], model_id: str) -> dict[str, Any]:
    """The job's model cost from its journal: the total, and the calls and cost by mode (null costs for a
    model without a price)."""
    try:
        prices.model_price(model_id)
    except LookupError:
        model_id = ""
    by_mode: dict[str, dict[str, float]] = {}
    for calls in journal.values():
        for call in calls:
            mode = by_mode.setdefault(call.inference, {"calls": 0, "usd": 0.0})
            mode["calls"] += 1
            mode["usd"] += call_cost_usd(call, model_id) if model_id else 0.0
    if not model_id:
        return {
            "model_cost_usd": None,
            "model_calls_by_mode": {k: int(v["calls"]) for k, v in by_mode.items()},
        }
    return {
        "model_cost_usd": round(sum(mode["usd"] for mode in by_mode.values()), 6),
        "model_calls_by_mode": {name: int(mode["calls"]) for name, mode in sorted(by_mode.items())},
        "model_cost_usd_by_mode": {name: round(mode["usd"], 6) for name, mode in sorted(by_mode.items())},
    }


def batch_jobs_of(bedrock: Any, job_id: str) -> list[dict[str, Any]]:
    """The model invocation jobs submitted for a docagent job (by their name)."""
    name = batch_job_name(job_id)
    summaries = bedrock.list_model_invocation_jobs(nameContains=name).get("invocationJobSummaries", [])
    return [
        {
            "job_arn": job["jobArn"],
            "status": job["status"],
            "success_records": job.get("successRecordCount"),
            "error_records": job.get("errorRecordCount"),
        }
        for job in summaries
        if job.get("jobName") == name
    ]
