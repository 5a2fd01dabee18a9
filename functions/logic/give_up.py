"""RecordDocumentFailure (docs/design.md, "Giving a document up"): ProcessDocument's Catch hands a document
here once its Retry ran out on a failure that is not the job's (the model unavailable on every attempt the
Retry allows, a long document still in progress after every continuation it allows). The document gets its
result, rejected with that error and the reason, so the Map child succeeds and the other documents and the
job go on; a document whose result is already stored keeps it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from functions import s3_json
from functions.errors import DocumentInProgress, ModelUnavailable
from functions.logic.process_document import DocumentRun, load_definition, load_manifest, outcome_of
from functions.observability import logger
from functions.payloads.document import BatchOutcome, DocumentOutcome, GiveUpEvent, ProcessDocumentEvent

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

# What each failure a document is given up for says about it, before its last message.
_SAID = {
    ModelUnavailable.__name__: "the model did not answer on any attempt ProcessDocument's Retry allows",
    DocumentInProgress.__name__: "the document was still unfinished after every continuation "
    "ProcessDocument's Retry allows (a lower max_pages refuses it at once; a longer function timeout reads "
    "more windows an invocation)",
}


def give_up(event: GiveUpEvent, context: LambdaContext) -> DocumentOutcome | BatchOutcome:
    outcomes = [_give_up_one(one, event, context) for one in event.document_events()]
    return outcomes[0] if event.document is not None else BatchOutcome(outcomes=outcomes)


def _give_up_one(
    event: ProcessDocumentEvent, failure: GiveUpEvent, context: LambdaContext
) -> DocumentOutcome:
    manifest = load_manifest(event.job_id)
    bundle = load_definition(manifest.versions)
    existing = s3_json.get_result(event.job_id, event.document.document_id)
    if existing is not None:  # a batch's documents finished before one failed keep their results
        return outcome_of(existing, bundle)
    error = failure.failure.Error
    said = _SAID.get(error, f"{error} on every attempt ProcessDocument's Retry allows")
    logger.warning("document given up", extra={"error": error, "document_id": event.document.document_id})
    run = DocumentRun(event, context, manifest, bundle)
    run.calls = [
        call.to_extraction() for call in s3_json.list_model_calls(event.job_id, event.document.document_id)
    ]
    return run.store(status="rejected", error=error, reason=f"{said}: {failure.failure.message()}")
