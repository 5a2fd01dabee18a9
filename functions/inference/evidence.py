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

from functions.definition import ClassBundle
from functions.fields import FieldsInvalid, extracted_fields, parse_reply
from functions.payloads.evidence import Quote

EVIDENCE_KEY = "_evidence"
EVIDENCE_PROMPT = " ".join(
    [
        f'Beside the fields, give one more key, "{EVIDENCE_KEY}": an object whose keys are the paths',
        'of the values you gave (a field "total", a nested "party.name", an item of a list',
        '"line_items[0].amount") and whose values are {"quote": the exact text of the document you',
        'read the value from, copied verbatim (a line or less), "page": the page number it is on, 1 for',
        "a document without pages}. Give no evidence for a null value.",
    ]
)


def with_evidence_prompt(prompt: str) -> str:
    return f"{prompt}\n\n{EVIDENCE_PROMPT}"


def extracted_with_evidence(reply: str, class_bundle: ClassBundle) -> dict[str, JsonValue]:
    """The reply's fields (functions/fields.py ``extracted_fields``) and, under EVIDENCE_KEY, its quotes that
    are well formed (a malformed quote is dropped: that field is then not grounded, never a failed call)."""
    data = parse_reply(reply)
    raw = data.pop(EVIDENCE_KEY, None)
    fields = extracted_fields(json.dumps(data), class_bundle)
    quotes: dict[str, JsonValue] = {}
    for path, item in (raw if isinstance(raw, dict) else {}).items():
        try:
            quotes[str(path)] = cast("JsonValue", Quote.model_validate(item).model_dump(exclude_none=True))
        except ValidationError:
            continue
    return {**fields, EVIDENCE_KEY: quotes}


def split(fields: dict[str, JsonValue]) -> tuple[dict[str, JsonValue], dict[str, Quote]]:
    """A record's fields without the quotes, and the quotes by path."""
    rest = {name: value for name, value in fields.items() if name != EVIDENCE_KEY}
    raw: Any = fields.get(EVIDENCE_KEY)
    quotes = {}
    for path, item in (raw if isinstance(raw, dict) else {}).items():
        try:
            quotes[str(path)] = Quote.model_validate(item)
        except ValidationError:
            continue
    return rest, quotes


__all__ = ["EVIDENCE_KEY", "FieldsInvalid", "extracted_with_evidence", "split", "with_evidence_prompt"]
