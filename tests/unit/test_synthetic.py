from __future__ import annotations

from docagent.drills.synthetic import generate_customers, generate_documents


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
