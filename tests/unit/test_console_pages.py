"""The console's document pages: an image document's pages shown large enough to read (their route:
tests/unit/test_console_page_images.py), a review form's evidence buttons, a packet's sections."""

from __future__ import annotations

import re

from docagent.console import views
from docagent.console.app import GET_ROUTES, POST_ROUTES, ReviewConsole
from docagent.operations.context import OperatorContext
from docagent.operations.progress import Snapshot
from docagent.operations.sessions import new_session
from functions.payloads.document import DocumentResult
from functions.reviews import ReviewDecision, decision_id
from tests.images import photo

STATE_MACHINE = "arn:aws:states:us-east-1:123456789012:stateMachine:DocAgent-DocumentReview"


def test_the_document_page_shows_an_image_documents_pages():
    assert (
        views.document_text(photo(20, 20), None)[1]
        == "an image: its pages are shown above (no text layer to show)"
    )
    route = next(pattern for pattern, page in GET_ROUTES if page.__name__ == "page_image")
    assert route.endswith("/page/([1-9][0-9]{0,2})")
    console = ReviewConsole(
        OperatorContext(endpoint=None, stack_name="DocAgent", outputs={}, session=new_session()), "tester"
    )
    view = views.DocumentView(
        job_id="j1", document_id="fax.tif", index=0, key="k", result=None, review=None, calls=[],
        text=None, text_note="an image", is_pdf=False, trace=None, job_status="SUCCEEDED",
        page_sizes=[(64, 80)] * 2,
    )  # fmt: skip
    page = console.render("document.html", doc=view, reviewer="tester", field_text=str, said=None).decode()
    assert page.count('<img src="/job/j1/document/fax.tif/page/') == 2
    assert "Page 2 of 2 (" in page


def test_a_document_in_review_offers_evidence_buttons_and_names_each_models_part():
    """#42: each field of the review form has an Evidence button (the selected text becomes its evidence),
    and a cascade's document says which model gave what and what each cost."""
    from functions.payloads.document import DocumentResult  # noqa: PLC0415
    from functions.payloads.job import JobVersions  # noqa: PLC0415

    cheap, strong = "cheap-model", "strong-model"
    result = DocumentResult.model_validate(
        {
            "job_id": "j1", "document_id": "claim.txt", "key": "k", "index": 0, "status": "review",
            "class_name": "claim", "fields": {"policy": "P-1", "filed": "2026-01-10"}, "format": "txt",
            "processed_at": "2026-12-04T00:00:00Z",
            "versions": JobVersions(model_id=cheap, prompt_version="p", prompt_sha256="0" * 64,
                                    code_version="c", created_at="2026-12-04T00:00:00Z"),
            "cascade": {"models": [cheap, strong], "escalated": ["filed"],
                        "reasons": ["filed is not grounded in the document: not found"],
                        "field_models": {"policy": cheap, "filed": strong},
                        "cost_usd": {cheap: 0.000375, strong: None}},
        }
    )  # fmt: skip
    console = ReviewConsole(
        OperatorContext(endpoint=None, stack_name="DocAgent", outputs={}, session=new_session()), "tester"
    )
    view = views.DocumentView(
        job_id="j1", document_id="claim.txt", index=0, key="k", result=result, review=None, calls=[],
        text=None, text_note=None, is_pdf=False, trace=None, job_status="SUCCEEDED",
        pages=["CLAIM P-1 filed 10.01.2026"],
    )  # fmt: skip
    page = console.render("document.html", doc=view, reviewer="tester", field_text=str, said=None).decode()
    for name in ("policy", "filed"):
        assert f'aria-label="Use the selected text as the evidence of {name}"' in page
        assert f'name="evidence:{name}"' in page
    line = page[page.index('id="cascade-line"') :]
    line = " ".join(line[: line.index("</p>")].split())
    assert f"The strong model {strong} gave filed (filed is not grounded" in line
    assert f"the cheap model {cheap} gave the rest" in line
    assert f"Cost: {cheap} $0.000375; {strong} unknown." in line


def test_the_document_page_and_the_jobs_row_show_a_packets_sections():
    packet = DocumentResult.model_validate(
        {
            "job_id": "j1", "document_id": "packet.pdf", "key": "k", "index": 0, "status": "rejected",
            "error": "UnknownDocumentClass", "reason": "section s0002-0002 (pages 2-2): no class",
            "versions": {"model_id": "m", "prompt_version": "p", "prompt_sha256": "s", "code_version": "c",
                         "created_at": "2026-12-04T06:00:00Z"}, "processed_at": "2026-12-04T06:00:00Z",
            "sections": [
                {"section_id": "s0001-0001", "pages": [1, 1], "status": "extracted",
                 "class_name": "claim-form", "fields": {"total": "785.00"}},
                {"section_id": "s0002-0002", "pages": [2, 2], "status": "rejected",
                 "error": "UnknownDocumentClass"},
            ],
        }
    )  # fmt: skip
    row = views.DocumentRow(document_id="packet.pdf", index=0, outcome="rejected", result=packet, review=None)
    assert row.key_fields() == ("2 sections: claim-form (pages 1-1) extracted; no class (pages 2-2) rejected")
    accepted = ReviewDecision(
        decision_id=decision_id("j1", "packet.pdf", "s0001-0001"), job_id="j1", document_id="packet.pdf",
        section_id="s0001-0001", verdict="accepted", fields={"total": "785.00"}, decided_by="tester",
        decided_at="2026-12-04T07:00:00Z",
    )  # fmt: skip
    row.section_reviews = {"s0001-0001": accepted}  # the job page names a section's decision
    assert row.key_fields().startswith("2 sections: claim-form (pages 1-1) extracted, accepted; no class")
    console = ReviewConsole(
        OperatorContext(endpoint=None, stack_name="DocAgent", outputs={}, session=new_session()), "tester"
    )
    view = views.DocumentView(
        job_id="j1", document_id="packet.pdf", index=0, key="k", result=packet, review=None, calls=[],
        text=None, text_note="a PDF", is_pdf=True, trace=None, job_status="SUCCEEDED",
    )  # fmt: skip
    page = console.render("document.html", doc=view, reviewer="tester", field_text=str, said=None).decode()
    assert "Sections (2)" in page
    link = '<a href="/job/j1/document/packet.pdf/section/s0001-0001">s0001-0001</a>'
    assert f'<th scope="row">{link}</th><td>1-1</td><td>claim-form</td>' in page
    assert "total: 785.00" in page and "<code>UnknownDocumentClass</code>" in page


