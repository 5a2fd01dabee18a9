"""The budget around one model call (docs/design.md, "Budget"), in the one place functions/inference/calls.py
calls: reserve before the call, settle after it (what it cost, or nothing for a call that did not finish), and
settle a journalled call that is reused (its process died between the journal and the settlement)."""

from __future__ import annotations

from functions import budget, spend
from functions.observability import MetricUnit, metrics
from functions.payloads.document import ProcessDocumentEvent
from functions.payloads.model_calls import ModelCallRecord
from functions.reading.documents import DocumentInput
from functions.settings import get_settings


def _name(event: ProcessDocumentEvent, purpose: str) -> str:
    return budget.reservation_name(event.document.document_id, purpose)


def reserve_call(
    event: ProcessDocumentEvent, purpose: str, model_id: str, document: DocumentInput, prompt_chars: int
) -> None:
    """Reserve the call's estimate against the job's budget, or raise BudgetExceeded (no budget: nothing)."""
    if event.options.max_cost_usd is None:
        return
    amount = budget.estimate_reservation_nusd(
        model_id, prompt_chars + document.input_chars, get_settings().model_max_tokens
    )
    budget.reserve(event.job_id, _name(event, purpose), amount, event.options.max_cost_usd)


def release_call(event: ProcessDocumentEvent, purpose: str) -> None:
    """A call that did not finish cost nothing: its reservation is given back."""
    if event.options.max_cost_usd is not None:
        budget.settle(event.job_id, _name(event, purpose), 0)


def settle_call(event: ProcessDocumentEvent, call: ModelCallRecord, *, replayed: bool = False) -> None:
    """A finished (journalled) call's actual cost: settled against the budget once, and the ``ModelCostUSD``
    metric (not again for a replayed call, counted when it finished, unless it was never settled)."""
    try:
        cost = spend.record_cost_nano(call)
    except LookupError:
        if event.options.max_cost_usd is not None:
            raise  # reserve_call priced this model already: not reached
        return  # a model with no dated price: its cost is unknown, so no metric
    settled = event.options.max_cost_usd is not None and budget.settle(
        event.job_id, _name(event, call.journal_name), cost
    )
    if not replayed or settled:
        metrics.add_metric(name="ModelCostUSD", unit=MetricUnit.NoUnit, value=spend.to_usd(cost))
