"""process_batch: a Distributed Map child's batch of documents (``documents_per_child`` > 1, docs/scale.md
"Batching"), each through process_document exactly as in a child of its own.

Durability stays per document: each document's durable steps and its result are keyed by its own ids, so a
retried batch returns the stored results of the documents already finished (no model call, no step body
runs again) and carries on from the first unfinished one. A per-document rejection is that document's result.
Anything else a document raises (ModelThrottled, ModelUnavailable, a refusal, a crash or a timeout) fails the
whole invocation at once, and the batch's Retry (the same as a single document's) runs it again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from functions.inference import ModelProvider
from functions.logic.process_document import process_document
from functions.payloads.document import BatchOutcome, DocumentOutcome, ProcessBatchEvent

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

# A state's output is at most 256 KiB (docs/semantics.md D6). Each outcome carries its report row
# (~0.5-1.5 KB);
# rows with very long rejection reasons could push a large batch over, so past this budget the largest rows
# are left out: build_report reads those documents' stored results instead (docs/design.md, "Reports").
OUTPUT_BUDGET_BYTES = 200 * 1024


def process_batch(
    event: ProcessBatchEvent, context: LambdaContext, *, provider: ModelProvider | None = None
) -> BatchOutcome:
    outcomes = [
        process_document(document_event, context, provider=provider)
        for document_event in event.document_events()
    ]
    return BatchOutcome(outcomes=within_budget(outcomes))


def within_budget(
    outcomes: list[DocumentOutcome], budget: int = OUTPUT_BUDGET_BYTES
) -> list[DocumentOutcome]:
    """The outcomes, with the largest report rows dropped until the batch's output fits ``budget``."""
    sizes = [len(outcome.model_dump_json()) for outcome in outcomes]
    total = sum(sizes)
    kept = list(outcomes)
    for index in sorted(range(len(kept)), key=lambda i: sizes[i], reverse=True):
        if total <= budget:
            break
        trimmed = kept[index].model_copy(update={"row": None})
        total -= sizes[index] - len(trimmed.model_dump_json())
        kept[index] = trimmed
    return kept