def test_a_packets_section_in_review_has_its_own_page_form_and_queue_row():
    section = DocumentResult.model_validate(
        {
            "job_id": "j1", "document_id": "packet.pdf", "key": "k", "index": 0, "status": "review",
            "class_name": "claim-form", "fields": {"total": "785.00"}, "reason": "total is not grounded",
            "section_id": "s0001-0001", "pages": [1, 1],
            "versions": {"model_id": "m", "prompt_version": "p", "prompt_sha256": "s", "code_version": "c",
                         "created_at": "2026-12-04T06:00:00Z"}, "processed_at": "2026-12-04T06:00:00Z",
        }
    )  # fmt: skip
    console = ReviewConsole(
        OperatorContext(endpoint=None, stack_name="DocAgent", outputs={}, session=new_session()), "tester"
    )
    view = views.DocumentView(
        job_id="j1", document_id="packet.pdf", index=0, key="k", result=section, review=None, calls=[],
        text=None, text_note="a PDF", is_pdf=True, trace=None, job_status="SUCCEEDED",
        section_id="s0001-0001",
    )  # fmt: skip
    assert view.path == "/job/j1/document/packet.pdf/section/s0001-0001"
    page = console.render("document.html", doc=view, reviewer="tester", field_text=str, said=None).decode()
    assert '<form method="post" action="/job/j1/document/packet.pdf/section/s0001-0001/review"' in page
    assert '<input type="hidden" name="back" value="/job/j1/document/packet.pdf/section/s0001-0001">' in page
    assert "this section, pages 1-1, is a document of its own" in page
    assert any(re.fullmatch(pattern, view.path) for pattern, _ in GET_ROUTES)
    assert any(re.fullmatch(pattern, f"{view.path}/review") for pattern, _ in POST_ROUTES)
    item = {"item": "packet.pdf#s0001-0001", "document_id": "packet.pdf", "section_id": "s0001-0001",
            "pages": [1, 1], "class_name": "claim-form", "confidence": None, "reason": "r",
            "decision": None}  # fmt: skip
    queue = console.render(
        "review.html", job_id="j1", documents=[item], item_path=views.item_path, said=None
    ).decode()
    assert '<a href="/job/j1/document/packet.pdf/section/s0001-0001">packet.pdf#s0001-0001</a>' in queue


def test_the_job_page_shows_a_packets_class_cost_review_count_and_sections():
    packet = DocumentResult.model_validate(
        {
            "job_id": "j1", "document_id": "packet.pdf", "key": "k", "index": 0, "status": "review",
            "error": "AboveDeskLimit", "model_cost_usd": 0.0012,
            "versions": {"model_id": "m", "prompt_version": "p", "prompt_sha256": "s", "code_version": "c",
                         "created_at": "2026-12-04T06:00:00Z"}, "processed_at": "2026-12-04T06:00:00Z",
            "sections": [
                {"section_id": "s0001-0001", "pages": [1, 1], "status": "review", "class_name": "claim-form"},
                {"section_id": "s0002-0003", "pages": [2, 3], "status": "extracted",
                 "class_name": "repair-estimate"},
                {"section_id": "s0004-0004", "pages": [4, 4], "status": "extracted",
                 "class_name": "repair-estimate"},
            ],
        }
    )  # fmt: skip
    row = views.DocumentRow(document_id="packet.pdf", index=0, outcome="review", result=packet, review=None)
    assert row.class_label() == "packet: claim-form, repair-estimate"
    assert row.review_text() == "1 in review"
    snapshot = Snapshot(
        job_id="j1", execution_arn="arn", status="SUCCEEDED", current_state=None, error=None, cause=None,
        started_at=None, stopped_at=None, redrive_count=0, redrive_date=None,
        documents={"total": 1, "succeeded": 1, "failed": 0, "running": 0, "pending": 0}, map_run=None,
        approval=None,
    )  # fmt: skip
    view = views.JobView(
        snapshot=snapshot, documents=[row], timeline=[], redrive_plan=None, approval=None, report=None,
        reviews_waiting=1, cost_usd=views.usd(0.0012),
    )  # fmt: skip
    console = ReviewConsole(
        OperatorContext(endpoint=None, stack_name="DocAgent", outputs={}, session=new_session()), "tester"
    )
    page = console.render("job.html", job=view, shown=[row], outcome="", q="", said=None).decode()
    assert "<dt>Cost</dt><dd>$0.0012</dd>" in page
    line = " ".join(page[page.index('<a href="/job/j1/document/packet.pdf">') :].split("</tr>")[0].split())
    assert "<td>packet: claim-form, repair-estimate</td>" in line and "None" not in line
    assert '<td class="num">$0.001200</td>' in line and "<td>1 in review</td>" in line
    assert "3 sections: claim-form (pages 1-1) review; repair-estimate (pages 2-3) extracted" in line
