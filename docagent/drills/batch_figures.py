"""What a job's model calls cost, by how each was made (on-demand or batch inference), and what the local
cloud's batch jobs of a job were: the figures ``docagent demo --inference`` prints (docs/batch.md)."""

from __future__ import annotations

from typing import Any

from docagent.drills import prices
from functions import spend
from functions.batch_inference.facts import BATCH_MIN_RECORDS
from functions.batch_inference.invocation_jobs import batch_job_name_prefix
from functions.payloads.model_calls import ModelCallRecord


def model_calls_by_mode(journal: dict[str, list[ModelCallRecord]]) -> dict[str, int]:
    """How many of the job's finished model calls were made each way (their cost:
    docagent/operations/spend.py, which prices each call at its mode's price)."""
    counts: dict[str, int] = {}
    for calls in journal.values():
        for call in calls:
            counts[call.inference] = counts.get(call.inference, 0) + 1
    return dict(sorted(counts.items()))


def model_calls_by_model(journal: dict[str, list[ModelCallRecord]]) -> dict[str, dict[str, int]]:
    """Each model's finished calls of the job and their tokens (a cascade's cheap and strong model apart:
    docs/cost.md, "The default: cheap first"), by model id."""
    by_model: dict[str, dict[str, int]] = {}
    for calls in journal.values():
        for call in calls:
            figures = by_model.setdefault(call.model_id, {"calls": 0, "input_tokens": 0, "output_tokens": 0})
            figures["calls"] += 1
            figures["input_tokens"] += call.input_tokens
            figures["output_tokens"] += call.output_tokens
    return dict(sorted(by_model.items()))


def batch_jobs_of(bedrock: Any, job_id: str) -> list[dict[str, Any]]:
    """The model invocation jobs submitted for a docagent job (by their names: one a part), in name order."""
    name = batch_job_name_prefix(job_id)
    summaries = bedrock.list_model_invocation_jobs(nameContains=name).get("invocationJobSummaries", [])
    summaries = sorted(summaries, key=lambda job: str(job.get("jobName")))
    return [
        {
            "job_arn": job["jobArn"],
            "status": job["status"],
            "success_records": job.get("successRecordCount"),
            "error_records": job.get("errorRecordCount"),
        }
        for job in summaries
        if str(job.get("jobName", "")).startswith(f"{name}-")
    ]


# What the batch path adds per document (docs/batch.md): one WriteBatchRecord child (its start, its task and
# its end: about 3 state transitions; one Lambda request of about a second), one S3 PUT (the record) and two
# GETs (the batch job record and the output file, read by the document's review).
BATCH_TRANSITIONS_PER_DOCUMENT = 3
BATCH_SECONDS_PER_DOCUMENT = 1.0
BATCH_PUTS_PER_DOCUMENT = 1
BATCH_GETS_PER_DOCUMENT = 2


def inference_modes(report: dict[str, Any], function_memory_mb: int) -> dict[str, Any]:
    """A cost report's job priced on-demand and on batch inference, and whether batch pays off: the model at
    its batch share, plus what the batch path adds per document (its own steps and requests)."""
    documents = int(report["documents"])
    on_demand = float(report["total_usd"])
    model = float(report["by_service"]["bedrock"]["usd"])
    saved = model * (1 - spend.price_factor("batch"))
    added = documents * (
        BATCH_TRANSITIONS_PER_DOCUMENT * prices.STEP_FUNCTIONS_PER_TRANSITION
        + prices.LAMBDA_PER_REQUEST
        + BATCH_SECONDS_PER_DOCUMENT * function_memory_mb / 1024 * prices.LAMBDA_PER_GB_SECOND
        + BATCH_PUTS_PER_DOCUMENT * prices.S3_PER_WRITE_OR_LIST
        + BATCH_GETS_PER_DOCUMENT * prices.S3_PER_READ
    )
    possible = documents >= BATCH_MIN_RECORDS
    if not possible:
        verdict = (
            f"batch needs at least {BATCH_MIN_RECORDS:,} documents a job (Bedrock's minimum of records per "
            "batch job): this job runs on-demand"
        )
    elif saved > added:
        verdict = (
            f"batch pays off: it saves ${saved - added:,.2f} ({(saved - added) / on_demand:.0%}) when the "
            "job can wait hours (Bedrock's batch jobs run within 24 h)"
        )
    else:
        verdict = "on-demand is cheaper: the batch path's own steps cost more than the model saves"
    return {
        "on_demand_usd": round(on_demand, 4),
        "batch_usd": round(on_demand - saved + added, 4) if possible else None,
        "batch_model_saving_usd": round(saved, 4),
        "batch_added_usd": round(added, 4),
        "batch_pays_off": possible and saved > added,
        "verdict": verdict,
    }
