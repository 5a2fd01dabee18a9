"""Evidence in the same model call as the fields (docs/design.md, "Evidence and confidence"): the prompt's
paragraph asking for it, and the reply's ``_evidence`` object taken out before the fields are validated, so a
class's schema (and its validation) is the same with or without evidence.

The durable extract record keeps the quotes under ``EVIDENCE_KEY`` beside the fields; ``split`` takes them
back out.
"""

from __future__ import annotations

import json
from typing import Any, cast

from pydantic import JsonValue, ValidationError

from functions.checks.fields import FieldsInvalid, extracted_fields, parse_reply
from functions.definition.job_spec import ClassBundle
from functions.evidence.grounding_modes import quoted_paths
from functions.payloads.evidence import Quote

EVIDENCE_KEY = "_evidence"
# A value printed as it is (a field graded ``verbatim``, functions/evidence/grounding_modes.py) needs no
# quote: the grounding finds the value itself on the page the model names (functions/evidence/grounding.py
# ``locate_value``), so the model repeats no text for it (docs/cost.md, "Fewer output tokens": the demo's
# output tokens a document before and after). Only the fields ``needs_quote`` names (summarised, judged, an
# enum) are quoted: QUOTE_PROMPT lists them.
EVIDENCE_PROMPT = " ".join(
    [
        f'Beside the fields, give one more key, "{EVIDENCE_KEY}": an object whose keys are the paths',
        'of the values you gave (a field "total", a nested "party.name", an item of a list',
        '"line_items[0].amount") and whose values are the number of the page the value is printed on, 1 for',
        "a document without pages: the value is found on that page from what you gave, so do not copy it",
        "again. Give no evidence for a null value.",
    ]
)
QUOTE_PROMPT = (
    "For a value of these fields, which is judged, summarised or named rather than printed as it is, give "
    'instead {"quote": the exact text of the document you read it from, copied verbatim (a line or less), '
    '"page": its page number}: '
)


# A document whose page texts the pipeline does not read (functions/reading/page_texts.py: HTML, a
# spreadsheet, a scan read visually) cannot have a value looked for: every value is quoted, and the grounding
# holds the value to its quote (the paragraph before 2026-12-07).
QUOTE_ALL_PROMPT = " ".join(
    [
        f'Beside the fields, give one more key, "{EVIDENCE_KEY}": an object whose keys are the paths',
        'of the values you gave (a field "total", a nested "party.name", an item of a list',
        '"line_items[0].amount") and whose values are {"quote": the exact text of the document you',
        'read the value from, copied verbatim (a line or less), "page": the page number it is on, 1 for',
        "a document without pages}. Give no evidence for a null value.",
    ]
)


def evidence_prompt(schema: dict[str, Any] | None) -> str:
    """The paragraph asking for evidence: a page for each value, a quote for the fields that need one; a
    quote for every value when ``schema`` is None (a document without page texts the pipeline reads)."""
    if schema is None:
        return QUOTE_ALL_PROMPT
    quoted = list(quoted_paths(schema))
    return f"{EVIDENCE_PROMPT} {QUOTE_PROMPT}{json.dumps(quoted)}." if quoted else EVIDENCE_PROMPT


def with_evidence_prompt(prompt: str, schema: dict[str, Any] | None) -> str:
    return f"{prompt}\n\n{evidence_prompt(schema)}"


def asked_quotes(system: str) -> list[str] | None:
    """The field paths (schema_path form) an extraction's system prompt asks quotes for, as a model reads
    them from it (the local Bedrock answers so); None: a prompt that asks a quote for every value
    (QUOTE_ALL_PROMPT, or none)."""
    if EVIDENCE_PROMPT not in system:
        return None
    at = system.find(QUOTE_PROMPT)
    if at < 0:
        return []
    try:
        quoted, _ = json.JSONDecoder().raw_decode(system, at + len(QUOTE_PROMPT))
    except ValueError:
        return []
    return [str(path) for path in quoted] if isinstance(quoted, list) else []


def _quote_of(item: object) -> Quote | None:
    """A reply's evidence item as a Quote: a page number alone (a value printed as it is) or the quote's
    object; None when malformed."""
    if isinstance(item, int) and not isinstance(item, bool):
        return Quote(page=item) if item >= 1 else None
    try:
        return Quote.model_validate(item)
    except ValidationError:
        return None


def extracted_with_evidence(reply: str, class_bundle: ClassBundle) -> dict[str, JsonValue]:
    """The reply's fields (functions/checks/fields.py ``extracted_fields``) and, under EVIDENCE_KEY, its
    quotes that are well formed (a malformed quote is dropped: that field is then not grounded, never a failed
    call)."""
    data = parse_reply(reply)
    raw = data.pop(EVIDENCE_KEY, None)
    fields = extracted_fields(json.dumps(data), class_bundle)
    quotes: dict[str, JsonValue] = {}
    for path, item in (raw if isinstance(raw, dict) else {}).items():
        quote = _quote_of(item)
        if quote is not None:
            quotes[str(path)] = cast("JsonValue", quote.model_dump(exclude_none=True))
    return {**fields, EVIDENCE_KEY: quotes}


def split(fields: dict[str, JsonValue]) -> tuple[dict[str, JsonValue], dict[str, Quote]]:
    """A record's fields without the quotes, and the quotes by path."""
    rest = {name: value for name, value in fields.items() if name != EVIDENCE_KEY}
    raw: Any = fields.get(EVIDENCE_KEY)
    quotes = {}
    for path, item in (raw if isinstance(raw, dict) else {}).items():
        quote = _quote_of(item)
        if quote is not None:
            quotes[str(path)] = quote
    return rest, quotes


__all__ = [
    "EVIDENCE_KEY",
    "FieldsInvalid",
    "asked_quotes",
    "evidence_prompt",
    "extracted_with_evidence",
    "split",
    "with_evidence_prompt",
]
