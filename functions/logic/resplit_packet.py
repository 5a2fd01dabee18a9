"""A re-split packet processed again (docs/design.md, "Review", "Re-splitting a packet"): process_document's
``resplit`` action, invoked by ``docagent review split`` once the reviewer's SplitDecision is stored. The
packet runs as it did, its sections the decision's: the page classification answers from its durable
records, a kept section from its stored result, and only the sections the re-split added are extracted and
checked (their own durable steps); then the case again, and the packet's result is written again."""

from __future__ import annotations

from typing import TYPE_CHECKING

from functions.errors import InvalidJobRequest
from functions.inference import ModelProvider
from functions.logic.process_document import DocumentRun, load_definition, load_manifest
from functions.observability import logger
from functions.payloads.document import DocumentOutcome, ProcessDocumentEvent
from functions.reading import page_texts, pdf_pages
from functions.reading.sections import Sections
from functions.resplit import ResplitEvent, load_split
from functions.spans import span

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext


def resplit_packet(
    event: ResplitEvent, context: LambdaContext, *, provider: ModelProvider | None = None
) -> DocumentOutcome:
    entry = event.document
    logger.append_keys(job_id=event.job_id, document_id=entry.document_id)
    decision = load_split(event.job_id, entry.document_id)
    if decision is None:
        what = f"document {entry.document_id} of job {event.job_id}"
        raise InvalidJobRequest(f"{what} has no re-split decision")
    manifest = load_manifest(event.job_id)
    chosen = Sections(pages=decision.sections[-1].pages[1], sections=decision.sections)
    run_event = ProcessDocumentEvent(job_id=event.job_id, options=event.options, document=entry)
    with span("document", job_id=event.job_id, step="resplit", document_id=entry.document_id) as done:
        try:
            outcome = DocumentRun(run_event, context, manifest, load_definition(manifest.versions)).process(
                provider, chosen
            )
        finally:
            pdf_pages.release()
            page_texts.release()
        done.outcome = outcome.status
    return outcome
