"""Cheaper model first (docs/design.md, "Cheaper model first"): a definition naming ``models: [CHEAP,
STRONG]`` has its documents classified and extracted by the cheap model; the fields of that extraction the
grounding alone would send to review (each required field not grounded, each field under the class's
``review_below``), or the whole document when the cheap reply gave no fields, are extracted again by the
strong model in their own durable step (``escalate``: journalled, never repeated). The strong model's values
replace those fields only; the result records which model gave each field and what each model's call cost.

The checks run once, on the merged fields (a lookup is a durable step keyed by the document: it must see the
final value), so whether to escalate is decided by the grounding before the checks.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import cast

from pydantic import JsonValue

from functions import spend
from functions.checks.fields import FieldsInvalid, extracted_fields
from functions.definition.job_spec import ClassBundle, DefinitionBundle
from functions.errors import (
    MODEL_NOT_ALLOWED_FIX,
    DocumentNotLabelled,
    DocumentTooLong,
    DocumentUnreadable,
    ModelNotAllowed,
)
from functions.evidence.grounded_decision import Thresholds, with_confidence
from functions.evidence.grounding import field_of, ground_fields
from functions.inference.calls import CallSpec
from functions.inference.evidence import EVIDENCE_KEY, split
from functions.payloads.evidence import WHOLE_DOCUMENT, Cascade
from functions.payloads.model_calls import ExtractionRecord

# A cheap call that failed for the document itself (Bedrock refused it as too long for the context window or
# could not read it, or the local model has no label for it): the strong model is not asked (issue #54: the
# default's strong model, Claude Haiku 4.5, has a smaller context window, 200K, than Nova Lite's 300K).
DOCUMENT_REFUSALS = frozenset(
    {DocumentTooLong.__name__, DocumentUnreadable.__name__, DocumentNotLabelled.__name__}
)


def models_of(bundle: DefinitionBundle | None) -> tuple[str, str] | None:
    """(cheap, strong) model ids of a definition naming two, else None."""
    if bundle is None or bundle.definition.models is None:
        return None
    cheap, strong = bundle.definition.models
    return cheap, strong


def check_models_allowed(bundle: DefinitionBundle | None, allowed: list[str] | None) -> None:
    """ModelNotAllowed when the definition names a model (job.json ``models``) the deployment's functions may
    not call (MODELS_ALLOWED; None: not known, nothing checked): refused before any call."""
    models = models_of(bundle)
    if models is None or allowed is None:
        return
    refused = [model for model in models if model not in allowed]
    if refused:
        raise ModelNotAllowed(
            f"the definition's models name {', '.join(refused)}, which this deployment's functions may not "
            f"call (it allows {', '.join(allowed) or 'none'}): {MODEL_NOT_ALLOWED_FIX} (or name an allowed "
            "model in job.json's models), then start the job again"
        )


def first_model(bundle: DefinitionBundle | None, pinned: str) -> str:
    """The model that classifies and extracts first: the cheap one, else the job's pinned model."""
    models = models_of(bundle)
    return pinned if models is None else models[0]


def escalate_spec(extract: CallSpec) -> CallSpec:
    """The strong model's call: the extraction's prompts and reading, as the durable step ``escalate``."""
    return dataclasses.replace(extract, purpose="escalate")


def to_escalate(
    first: ExtractionRecord, class_bundle: ClassBundle, pages: list[str] | None
) -> dict[str, str]:
    """The top-level fields the strong model must give, with why: those the grounding of the first
    extraction sends to review; the whole document (WHOLE_DOCUMENT) when it gave no fields; none when the
    document itself was refused (DOCUMENT_REFUSALS)."""
    if first.error in DOCUMENT_REFUSALS:  # about the document, not the model: the strong one would refuse too
        return {}
    if not first.ok or first.fields is None:
        return {WHOLE_DOCUMENT: f"the cheap model gave no fields ({first.error}: {first.reason})"}
    fields, quotes = split(first.fields)
    schema = cast("dict[str, object]", class_bundle.schema_)
    evidence = with_confidence(class_bundle, ground_fields(fields, quotes, pages, dict(schema)), set())
    escalated: dict[str, str] = {}
    for path, reason in Thresholds.of(class_bundle).paths(evidence).items():
        escalated.setdefault(field_of(path), reason)
    return escalated


