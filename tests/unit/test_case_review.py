"""A failed case is a review item (docs/design.md, "Packets" and "Review"): a packet whose case is in review
is an item itself, by its document id, listed with the case's reason; a reviewer accepts it (the case passes,
the packet is its worst section's) or rejects it (the packet is rejected ``ReviewRejected``) as a whole; a
case rejected by its checks is no item. Against moto's S3, as tests/unit/test_section_review.py."""

from __future__ import annotations

import pytest

from docagent.console import views
from docagent.console.app import ReviewConsole
from docagent.operations.context import OperatorContext, RefusedError
from docagent.operations.records import JobRecords
from docagent.operations.review import decide, queue
from docagent.operations.sessions import new_session
from functions import storage
from functions.payloads.report import CaseOutcome, ReportRow, SectionRow
from functions.reading.sections import packet_status
from functions.reviews import ReviewDecision, review_items, reviewed_packet
from tests.support import put_object
from tests.unit.test_section_review import CLAIM, ESTIMATE, JOB, job, records, result, section  # noqa: F401

CASED = "packet-0003.pdf"
CASE = CaseOutcome(status="review", error="PoliciesDiffer", reason="case rule one-policy: they differ")


def sections_row() -> list[SectionRow]:
    return [
        SectionRow(section_id="s0001-0001", pages=(1, 1), status="extracted", class_name="claim-form"),
        SectionRow(section_id="s0002-0003", pages=(2, 3), status="extracted", class_name="repair-estimate"),
    ]


def decision(verdict: str, reason: str | None = None) -> ReviewDecision:
    return ReviewDecision.model_validate(
        {
            "decision_id": "0" * 32,
            "job_id": JOB,
            "document_id": CASED,
            "verdict": verdict,
            "fields": {},
            "reason": reason,
            "decided_by": "ana",
            "decided_at": "2026-12-07T00:00:00Z",
        }
    )


def cased_row(case: CaseOutcome = CASE) -> ReportRow:
    rows = sections_row()
    status, error, reason = packet_status(rows, case)
    return ReportRow(
        document_id=CASED, index=3, key=f"k/{CASED}", status=status, error=error, reason=reason,
        sections=rows, case=case,
    )  # fmt: skip


def test_a_case_in_review_is_the_packets_own_item_and_a_rejected_case_is_none() -> None:
    assert cased_row().status == "review" and review_items(cased_row()) == [CASED]
    rejected = CaseOutcome(status="rejected", error="CaseIncomplete", reason="case requires x: none")
    assert review_items(cased_row(rejected)) == []


def test_accepting_the_packet_passes_its_case_and_rejecting_it_rejects_the_packet() -> None:
    accepted = reviewed_packet(cased_row(), {CASED: decision("accepted", "same insurer, two branches")}, None)
    assert (accepted.status, accepted.error) == ("extracted", None)
    assert accepted.case == CaseOutcome(status="extracted", reason="same insurer, two branches")
    rejected = reviewed_packet(cased_row(), {CASED: decision("rejected", "two claims in one")}, None)
    assert (rejected.status, rejected.error) == ("rejected", "ReviewRejected")
    assert rejected.reason == "rejected in review by ana: two claims in one"


def test_the_queue_lists_the_packet_and_a_reviewer_decides_it_once(records: JobRecords) -> None:  # noqa: F811
    claim = {"class_name": "claim-form", "fields": CLAIM}
    rows = [
        section(CASED, 3, "s0001-0001", (1, 1), "extracted", **claim),
        section(CASED, 3, "s0002-0003", (2, 3), "extracted", class_name="repair-estimate", fields=ESTIMATE),
    ]
    status, error, reason = packet_status(rows, CASE)
    stored = result(CASED, 3, status, error=error, reason=reason, sections=rows, case=CASE)
    put_object(storage.result_key(JOB, CASED), stored.model_dump_json())
    fresh = JobRecords(records.ctx, JOB)
    [item] = [found for found in queue(fresh) if found["document_id"] == CASED]
    assert (item["item"], item["section_id"], item["fields"]) == (CASED, None, None)
    assert "case rule one-policy" in item["reason"]
    with pytest.raises(RefusedError, match="has no field total"):
        decide(fresh, CASED, "accepted", typed={"total": "1"}, by="ana", reason=None)
    decided = decide(fresh, CASED, "accepted", typed={}, by="ana", reason="one policy, renumbered")
    assert decided.written and decided.decision.section_id is None and decided.decision.fields == {}
    assert JobRecords(records.ctx, JOB).review(CASED) == decided.decision


def test_the_packets_page_offers_to_decide_it_whole_while_its_case_is_in_review() -> None:
    rows = sections_row()
    status, error, reason = packet_status(rows, CASE)
    packet = result(CASED, 3, status, error=error, reason=reason, sections=rows, case=CASE)
    console = ReviewConsole(
        OperatorContext(endpoint=None, stack_name="DocAgent", outputs={}, session=new_session()), "tester"
    )
    view = views.DocumentView(
        job_id=JOB, document_id=CASED, index=3, key="k", result=packet, review=None, calls=[], text=None,
        text_note="a PDF", is_pdf=True, trace=None, job_status="RUNNING",
    )  # fmt: skip
    page = console.render("document.html", doc=view, reviewer="tester", field_text=str, said=None).decode()
    assert f'<form method="post" action="/job/{JOB}/document/{CASED}/review"' in page
    assert "Its case is in review: case rule one-policy: they differ." in page
    assert 'id="accept-packet"' in page and 'id="reject-packet"' in page
    decided = views.DocumentView(**{**view.__dict__, "review": decision("accepted")})
    page = console.render("document.html", doc=decided, reviewer="tester", field_text=str, said=None).decode()
    assert 'id="accept-packet"' not in page and "Accepted by ana" in page
