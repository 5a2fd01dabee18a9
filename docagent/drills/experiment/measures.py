"""What one run measures, and the per-strategy, per-kill-point rows (min and median over the repeats)."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

SCORED_FIELDS = ("customer_id", "invoice_number", "invoice_date", "amount", "currency", "category")


class Run(BaseModel):
    """One job under one strategy: crash-free (``kill_at`` None) or killed at ``kill_at`` and recovered."""

    model_config = ConfigDict(extra="forbid")

    strategy: str
    documents: int
    kill_at: int | None = None
    job_seconds: float = Field(
        description="crash-free: the job; killed: from its start to the end of recovery"
    )
    recovery_first_progress_seconds: float | None = None
    recovery_seconds: float | None = None
    recovery: str = ""
    model_calls: int
    repeated_model_calls: int
    repeated_documents: int
    tickets: int
    results: int
    correct: bool = Field(description="every document's result equals the crash-free run's")
    storage_bytes: int
    checkpoint_records: int


def repeats_of(called: Iterable[str]) -> tuple[int, int, int]:
    """(model calls, repeated calls, documents called more than once) from one id per model call."""
    counts = Counter(called)
    total = sum(counts.values())
    return total, total - len(counts), sum(1 for count in counts.values() if count > 1)


def comparable(results: Iterable[dict[str, Any]]) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Each document's status and scored facts: what must not change whatever the strategy and the crash."""
    table: dict[str, tuple[str, tuple[str, ...]]] = {}
    for result in results:
        facts = result.get("facts") or {}
        table[str(result["document_id"])] = (
            str(result["status"]),
            tuple(str(facts.get(name)) for name in SCORED_FIELDS),
        )
    return table


MEASURES = (
    "repeated_model_calls",
    "repeated_documents",
    "duplicate_tickets",
    "recovery_first_progress_seconds",
    "recovery_seconds",
    "overhead_ratio",
    "crash_cost_ratio",
    "job_seconds",
    "storage_bytes_per_document",
    "checkpoint_records_per_document",
)


def _median(values: Sequence[float]) -> float:
    return round(float(statistics.median(values)), 4)


def strategy_rows(runs: Sequence[Run], baseline_seconds: float) -> list[dict[str, Any]]:
    """One row per (strategy, kill point): the issue's keys (medians) plus ``min`` and ``median`` of each
    measure. ``overhead_ratio`` compares the strategy's crash-free job time with the crash-free "none";
    ``crash_cost_ratio`` compares the killed job (start to end of recovery) with the strategy's own crash-free
    one; storage is measured on the crash-free runs."""
    clean: dict[str, list[Run]] = {}
    crashed: dict[tuple[str, int], list[Run]] = {}
    for run in runs:
        if run.kill_at is None:
            clean.setdefault(run.strategy, []).append(run)
        else:
            crashed.setdefault((run.strategy, run.kill_at), []).append(run)
    rows = []
    for (name, kill_at), group in crashed.items():
        own = clean.get(name, [])
        own_seconds = statistics.median(run.job_seconds for run in own) if own else 0.0
        values: dict[str, list[float]] = {measure: [] for measure in MEASURES}
        for run in group:
            values["repeated_model_calls"].append(run.repeated_model_calls)
            values["repeated_documents"].append(run.repeated_documents)
            values["duplicate_tickets"].append(max(0, run.tickets - 1))
            values["recovery_first_progress_seconds"].append(run.recovery_first_progress_seconds or 0.0)
            values["recovery_seconds"].append(run.recovery_seconds or 0.0)
            values["crash_cost_ratio"].append(run.job_seconds / own_seconds if own_seconds else 0.0)
            values["job_seconds"].append(run.job_seconds)
        for run in own:
            values["overhead_ratio"].append(run.job_seconds / baseline_seconds if baseline_seconds else 0.0)
            values["storage_bytes_per_document"].append(run.storage_bytes / run.documents)
            values["checkpoint_records_per_document"].append(run.checkpoint_records / run.documents)
        minimum = {measure: round(min(found), 4) for measure, found in values.items() if found}
        median = {measure: _median(found) for measure, found in values.items() if found}
        rows.append(
            {
                "name": name,
                "kill_at": kill_at,
                "repeated_model_calls": median["repeated_model_calls"],
                "repeated_documents": median["repeated_documents"],
                "duplicate_tickets": median["duplicate_tickets"],
                "complete": all(run.results == run.documents and run.correct for run in group),
                "recovery_seconds": median["recovery_seconds"],
                "overhead_ratio": median.get("overhead_ratio"),
                "storage_bytes_per_document": median.get("storage_bytes_per_document"),
                "recovery": "; ".join(sorted({run.recovery for run in group})),
                "repeats": len(group),
                "crash_free_seconds": round(own_seconds, 4),
                "min": minimum,
                "median": median,
            }
        )
    return rows


def growth_rows(runs: Sequence[Run]) -> list[dict[str, Any]]:
    """Checkpoint storage per document against the job's size, from crash-free runs."""
    sizes: dict[tuple[str, int], list[Run]] = {}
    for run in runs:
        if run.kill_at is None:
            sizes.setdefault((run.strategy, run.documents), []).append(run)
    return [
        {
            "name": name,
            "documents": documents,
            "storage_bytes": int(statistics.median(run.storage_bytes for run in group)),
            "storage_bytes_per_document": _median([run.storage_bytes / documents for run in group]),
            "job_seconds": _median([run.job_seconds for run in group]),
        }
        for (name, documents), group in sorted(sizes.items())
    ]
