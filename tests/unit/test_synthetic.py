from __future__ import annotations

import random
import statistics

from docagent.drills import invoice_parts
from docagent.drills.synthetic import CATEGORIES, generate_customers, generate_documents
from docagent.localcloud.bedrock import billed_tokens
from functions import spend
from stacks.config import DEFAULT_MODEL_ID


def test_generation_is_deterministic_for_a_seed():
    assert generate_documents(20, seed=3) == generate_documents(20, seed=3)
    assert generate_documents(20, seed=3) != generate_documents(20, seed=4)


def test_documents_vary_their_layout_and_labels():
    texts = [document.text for document in generate_documents(200, seed=42)]
    for variant in ("Invoice #", "Ref.", "Invoice number:", "Amount payable", "Subtotal", "Due date", "EUR ",
                    " EUR", "€", "March", ".2025", "PO-"):  # fmt: skip
        assert any(variant in text for text in texts), variant


def test_ground_truth_refers_to_generated_customers_unless_asked_otherwise():
    known = {customer.customer_id for customer in generate_customers(50)}
    assert {document.truth.customer_id for document in generate_documents(100, seed=1)} <= known
    unknown = generate_documents(100, seed=1, unknown_customer_rate=1.0)
    assert not {document.truth.customer_id for document in unknown} & known


def test_the_invoices_are_real_sized_so_the_demos_corpus_bills_past_its_budget():
    """A page or two each (docs/cost.md, "Token counting"): the demo's 200 invoices (seed 7), their text at
    the billed rate with the prompt and the reply (about 400 input and 55 output tokens a call), cost more
    than the demo's $0.20 budget on the default (global) model, so `docagent demo --no-crash --max-cost-usd
    0.20` is stopped by it."""
    documents = generate_documents(200, seed=7)
    sizes = [len(document.text) for document in documents]
    assert min(sizes) >= 2_500 and max(sizes) <= 5_500, (min(sizes), max(sizes))
    assert 3_000 <= statistics.mean(sizes) <= 5_000, statistics.mean(sizes)
    tokens = sum(billed_tokens.text_tokens(document.text) for document in documents)
    assert spend.call_cost_usd(DEFAULT_MODEL_ID, tokens + 200 * 400, 200 * 55) > 0.20


def test_an_invoice_has_5_to_20_lines_and_a_vat_breakdown_that_adds_up():
    rng = random.Random(5)
    words = {"people": ["Ada Lovelace"], "periods": ["1-31 March 2025"], "days": ["3 March 2025"]}
    for category in CATEGORIES:
        for _ in range(20):
            lines = invoice_parts.line_items(rng, category, 19, words)
            assert 5 <= len(lines) <= 20
            breakdown = invoice_parts.vat_breakdown(lines)
            assert sum(vat.net for vat in breakdown) == sum(line.net for line in lines)
            assert {vat.rate for vat in breakdown} <= {19, 7}


def test_a_sellers_iban_has_valid_check_digits():
    rng = random.Random(11)
    for city in invoice_parts.CITIES:
        iban = invoice_parts.seller(rng, "Contoso Ltd", city, ("Ada Lovelace", "Alan Turing")).iban
        if city == "Boston":
            assert iban.startswith("routing")  # a US bank: ABA routing and account numbers
            continue
        compact = iban.replace(" ", "")
        rearranged = compact[4:] + compact[:4]
        assert int("".join(str(int(char, 36)) for char in rearranged)) % 97 == 1, iban
