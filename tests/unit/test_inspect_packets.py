"""``docagent inspect``'s human view of packets and reviews (issue 53): a packet's class (its sections'
classes), its cost, the documents in review (a packet's sections in review) and each packet's sections."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from rich.console import Console

from docagent.operations.inspect_documents import document_counts, result_view
from docagent.operations.inspect_print import _print_documents
from functions.payloads.document import DocumentResult

VERSIONS = {
    "model_id": "m", "prompt_version": "p", "prompt_sha256": "s", "code_version": "c",
    "created_at": "2026-12-04T06:00:00Z",
}  # fmt: skip


def result(document_id: str, index: int, **fields: Any) -> DocumentResult:
    return DocumentResult.model_validate({
        "job_id": "j1", "document_id": document_id, "key": f"k/{document_id}", "index": index,
        "versions": VERSIONS, "processed_at": "2026-12-04T06:00:00Z", **fields,
    })  # fmt: skip


def detail(stored: DocumentResult, cost: float) -> dict[str, Any]:
    """A committed document as inspect's document_view describes it (the fields the human view reads)."""
    records = SimpleNamespace(reviews={})
    return {
        "document_id": stored.document_id, "index": stored.index, "status": "committed",
        "result": result_view(records, stored),  # type: ignore[arg-type]
        "last_committed": "result_stored", "active_step": None, "error": None, "retries": None,
        "model_calls": [{}, {}, {}], "model_cost_usd": cost, "resumed_by": None, "replayed": [], "flags": [],
    }  # fmt: skip


PACKET = result(
    "packet.pdf", 0, status="review", error="AboveDeskLimit",
    sections=[
        {"section_id": "s0001-0001", "pages": [1, 1], "status": "review", "class_name": "claim-form",
         "error": "AboveDeskLimit"},
        {"section_id": "s0002-0003", "pages": [2, 3], "status": "extracted", "class_name": "repair-estimate"},
    ],
)  # fmt: skip
IN_REVIEW = result("claim.pdf", 1, status="review", class_name="claim-form", fields={"total": "9000.00"})
EXTRACTED = result("estimate.pdf", 2, status="extracted", class_name="repair-estimate", fields={})


def test_inspect_lists_the_documents_in_review_with_their_class_cost_and_a_packets_sections() -> None:
    documents = [detail(PACKET, 0.0012), detail(IN_REVIEW, 0.0004), detail(EXTRACTED, 0.0003)]
    counts = document_counts(documents)
    assert (counts["extracted"], counts["review"], counts["rejected"]) == (1, 2, 0)
    out = Console(record=True, width=250)
    _print_documents(out, {"document_details": documents, "documents": counts}, show_all=False)
    text = out.export_text()
    assert "(1 extracted, 2 in review, 0 rejected)" in text
    rows = {line.split("│")[1].strip(): line for line in text.splitlines() if line.count("│") > 5}
    assert set(rows) == {"packet.pdf", "claim.pdf"}  # the documents in review; not the extracted one
    packet = [cell.strip() for cell in rows["packet.pdf"].split("│")]
    assert "committed 1 section in review" in packet
    assert "packet: claim-form, repair-estimate" in packet and "0.001200" in packet
    assert "claim-form" in [cell.strip() for cell in rows["claim.pdf"].split("│")]
    assert (
        "packet.pdf sections: s0001-0001 pages 1-1 claim-form review AboveDeskLimit; "
        "s0002-0003 pages 2-3 repair-estimate extracted" in text
    )
