"""A value printed as it is carries no quote (issue #54): the prompt asks a page for it and a quote only for
the fields that need one (functions/inference/evidence.py), the grounding finds the value itself on the page
(functions/evidence/grounding.py ``located_by_value``), and the local model answers that prompt in the same
shape (docagent/localcloud/bedrock/evidence.py)."""

from __future__ import annotations

import json
from typing import Any

from docagent import project
from docagent.kit.loader import read_bundle
from docagent.localcloud.bedrock.evidence import misquoted, with_evidence
from functions.evidence.grounding import ground, ground_fields, is_grounded, review_reasons
from functions.evidence.grounding_modes import quoted_paths
from functions.inference.call_specs import extract_spec
from functions.inference.evidence import (
    EVIDENCE_KEY,
    EVIDENCE_PROMPT,
    QUOTE_ALL_PROMPT,
    asked_quotes,
    evidence_prompt,
    split,
)
from functions.payloads.evidence import Quote
from functions.payloads.job import JobVersions
from functions.reading.documents import document_input

PAGES = [
    "ACME Supplies Ltd\nCustomer no.: 19\nInvoice number: F2025-3421\n",
    "Invoice date: 27/07/2025   Due: 26/08/2025\nTotal due: CHF 17,254.27\nCost category: Hardware\n",
]
SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["customer_id", "invoice_date", "amount", "category", "summary"],
    "properties": {
        "customer_id": {"type": "string", "pattern": "^CUST-[0-9]{5}$", "x-normalise": "upper"},
        "invoice_date": {"type": "string", "format": "date", "x-normalise": "date"},
        "amount": {"type": "string", "x-normalise": "amount"},
        "category": {"type": "string", "enum": ["hardware", "other"]},
        "summary": {"type": "string", "maxLength": 300, "x-grounding": "support"},
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"sku": {"type": "string"}, "paid": {"type": "boolean"}},
            },
        },
    },
}
FIELDS: dict[str, Any] = {
    "customer_id": "CUST-00019",
    "invoice_date": "2025-07-27",
    "amount": "17254.27",
    "category": "hardware",
    "summary": "Hardware from ACME",
}


def test_the_prompt_asks_quotes_only_for_fields_a_value_cannot_be_found_by() -> None:
    assert list(quoted_paths(SCHEMA)) == ["category", "summary", "items[].paid"]
    prompt = evidence_prompt(SCHEMA)
    assert prompt.startswith(EVIDENCE_PROMPT) and asked_quotes(f"You extract.\n\n{prompt}") == [
        "category",
        "summary",
        "items[].paid",
    ]
    assert asked_quotes(EVIDENCE_PROMPT) == []  # every field printed as it is: pages only
    assert asked_quotes("an older prompt asking a quote for every value") is None


def test_a_verbatim_field_without_a_quote_is_located_by_its_value_on_its_page() -> None:
    quotes = {name: Quote(page=2) for name in ("invoice_date", "amount")} | {"customer_id": Quote(page=1)}
    evidence = ground_fields({k: FIELDS[k] for k in quotes}, quotes, PAGES, SCHEMA)
    assert {path: found.grounding for path, found in evidence.items()} == dict.fromkeys(quotes, "grounded")
    # the located text is the field's evidence: its quote, page and span
    date, amount = evidence["invoice_date"], evidence["amount"]
    assert (date.quote, date.page, date.value_agrees) == ("27/07/2025", 2, True)
    assert date.start is not None and PAGES[1][date.start : date.end] == "27/07/2025"
    assert amount.quote == "17,254.27" and is_grounded(amount) and amount.confidence > 0.9
    assert evidence["customer_id"].quote == "Customer no.: 19"  # a code by its digits: the line


def test_a_value_on_another_page_than_named_is_approximate_and_no_evidence_at_all_still_looks() -> None:
    elsewhere = ground("2025-07-27", Quote(page=1), PAGES, SCHEMA["properties"]["invoice_date"])
    assert (elsewhere.grounding, elsewhere.page) == ("approximate", 2) and is_grounded(elsewhere)
    unnamed = ground("17254.27", None, PAGES, SCHEMA["properties"]["amount"])
    assert (unnamed.grounding, unnamed.page, unnamed.quote) == ("grounded", 2, "17,254.27")


def test_a_misread_value_the_document_does_not_print_is_not_found_and_goes_to_review() -> None:
    moved = ground("2025-07-28", Quote(page=2), PAGES, SCHEMA["properties"]["invoice_date"])
    assert moved.grounding == "not_found" and moved.value_agrees is False and moved.start is None
    assert not is_grounded(moved) and "2025-07-28" in (moved.note or "")
    evidence = {"invoice_date": moved}
    assert review_reasons(evidence, ["invoice_date"], {}, None) == [
        f"invoice_date is not grounded in the document: {moved.note}"
    ]