def merged(first: ExtractionRecord, strong: ExtractionRecord, escalated: list[str]) -> ExtractionRecord:
    """The first extraction with the escalated fields (and their quotes) the strong model's: all of the
    strong one's for the whole document; the first one as it is when the strong call gave no fields."""
    if not strong.ok or strong.fields is None:
        return first
    if WHOLE_DOCUMENT in escalated or first.fields is None:
        return strong.model_copy(update={"call_id": first.call_id})
    fields, quotes = split(first.fields)
    strong_fields, strong_quotes = split(strong.fields)
    for name in escalated:
        if name in strong_fields:
            fields[name] = strong_fields[name]
        else:  # the strong model gave none: the field is absent, as in its reply
            fields.pop(name, None)
        for path in [path for path in quotes if field_of(path) == name]:
            del quotes[path]
        quotes.update({path: quote for path, quote in strong_quotes.items() if field_of(path) == name})
    evidence: dict[str, JsonValue] = {
        path: cast("JsonValue", quote.model_dump(exclude_none=True)) for path, quote in quotes.items()
    }
    return first.model_copy(update={"fields": {**fields, EVIDENCE_KEY: evidence}})


def schema_valid(record: ExtractionRecord, class_bundle: ClassBundle) -> bool:
    """Whether a record's fields (normalised already: normalising again changes nothing) match the class's
    schema as a whole."""
    if record.fields is None:
        return True
    try:
        extracted_fields(json.dumps(split(record.fields)[0]), class_bundle)
    except FieldsInvalid:
        return False
    return True


def _cost(call: ExtractionRecord | None) -> float | None:
    if call is None:
        return 0.0
    return spend.records_cost_usd([call])


def cascaded(
    models: tuple[str, str],
    first: ExtractionRecord,
    class_bundle: ClassBundle,
    pages: Callable[[], list[str] | None],
    call_strong: Callable[[], ExtractionRecord],
) -> tuple[ExtractionRecord, Cascade]:
    """The extraction the document goes on with and its Cascade: ``first`` (the cheap model's) with the
    fields it must not be trusted with given by ``call_strong`` (the durable ``escalate`` step), called only
    when there are any."""
    cheap, strong_model = models
    escalate = to_escalate(first, class_bundle, pages())
    strong = call_strong() if escalate else None
    result = first if strong is None else merged(first, strong, list(escalate))
    if strong is not None and strong.ok and not schema_valid(result, class_bundle):
        # two valid replies mixed into one the class's schema refuses (a rule across fields): the strong
        # model's reply alone
        escalate[WHOLE_DOCUMENT] = "the fields of both models together do not match the class's schema"
        result = merged(first, strong, [WHOLE_DOCUMENT])
    escalated = [WHOLE_DOCUMENT] if WHOLE_DOCUMENT in escalate else list(escalate)
    gave_all = strong is not None and strong.ok and (WHOLE_DOCUMENT in escalated or first.fields is None)
    by_strong = set(escalated) if strong is not None and strong.ok else set()
    names = [name for name in (result.fields or {}) if name != EVIDENCE_KEY]
    return result, Cascade(
        models=[cheap, strong_model],
        escalated=escalated,
        reasons=list(escalate.values()),
        escalate_call_id=None if strong is None else strong.call_id,
        field_models={name: strong_model if gave_all or name in by_strong else cheap for name in names},
        cost_usd={cheap: _cost(first), strong_model: _cost(strong)},
    )
