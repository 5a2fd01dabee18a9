"""functions/evidence/grounding_modes.py: each field's grounding mode (``x-grounding``, else its parent's,
else the default by type), and how functions/evidence/grounding.py grades a ``support``, ``verbatim`` and
``none`` field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from functions.checks.outcomes import Decision
from functions.definition.job_spec import ClassBundle, ClassSpec
from functions.evidence.grounded_decision import grounded_decision
from functions.evidence.grounding import ground_fields, is_grounded
from functions.evidence.grounding_modes import defaulted, grounding_mode
from functions.payloads.evidence import Quote

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TEXT = [
    "Reference for Ada Lovelace, 3 May 2026.\nShe rebuilt our billing system in four months.\n"
    "I recommend her without reservation.\n"
]


@pytest.mark.parametrize(
    ("schema", "name", "mode"),
    [
        ({"type": "boolean"}, "recommends", "support"),
        ({"type": "integer", "description": "years of experience, computed from dates"}, "years", "support"),
        ({"type": ["number", "null"], "description": "the items counted in the list"}, "items", "support"),
        ({"type": "integer", "description": "how many units or hours"}, "quantity", "verbatim"),
        ({"type": "number", "description": "the estimate's total"}, "estimate_total", "verbatim"),
        ({"type": "integer", "enum": [1, 2], "description": "computed"}, "tier", "verbatim"),
        ({"type": ["boolean", "null"]}, "recommends", "support"),
        ({"type": "string", "maxLength": 300}, "description", "support"),
        ({"type": "string"}, "summary", "support"),
        ({"type": "string", "description": "why the referee hesitates"}, "concerns", "verbatim"),
        ({"type": "string", "description": "the reason for any reservation"}, "concerns", "support"),
        ({"type": "string", "description": "explain the decision"}, "note", "support"),
        ({"type": "string"}, "vendor_name", "verbatim"),
        ({"type": "string", "maxLength": 200}, "name", "verbatim"),
        ({"type": ["string", "null"], "maxLength": 254}, "email", "verbatim"),
        ({"type": "string", "maxLength": 400, "pattern": "^[A-Z ]+$"}, "code", "verbatim"),
        ({"type": "string", "maxLength": 400, "format": "date"}, "summary_date", "verbatim"),
        ({"type": "string", "enum": ["a", "b"]}, "summary_kind", "verbatim"),
        ({"type": "string", "x-normalise": "amount"}, "summary_total", "verbatim"),
        ({"type": "integer"}, "years_known", "verbatim"),
        ({"type": "number", "description": "a summary figure"}, "score", "verbatim"),
        ({"type": "string", "maxLength": 300, "x-grounding": "verbatim"}, "description", "verbatim"),
        ({"type": "integer", "x-grounding": "support"}, "years", "support"),
        ({"type": "string", "x-grounding": "none"}, "summary", "none"),
    ],
)
def test_a_fields_mode_is_its_x_grounding_else_its_default_by_type(
    schema: dict[str, Any], name: str, mode: str
) -> None:
    assert grounding_mode(schema, name) == mode


def test_the_examples_keep_every_field_verbatim_but_the_claims_free_text_description() -> None:
    found = {}
    for path in sorted(EXAMPLES.glob("*/classes/*.schema.json")):
        found[path.name] = list(defaulted(json.loads(path.read_text())))
    assert found == {
        "claim-form.schema.json": [("description", "support", "free text")],
        "repair-estimate.schema.json": [],
        "invoice.schema.json": [],  # its summary says "x-grounding": "none" itself
    }


def test_a_list_or_objects_x_grounding_is_its_parts_and_defaulted_names_them_by_path() -> None:
    schema = {
        "type": "object",
        "properties": {
            "notes": {"type": "array", "x-grounding": "none", "items": {"type": "string"}},
            "items": {
                "type": "array",
                "items": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
            },
        },
    }
    evidence = ground_fields({"notes": ["x"], "items": [{"ok": True}]}, {}, TEXT, schema)
    assert (evidence["notes[0]"].mode, evidence["items[0].ok"].mode) == ("none", "support")
    assert list(defaulted(schema)) == [("items[].ok", "support", "a yes/no judgement")]


SCHEMA = {
    "type": "object",
    "required": ["candidate", "letter_date", "summary", "recommends"],
    "properties": {
        "candidate": {"type": "string", "maxLength": 100},
        "letter_date": {"type": "string", "format": "date", "x-normalise": "date"},
        "summary": {"type": "string", "description": "a one-sentence summary of the letter"},
        "recommends": {"type": "boolean"},
        "remark": {"type": "string", "x-grounding": "none"},
    },
}
QUOTES = {
    "candidate": Quote(quote="Reference for Ada Lovelace"),
    "letter_date": Quote(quote="Ada Lovelace, 3 May 2026"),
    "summary": Quote(quote="She rebuilt our billing system in four months."),
    "recommends": Quote(quote="I recommend her without reservation."),
    "remark": Quote(quote="a remark the letter does not hold"),
}


def _decided(fields: dict[str, Any], quotes: dict[str, Quote] = QUOTES, below: object = None) -> Decision:
    spec = ClassSpec.model_validate({"description": "a reference", "schema": "r.json", "review_below": below})
    evidence = ground_fields(fields, quotes, TEXT, SCHEMA)
    return grounded_decision(Decision("extracted"), ClassBundle(spec=spec, schema=SCHEMA), evidence)


FIELDS = {
    "candidate": "Ada Lovelace",
    "letter_date": "2026-05-03",
    "summary": "A strong engineer who modernised billing quickly.",
    "recommends": True,
    "remark": "keen",
}


def test_a_support_fields_found_quote_grounds_it_whatever_its_value_says() -> None:
    evidence = ground_fields(FIELDS, QUOTES, TEXT, SCHEMA)
    summary = evidence["summary"]
    assert (summary.mode, summary.grounding, summary.value_agrees) == ("support", "grounded", None)
    assert is_grounded(summary) and summary.confidence == 0.97  # like grounded: the value is not compared
    assert (evidence["recommends"].mode, evidence["recommends"].grounding) == ("support", "grounded")
    assert _decided(FIELDS) == Decision("extracted")
    verbatim = json.loads(json.dumps(SCHEMA))
    verbatim["properties"]["summary"]["x-grounding"] = "verbatim"
    read_back = ground_fields(FIELDS, QUOTES, TEXT, verbatim)["summary"]
    assert (read_back.value_agrees, is_grounded(read_back)) == (False, False)  # the same summary, verbatim


def test_a_support_fields_quote_must_still_be_in_the_document() -> None:
    invented = {**QUOTES, "summary": Quote(quote="A strong engineer who modernised billing quickly.")}
    decided = _decided(FIELDS, invented)
    assert decided.status == "review" and decided.reason is not None
    assert decided.reason.startswith("summary is not grounded in the document: the quote")


def test_a_moved_date_in_a_verbatim_field_still_goes_to_review() -> None:
    decided = _decided({**FIELDS, "letter_date": "2026-05-04"})
    assert decided.status == "review" and decided.reason is not None
    assert decided.reason.startswith("letter_date is not grounded in the document")
    assert "does not agree" in decided.reason


def test_a_none_field_is_recorded_but_never_a_reason_for_review() -> None:
    evidence = ground_fields(FIELDS, QUOTES, TEXT, SCHEMA)["remark"]
    assert (evidence.mode, evidence.grounding, evidence.value_agrees) == ("none", "not_found", None)
    required = json.loads(json.dumps(SCHEMA))
    required["required"].append("remark")
    spec = ClassSpec.model_validate({"description": "a reference", "schema": "r.json", "review_below": 0.5})
    bundle = ClassBundle(spec=spec, schema=required)
    decided = grounded_decision(Decision("extracted"), bundle, ground_fields(FIELDS, QUOTES, TEXT, required))
    assert decided == Decision("extracted")  # required and at 0.1, under review_below 0.5: still not a reason
    assert _decided(FIELDS, below=0.99).reason == "; ".join(
        f"{path} has confidence 0.97, below 0.99"
        for path in ("candidate", "letter_date", "summary", "recommends")
    )