def test_a_value_is_found_as_a_whole_word_only() -> None:
    code = {"type": "string", "pattern": "^[A-Z]{3}$"}
    assert ground("EUR", Quote(page=1), ["EUROPE TRADING\n"], code).grounding == "not_found"
    assert ground("EUR", Quote(page=1), ["Total EUR 10.00\n"], code).quote == "EUR"


def test_without_a_text_layer_a_page_alone_is_unverified() -> None:
    evidence = ground("2025-07-27", Quote(page=3), None, SCHEMA["properties"]["invoice_date"])
    assert (evidence.grounding, evidence.page, evidence.quote) == ("unverified", 3, None)


def test_a_reply_with_page_numbers_keeps_them_as_quotes_without_text() -> None:
    reply = {
        **FIELDS,
        EVIDENCE_KEY: {"invoice_date": 2, "amount": 0, "summary": {"quote": "ACME", "page": 1}},
    }
    fields, quotes = split(reply)
    assert fields == FIELDS
    assert quotes == {"invoice_date": Quote(page=2), "summary": Quote(quote="ACME", page=1)}  # 0: no page


def test_the_local_model_answers_the_prompt_with_pages_and_the_asked_quotes() -> None:
    answered = json.loads(with_evidence(json.dumps(FIELDS), PAGES, None, ["category", "summary"]))
    evidence = answered[EVIDENCE_KEY]
    assert evidence["invoice_date"] == 2 and evidence["customer_id"] == 1 and evidence["amount"] == 2
    assert evidence["category"] == {"quote": "Cost category: Hardware", "page": 2}
    assert isinstance(evidence["summary"], dict)
    everything = json.loads(with_evidence(json.dumps(FIELDS), PAGES))[EVIDENCE_KEY]
    assert all(isinstance(item, dict) and "quote" in item for item in everything.values())
    # the misquote fault turns a page alone into a quote the document does not hold
    wrong = json.loads(misquoted(json.dumps(answered), "invoice_date"))[EVIDENCE_KEY]["invoice_date"]
    assert wrong["page"] == 2 and "telephone" in wrong["quote"]
    assert ground(
        "2025-07-27", Quote.model_validate(wrong), PAGES, SCHEMA["properties"]["invoice_date"]
    ).grounding == ("not_found")


def test_a_document_without_page_texts_is_asked_a_quote_for_every_value() -> None:
    """HTML has no page texts the grounding reads (functions/reading/page_texts.py): its values cannot be
    looked for, so its extraction asks a quote for each, and the local model quotes each."""
    bundle = read_bundle(project.ROOT / "examples" / "invoices")
    versions = JobVersions.model_construct(prompt_version="v")
    text = extract_spec(bundle, "invoice", versions, document_input(b"Invoice 7\nTotal EUR 1.00\n", "doc-1"))
    html = extract_spec(
        bundle, "invoice", versions, document_input(b"<html><body>Invoice 7</body></html>", "d")
    )
    assert asked_quotes(text.system) == ["category", "summary"]
    assert QUOTE_ALL_PROMPT in html.system and asked_quotes(html.system) is None
    assert evidence_prompt(None) == QUOTE_ALL_PROMPT


def test_a_date_is_looked_for_on_the_lines_naming_its_field_only() -> None:
    """A page prints several dates: a misread invoice date that is the end of a billing period elsewhere on
    the page is not the invoice's (the demo's doc with "period 01.03.2025 - 30.03.2025")."""
    page = "Contoso Ltd | Invoice # INV-2025-14134 | 29.03.2025\n  period 01.03.2025 - 30.03.2025\n"
    date = SCHEMA["properties"]["invoice_date"]
    fields = {"invoice_date": "2025-03-30"}
    misread = ground_fields(
        fields, {"invoice_date": Quote(page=1)}, [page], {"properties": {"invoice_date": date}}
    )
    assert misread["invoice_date"].grounding == "not_found"
    read = ground("2025-03-29", Quote(page=1), [page], date, name="invoice_date")
    assert (read.grounding, read.quote) == ("grounded", "29.03.2025")
    # without a line naming it, any line is looked at
    assert ground("2025-03-30", Quote(page=1), [page], date, name="due_date").grounding == "grounded"


def test_a_code_read_by_its_digits_is_looked_for_on_the_lines_naming_it() -> None:
    page = "Quai Saint-Antoine 19\nCustomer no.: 20\n"
    code = SCHEMA["properties"]["customer_id"]
    assert ground("CUST-00020", Quote(page=1), [page], code, name="customer_id").quote == "Customer no.: 20"
    assert ground("CUST-00019", Quote(page=1), [page], code, name="customer_id").grounding == "not_found"
