"""functions/evidence/grounding.py: a quote found on its page (exact, fuzzy, elsewhere, absent), the value
against its quote under the schema, the confidence, the review reasons; and the reply's evidence
(functions/inference/ evidence.py) and the local model's (docagent/localcloud/bedrock/evidence.py, the
misquote fault)."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from pydantic import JsonValue

from docagent.localcloud.bedrock.evidence import misquoted, quote_for, with_evidence
from docagent.localcloud.bedrock.model_faults import parse_model_faults
from functions.checks.outcomes import Decision
from functions.definition.job_spec import ClassBundle, ClassSpec
from functions.evidence import grounding
from functions.evidence.grounded_decision import grounded_decision
from functions.evidence.grounding import ground, ground_fields, is_grounded, review_reasons
from functions.evidence.quote_matching import FUZZY_THRESHOLD, _by_character, locate, normalised, value_agrees
from functions.inference.evidence import EVIDENCE_KEY, split
from functions.payloads.evidence import FieldEvidence, Quote
from functions.reading.page_texts import PageTexts

PAGES = [
    "CLAIM FORM\n  Policy number: Policy no. 100234\n  Full name:   Maria\n Jensen\n",
    "Section 3  The incident\n  Date of incident: 14 March 2025\n  TOTAL CLAIMED ..... EUR 1,820.50\n",
]
DATE = {"type": "string", "x-normalise": "date"}
AMOUNT = {"type": "string", "x-normalise": "amount"}
SCHEMA = {
    "type": "object",
    "required": ["policy_number", "incident_date", "total"],
    "properties": {
        "policy_number": {"type": "string", "x-normalise": "upper"},
        "incident_date": DATE,
        "total": AMOUNT,
        "claimant": {"type": "object", "properties": {"name": {"type": "string"}}},
    },
}


def test_an_exact_quote_resolves_to_its_span_on_the_page_named() -> None:
    found = locate("date of INCIDENT:  14 march 2025", PAGES, 2)
    assert found is not None and found.exact and found.page == 2
    assert PAGES[1][found.start : found.end] == "Date of incident: 14 March 2025"


def test_whitespace_runs_across_lines_are_one_space() -> None:
    found = locate("Full name: Maria Jensen", PAGES, 1)
    assert found is not None and found.exact
    assert PAGES[0][found.start : found.end] == "Full name:   Maria\n Jensen"


def test_a_quote_off_by_a_character_is_found_fuzzily_and_one_changed_is_not() -> None:
    near = locate("Date of incidnt: 14 March 2025", PAGES, 2)
    assert near is not None and not near.exact and near.score >= FUZZY_THRESHOLD
    assert "14 March 2025" in PAGES[1][near.start : near.end]
    assert locate("Date of the burglary: 3 May 2024", PAGES, 2) is None


def test_a_quote_on_another_page_is_approximate_with_the_right_page() -> None:
    evidence = ground("2025-03-14", Quote(quote="Date of incident: 14 March 2025", page=1), PAGES, DATE)
    assert evidence.grounding == "approximate" and evidence.page == 2
    assert evidence.note is not None and "page 2, not page 1" in evidence.note


@pytest.mark.parametrize(
    ("value", "quote", "schema", "agrees"),
    [
        ("2025-03-14", "Date of incident: 14 March 2025", DATE, True),
        ("2025-03-15", "Date of incident: 14 March 2025", DATE, False),
        ("2025-06-02", "Date of incident: 02/06/2025 (day/month/year)", DATE, True),
        ("1820.50", "TOTAL CLAIMED ..... EUR 1,820.50", AMOUNT, True),
        ("1540.00", "Plasterboard ceiling, m2     22    1.540,00", AMOUNT, True),
        ("1820.51", "TOTAL CLAIMED ..... EUR 1,820.50", AMOUNT, False),
        (18, "New laminate flooring, m2      18    1,080.00", {"type": "integer"}, True),
        (6, "CVR/VAT DK12345678", {"type": "integer"}, False),
        ("POL-100234", "Policy number: Policy no. 100234", {"type": "string"}, True),
        ("POL-100235", "Policy number: Policy no. 100234", {"type": "string"}, False),
        ("GBP", "Total claimed    £515.00", {"type": "string"}, True),
        ("water", "Type of loss: Burst pipe", {"type": "string", "enum": ["water", "fire"]}, None),
        ("Maria Jensen", "Full name: Maria Jensen", {"type": "string"}, True),
        ("Anna Berg", "Full name: Maria Jensen", {"type": "string"}, False),
    ],
)
def test_the_value_is_read_from_its_quote_as_the_schema_says(
    value: object, quote: str, schema: dict, agrees: bool | None
) -> None:
    assert value_agrees(value, quote, schema) is agrees


def test_a_grounded_quote_with_a_value_it_does_not_say_is_not_grounded() -> None:
    good = ground("2025-03-14", Quote(quote="Date of incident: 14 March 2025", page=2), PAGES, DATE)
    moved = ground("2025-03-15", Quote(quote="Date of incident: 14 March 2025", page=2), PAGES, DATE)
    assert is_grounded(good) and good.grounding == "grounded" and good.confidence > 0.9
    assert not is_grounded(moved) and moved.value_agrees is False and moved.confidence < 0.3
    assert moved.start == good.start and "does not agree" in (moved.note or "")


def test_a_quote_the_document_does_not_hold_and_a_missing_quote_are_not_found() -> None:
    invented = ground("2025-03-14", Quote(quote="incident reported on 14 March 2025", page=2), PAGES, DATE)
    assert invented.grounding == "not_found" and invented.start is None and invented.confidence <= 0.1
    judged = ground(True, None, PAGES, {"type": "boolean"})  # support: nothing to look for without a quote
    assert judged.grounding == "not_found" and judged.note == "the model gave no quote"


def test_without_a_text_layer_the_field_is_unverified_on_its_page() -> None:
    evidence = ground("2025-03-14", Quote(quote="14 March 2025", page=3), None, DATE)
    assert (evidence.grounding, evidence.page, evidence.start) == ("unverified", 3, None)
    assert is_grounded(evidence) and evidence.confidence == 0.6  # only review_below can send it to review


def test_the_models_own_score_is_averaged_in() -> None:
    quote = Quote(quote="Date of incident: 14 March 2025", page=2, confidence=0.5)
    assert ground("2025-03-14", quote, PAGES, DATE).confidence == pytest.approx((0.97 + 0.5) / 2)


def test_every_scalar_leaf_is_grounded_by_its_path_and_nulls_are_skipped() -> None:
    fields = {"policy_number": "POL-100234", "claimant": {"name": "Maria Jensen"}, "total": None}
    quotes = {"claimant.name": Quote(quote="Full name: Maria Jensen", page=1)}
    evidence = ground_fields(fields, quotes, PAGES, SCHEMA)
    assert set(evidence) == {"policy_number", "claimant.name"}
    assert evidence["claimant.name"].grounding == "grounded"
    # no quote given: a verbatim value is looked for by itself (its digits), the line found is its quote
    assert evidence["policy_number"].grounding == "grounded"
    assert evidence["policy_number"].quote == "Policy number: Policy no. 100234"


def test_review_reasons_name_each_required_field_not_grounded_and_each_below_its_threshold() -> None:
    evidence = {
        "incident_date": ground(
            "2025-03-15", Quote(quote="Date of incident: 14 March 2025", page=2), PAGES, DATE
        ),
        "claimant.name": ground("Maria Jensen", Quote(quote="Full name: Maria Jensen", page=2), PAGES, {}),
        "total": ground("1820.50", Quote(quote="TOTAL CLAIMED ..... EUR 1,820.50", page=2), PAGES, AMOUNT),
    }
    reasons = review_reasons(evidence, ["incident_date", "total"], {"claimant": 0.9}, None)
    assert len(reasons) == 2
    assert reasons[0].startswith("incident_date is not grounded") and "does not agree" in reasons[0]
    assert reasons[1].startswith("claimant.name has confidence 0.80, below 0.90")
    assert review_reasons(evidence, [], {}, 0.99) == [f"{path} has confidence {e.confidence:.2f}, below 0.99"
                                                      for path, e in evidence.items()]  # fmt: skip


def test_the_reply_evidence_is_split_from_the_fields_and_bad_quotes_are_dropped() -> None:
    given = {"total": {"quote": "EUR 1.00", "page": 2}, "x": {"page": 0}, "y": {"quote": 5}, "z": {"page": 1}}
    fields, quotes = split({"total": "1.00", EVIDENCE_KEY: given})
    assert fields == {"total": "1.00"}
    assert quotes == {"total": Quote(quote="EUR 1.00", page=2), "z": Quote(page=1)}  # a page alone is kept


def test_the_local_model_quotes_the_line_that_holds_each_value() -> None:
    assert quote_for("2025-03-14", PAGES) == {"quote": "Date of incident: 14 March 2025", "page": 2}
    assert quote_for("1820.50", PAGES) == {"quote": "TOTAL CLAIMED ..... EUR 1,820.50", "page": 2}
    assert quote_for("Nowhere", PAGES) == {"quote": "Nowhere", "page": 1}
    reply = json.loads(with_evidence(json.dumps({"claimant": {"name": "Maria"}, "total": None}), PAGES))
    assert reply[EVIDENCE_KEY] == {"claimant.name": {"quote": "Full name:   Maria", "page": 1}}
    given = json.dumps({"total": "1.00", EVIDENCE_KEY: {}})
    assert with_evidence(given, PAGES) == given  # a label's own evidence is kept


def test_the_misquote_fault_gives_a_quote_the_document_does_not_hold() -> None:
    reply = with_evidence(json.dumps({"incident_date": "2025-03-14", "total": "1820.50"}), PAGES)
    faults = parse_model_faults("misquote=incident_date:1.0")
    changed = json.loads(faults.misquoted(reply, 0.5))
    assert changed[EVIDENCE_KEY]["total"] == json.loads(reply)[EVIDENCE_KEY]["total"]
    quote = Quote.model_validate(changed[EVIDENCE_KEY]["incident_date"])
    assert ground("2025-03-14", quote, PAGES, DATE).grounding == "not_found"
    assert parse_model_faults("misquote=total:0.2").misquoted(reply, 0.5) == reply
    assert misquoted("not json", "total") == "not json"


def _class(review_below: object = None) -> ClassBundle:
    spec = ClassSpec.model_validate(
        {"description": "a claim", "schema": "c.json", "review_below": review_below}
    )
    return ClassBundle(spec=spec, schema=SCHEMA)


def _evidence(date: str) -> dict:
    fields = {"policy_number": "POL-100234", "incident_date": date, "total": "1820.50"}
    quotes = {
        "policy_number": Quote(quote="Policy no. 100234", page=1),
        "incident_date": Quote(quote="Date of incident: 14 March 2025", page=2),
        "total": Quote(quote="EUR 1,820.50", page=2),
    }
    return ground_fields(fields, quotes, PAGES, SCHEMA)


def test_the_decision_goes_to_review_naming_each_ungrounded_required_field() -> None:
    assert grounded_decision(Decision("extracted"), _class(), _evidence("2025-03-14")) == Decision(
        "extracted"
    )
    moved = grounded_decision(
        Decision("review", None, "above the desk limit"), _class(), _evidence("2025-03-15")
    )
    assert moved.status == "review" and moved.reason is not None
    assert moved.reason.startswith("above the desk limit; incident_date is not grounded in the document")


def test_a_rejection_stays_unless_a_required_field_is_not_grounded() -> None:
    rejected = Decision("rejected", "UnknownPolicy", "policy POL-100234 is unknown")
    assert grounded_decision(rejected, _class(0.99), _evidence("2025-03-14")) == rejected  # not review_below
    reviewed = grounded_decision(rejected, _class(), _evidence("2025-03-15"))
    assert (reviewed.status, reviewed.error) == ("review", None) and reviewed.reason is not None
    assert reviewed.reason.endswith(
        "the checks would reject it (UnknownPolicy: policy POL-100234 is unknown)"
    )


def test_review_below_per_class_and_per_field() -> None:
    evidence = _evidence("2025-03-14")
    assert grounded_decision(Decision("extracted"), _class(0.99), evidence).status == "review"
    assert grounded_decision(Decision("extracted"), _class({"total": 0.99}), evidence).reason == (
        "total has confidence 0.97, below 0.99"
    )
    assert grounded_decision(Decision("extracted"), _class({"total": 0.5}), evidence).status == "extracted"


def test_a_zero_padded_code_agrees_with_its_number_as_printed() -> None:
    assert value_agrees("CUST-00005", "Client no. 5", {"type": "string"}) is True
    assert value_agrees("CUST-00005", "Client no. 50", {"type": "string"}) is False
    lines = ["Total: 5.00 EUR\nClient no. 5\nCUST-00005 thanks"]
    assert quote_for("CUST-00005", lines) == {"quote": "CUST-00005 thanks", "page": 1}  # as written first


def test_without_rapidfuzz_the_standard_librarys_difflib_grounds_the_same_quotes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "rapidfuzz", None)  # import rapidfuzz raises ImportError
    near = locate("Date of incidnt: 14 March 2025", PAGES, 2)
    assert near is not None and not near.exact and near.score >= FUZZY_THRESHOLD
    assert "14 March 2025" in PAGES[1][near.start : near.end]
    assert locate("Date of the burglary: 3 May 2024", PAGES, 2) is None
    assert value_agrees("Maria Jensen", "Full name: Jensen Maria", {"type": "string"}) is True
    assert value_agrees("Anna Berg", "Full name: Maria Jensen", {"type": "string"}) is False


@pytest.mark.parametrize(
    "text",
    [
        "",
        "  Invoice\tNo. 12345\n\n  Total: 1,234.56 EUR  \n",
        "\x1cODYSSEUS ΣΟΦΟΣ\u2028Straße\u00a0İstanbul ﬁle ẞ",  # separators, a final sigma, lowering to two
        "ΣΑΣ αΣ Σ",
        "\u3000word\u3000",
        " \x85a\x1f\x1e b\u200b c\u2029\u00a0\u2007d\t",  # whitespace str.isspace and re's \s agree on
    ],
)
@pytest.mark.parametrize("spaces", [True, False])
def test_a_normalised_text_and_its_offsets_are_those_of_lowering_each_character(
    text: str, spaces: bool
) -> None:
    # normalised() lowers and splits the whole text in C where that is the same as doing it a character at a
    # time, and reads its offsets word by word; the character-by-character reading (_by_character) is the
    # definition
    found = normalised(text, spaces=spaces)
    assert (found.text, found.offsets) == _by_character(text, spaces=spaces)


def test_an_extraction_is_grounded_once_on_a_document_s_page_texts(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cascade's ``to_escalate`` and the result's ``evidence_of`` ground the same extraction of a document
    not escalated: the second is the first's evidence (PageTexts.grounded); another extraction, another
    document's texts, a value of another type (1 and True) or order are grounded anew."""
    grounded: list[object] = []
    real = grounding.ground

    def counted(value: JsonValue, *args: Any, **kwargs: Any) -> FieldEvidence:
        grounded.append(value)
        return real(value, *args, **kwargs)

    monkeypatch.setattr(grounding, "ground", counted)
    fields: dict[str, JsonValue] = {
        "policy_number": "POL-100234",
        "incident_date": "2025-03-14",
        "total": "1820.50",
    }
    quotes = {"total": Quote(page=2)}
    pages = PageTexts(PAGES)
    first = ground_fields(fields, quotes, pages, SCHEMA)
    assert len(grounded) == 3 and first["total"].grounding == "grounded"
    again = ground_fields(dict(fields), dict(quotes), pages, SCHEMA)
    assert again == first and len(grounded) == 3
    again["total"] = first["policy_number"]  # a caller's dict is its own
    assert ground_fields(fields, quotes, pages, SCHEMA) == first
    assert ground_fields(fields, quotes, PageTexts(PAGES), SCHEMA) == first and len(grounded) == 6
    changes: list[dict[str, JsonValue]] = [
        {**fields, "total": "1820.51"},
        {"total": "1820.50", **fields},  # another order
        {**fields, "total": 1},
    ]
    for changed in changes:
        ground_fields(changed, quotes, pages, SCHEMA)
    assert len(grounded) == 15
    ground_fields({**fields, "total": True}, quotes, pages, SCHEMA)
    ground_fields(fields, {"total": Quote(page=1)}, pages, SCHEMA)
    assert len(grounded) == 21
    ground_fields(fields, quotes, list(PAGES), SCHEMA)  # plain page texts: nothing remembered
    ground_fields(fields, quotes, list(PAGES), SCHEMA)
    assert len(grounded) == 27
