"""The grounding check (docs/design.md, "Evidence and confidence"): deterministic, after the extraction, in
the pipeline and not the model. For each field the model quoted: is the quote in the document (whitespace
runs and case normalised; else fuzzy, by rapidfuzz, at ``FUZZY_THRESHOLD``), on the page it named, and does
the value agree with its quote under the class's schema (dates, amounts and numbers read from the quote as
the schema's ``x-normalise`` reads them; codes by their digits; text by token overlap), for a field graded
``verbatim`` (functions/evidence/grounding_modes.py: a ``support`` or ``none`` field's value is not compared)?
Each field is grounded, approximate, not found or unverified (no text layer), with its span in the page's text
and a confidence.

Pure functions of the page texts, the fields, the quotes and the schema: the same inputs give the same result.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from pydantic import JsonValue

from functions.evidence.grounding_modes import GROUNDING_KEYWORD, grounding_mode, name_of
from functions.evidence.quote_matching import Located, locate, value_agrees
from functions.evidence.value_location import locate_value
from functions.payloads.evidence import FieldEvidence, Grounding, GroundingMode, Quote
from functions.reading.page_texts import PageTexts

# The confidence of a field (documented in docs/evaluation.md, "Calibration"; eval measures how often each
# band is right): by grounding, times a factor when the value disagrees with its quote, averaged with the
# model's own score when the reply gives one, halved when a check on the field failed.
BASE_CONFIDENCE: dict[Grounding, float] = {
    "grounded": 0.97,
    "approximate": 0.8,
    "unverified": 0.6,
    "not_found": 0.1,
}
DISAGREES_FACTOR = 0.25
FAILED_CHECK_FACTOR = 0.5


# ------------------------------------------------------------------------------------------ the check


def confidence(grounding: Grounding, agrees: bool | None, model_score: float | None) -> float:
    score = BASE_CONFIDENCE[grounding] * (DISAGREES_FACTOR if agrees is False else 1.0)
    if model_score is not None:
        score = (score + model_score) / 2
    return round(score, 4)


def ground(
    value: JsonValue,
    quote: Quote | None,
    pages: list[str] | None,
    schema: dict[str, Any],
    mode: GroundingMode | None = None,
    *,
    name: str = "",
) -> FieldEvidence:
    """One field's grounding: ``pages`` are the document's page texts (None: no text layer read); ``mode``
    how the value is held to its quote (None: the schema's, functions/evidence/grounding_modes.py); ``name``
    the field's own name (a value without a quote is looked for on the lines naming it: ``locate_value``)."""
    mode = mode or grounding_mode(schema)
    if (quote is None or quote.quote is None) and mode == "verbatim":
        return located_by_value(value, None if quote is None else quote.page, pages, schema, name)
    if quote is None or quote.quote is None:
        return FieldEvidence(page=None if quote is None else quote.page, grounding="not_found",
                             confidence=confidence("not_found", None, None),
                             note="the model gave no quote", mode=mode)  # fmt: skip
    agrees = value_agrees(value, quote.quote, schema) if mode == "verbatim" else None
    if pages is None:
        grounding: Grounding = "unverified"
        return FieldEvidence(quote=quote.quote, page=quote.page, grounding=grounding, value_agrees=agrees,
                             confidence=confidence(grounding, agrees, quote.confidence),
                             note="the page has no text layer the pipeline reads", mode=mode)  # fmt: skip
    found = locate(quote.quote, pages, quote.page)
    if found is None:
        return FieldEvidence(quote=quote.quote, page=quote.page, grounding="not_found", value_agrees=agrees,
                             confidence=confidence("not_found", agrees, quote.confidence),
                             note=f"the quote {quote.quote!r} is not in the document", mode=mode)  # fmt: skip
    agrees = _read_from_page(agrees, value, found, pages, schema)
    notes = []
    if found.page != quote.page:
        notes.append(f"the quote is on page {found.page}, not page {quote.page}")
    if not found.exact:
        notes.append(f"the quote matches the page only approximately ({found.score:.0f} of 100)")
    grounding = "grounded" if not notes else "approximate"
    if agrees is False:
        notes.append(f"the value {value!r} does not agree with its quote {quote.quote!r}")
    score = quote.confidence
    return _found(
        found, quote.quote, grounding, agrees=agrees, score=score, notes=notes, mode=mode, pages=pages
    )


def _found(
    found: Located,
    quote: str,
    grounding: Grounding,
    *,
    agrees: bool | None,
    score: float | None,
    notes: list[str],
    mode: GroundingMode,
    pages: list[str],
) -> FieldEvidence:
    """A field's evidence found in the page texts: ``quote`` at ``found`` (boxed where ``pages`` can)."""
    return FieldEvidence(
        quote=quote,
        page=found.page,
        start=found.start,
        end=found.end,
        grounding=grounding,
        match_score=found.score,
        value_agrees=agrees,
        confidence=confidence(grounding, agrees, score),
        note="; ".join(notes) or None,
        mode=mode,
        box=pages.box(found.page, found.start, found.end) if isinstance(pages, PageTexts) else None,
    )


def _read_from_page(
    agrees: bool | None, value: JsonValue, found: Located, pages: list[str], schema: dict[str, Any]
) -> bool | None:
    """A date or an amount whose quote was found only fuzzily on an OCR page must be read from the page's
    span as well: the tolerance for OCR noise never lets a changed digit through."""
    numeric = schema.get("x-normalise") in {"date", "amount"} or schema.get("format") == "date"
    if agrees is not True or found.exact or not numeric:
        return agrees
    if not (isinstance(pages, PageTexts) and pages.is_ocr(found.page)):
        return agrees
    return value_agrees(value, pages[found.page - 1][found.start : found.end], schema)


# ------------------------------------------------------------------------------ a value without a quote


def located_by_value(
    value: JsonValue, page: int | None, pages: list[str] | None, schema: dict[str, Any], name: str = ""
) -> FieldEvidence:
    """A ``verbatim`` field the model gave no quote for (its page only: functions/inference/evidence.py):
    the value itself looked for on that page, then on the others (``locate_value``); the text found is the
    field's quote. A value the document does not print (a misread date) is not found."""
    named = page or 1
    if pages is None:
        return FieldEvidence(
            page=page,
            grounding="unverified",
            confidence=confidence("unverified", None, None),
            note="the page has no text layer the pipeline reads: the value was not looked for",
            mode="verbatim",
        )
    found = locate_value(value, pages, named, schema, name)
    if found is None:
        return FieldEvidence(page=page, grounding="not_found", value_agrees=False,
                             confidence=confidence("not_found", False, None),
                             note=f"the value {value!r} is not in the document", mode="verbatim")  # fmt: skip
    moved = page is not None and found.page != page
    return _found(
        found,
        pages[found.page - 1][found.start : found.end],
        "approximate" if moved else "grounded",
        agrees=True,
        score=None,
        notes=[f"the value is on page {found.page}, not page {page}"] if moved else [],
        mode="verbatim",
        pages=pages,
    )


def is_grounded(evidence: FieldEvidence) -> bool:
    """Grounded enough to accept without a person: found (exactly or approximately) and the value agrees. A
    field of a document without a text layer (unverified) counts when its value agrees with its quote: only
    its confidence (``review_below``) can send it to a person."""
    return evidence.grounding != "not_found" and evidence.value_agrees is not False


def leaves(
    value: JsonValue, schema: dict[str, Any], path: str = ""
) -> Iterator[tuple[str, JsonValue, dict[str, Any]]]:
    """Every non-null scalar of the fields by its path (``party.name``, ``line_items[0].amount``) with
    its schema (an object's or a list's ``x-grounding`` passed down to its parts that do not say theirs)."""
    if isinstance(value, dict):
        properties = schema.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        for name, item in value.items():
            sub = properties.get(name)
            part = _inherited(sub if isinstance(sub, dict) else {}, schema)
            yield from leaves(item, part, f"{path}.{name}".lstrip("."))
    elif isinstance(value, list):
        items = schema.get("items")
        for index, item in enumerate(value):
            part = _inherited(items if isinstance(items, dict) else {}, schema)
            yield from leaves(item, part, f"{path}[{index}]")
    elif value is not None:
        yield path, value, schema


def _inherited(sub: dict[str, Any], parent: dict[str, Any]) -> dict[str, Any]:
    if GROUNDING_KEYWORD in parent and GROUNDING_KEYWORD not in sub:
        return {**sub, GROUNDING_KEYWORD: parent[GROUNDING_KEYWORD]}
    return sub


def ground_fields(
    fields: dict[str, JsonValue],
    quotes: dict[str, Quote],
    pages: list[str] | None,
    schema: dict[str, Any],
) -> dict[str, FieldEvidence]:
    """Every field's evidence, by path, each by its mode (functions/evidence/grounding_modes.py). What was
    grounded on a document's ``PageTexts`` is grounded once (``PageTexts.grounded``, by the fields, the quotes
    and the schema: the cascade's ``to_escalate`` and the result's ``evidence_of`` ground the same extraction
    when the cascade escalated nothing)."""
    if not isinstance(pages, PageTexts):
        return _grounded_fields(fields, quotes, pages, schema)
    # repr tells apart what equality would not (True and 1, 1 and 1.0, a key's order): the same text, the same
    # inputs (the str, numbers, None, lists and dicts of a JSON reply, each Quote's fields)
    key = repr((fields, {path: quote.model_dump() for path, quote in quotes.items()}, schema))
    if key not in pages.grounded:
        pages.grounded[key] = _grounded_fields(fields, quotes, pages, schema)
    return dict(pages.grounded[key])


def _grounded_fields(
    fields: dict[str, JsonValue],
    quotes: dict[str, Quote],
    pages: list[str] | None,
    schema: dict[str, Any],
) -> dict[str, FieldEvidence]:
    return {
        path: ground(
            value, quotes.get(path), pages, sub, grounding_mode(sub, name_of(path)), name=name_of(path)
        )
        for path, value, sub in leaves(fields, schema)
    }


def field_of(path: str) -> str:
    """The top-level field a path belongs to (``line_items[0].amount`` -> ``line_items``)."""
    return re.split(r"[.\[]", path, maxsplit=1)[0]


def review_reasons(
    evidence: dict[str, FieldEvidence],
    required: list[str],
    review_below: dict[str, float],
    default_below: float | None,
) -> list[str]:
    """Why a person must see the document: each required field not grounded (always), and each field whose
    confidence is under its ``review_below`` (by top-level field, else the class's); never a field of mode
    ``none``."""
    return list(review_paths(evidence, required, review_below, default_below).values())


def review_paths(
    evidence: dict[str, FieldEvidence],
    required: list[str],
    review_below: dict[str, float],
    default_below: float | None,
) -> dict[str, str]:
    """review_reasons by path: each path that sends the document to review, with its reason (a field of mode
    ``none`` never does)."""
    reasons = {}
    for path, found in evidence.items():
        if found.mode == "none":
            continue
        top = field_of(path)
        if top in required and not is_grounded(found):
            reasons[path] = f"{path} is not grounded in the document: {found.note or found.grounding}"
            continue
        below = review_below.get(path, review_below.get(top, default_below))
        if below is not None and found.confidence < below:
            reasons[path] = f"{path} has confidence {found.confidence:.2f}, below {below:.2f}"
    return reasons


def after_checks(evidence: dict[str, FieldEvidence], failed_fields: set[str]) -> dict[str, FieldEvidence]:
    """The evidence with each field a failed check names (or a path under it) at FAILED_CHECK_FACTOR of its
    confidence."""
    return {
        path: found.model_copy(update={"confidence": round(found.confidence * FAILED_CHECK_FACTOR, 4)})
        if path in failed_fields or field_of(path) in failed_fields
        else found
        for path, found in evidence.items()
    }
