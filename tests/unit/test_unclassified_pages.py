"""A packet's pages of no class (a fax cover sheet: job.json ``unclassified_pages``;
functions/reading/sections.py): ``ignore`` keeps the section, marked ignored and never extracted, and the
packet's status follows its classified sections (and its case, which does not count it); ``review`` makes it a
review item of its own; ``reject`` rejects it ``UnknownDocumentClass``, and the packet with it."""

from __future__ import annotations

from typing import Any

import pytest

from docagent.drills.scaffold import render_pdf_pages
from docagent.operations.context import OperatorContext
from docagent.operations.records import JobRecords
from docagent.operations.review import decide, queue
from docagent.operations.sessions import new_session
from functions import s3_json
from functions.definition.job_spec import DefinitionBundle
from functions.logic.process_document import process_document
from functions.payloads.document import DocumentOutcome
from functions.payloads.job import PreparedJob
from functions.reading.sections import UNCLASSIFIED_DEFAULT
from functions.reviews import apply_decisions, review_items
from tests.fakes import FakeLambdaContext
from tests.moto_state import build_once
from tests.support import BUCKET, PREFIX, document_event, items, prepare, put_object
from tests.unit.test_packets import CLAIM, LETTER, LETTER_ON, RECIPE, PageReader, put_policy, splitting
from tests.unit.test_section_review import STATE_MACHINE, FinishedExecutions

HANDLINGS = ("ignore", "review", "reject")


def definition(handling: str | None, case: dict[str, Any] | None = None) -> DefinitionBundle:
    data = splitting().model_dump(mode="json", by_alias=True)
    if handling is not None:
        data["definition"]["unclassified_pages"] = handling
    if case is not None:
        data["definition"]["case"] = case
    return DefinitionBundle.model_validate(data)


@pytest.fixture
def jobs(cloud: None) -> dict[str, PreparedJob]:
    """One job per handling, each of one packet: a cover page of no class, a claim, a two-page letter."""

    def build() -> dict[str, PreparedJob]:
        put_policy()
        key = f"{PREFIX}cover.pdf"
        put_object(key, render_pdf_pages([RECIPE, CLAIM, LETTER, LETTER_ON], title="fax"))
        built = {
            name: prepare(f"job-cover-{name}", definition=definition(name), documents=[key])
            for name in HANDLINGS
        }
        built["case"] = prepare(
            "job-cover-case",
            definition=definition("ignore", {"requires": ["claim", "letter"]}),
            documents=[key],
        )
        return built

    return build_once("unclassified.jobs", build)


def run(job: PreparedJob) -> tuple[DocumentOutcome, PageReader]:
    [entry] = items(job)
    model = PageReader()
    return process_document(document_event(job, entry), FakeLambdaContext(), provider=model), model


def test_ignore_extracts_the_packet_by_its_classified_sections(jobs: dict[str, PreparedJob]) -> None:
    outcome, model = run(jobs["ignore"])
    assert (outcome.status, outcome.error) == ("extracted", None)
    assert model.asked == ["classify-pages", "extract", "extract"]  # no call for the cover page
    packet = s3_json.get_result("job-cover-ignore", "cover.pdf")
    assert packet is not None and packet.sections is not None
    assert [(s.section_id, s.class_name, s.status, s.ignored) for s in packet.sections] == [
        ("s0001-0001", None, "rejected", True),
        ("s0002-0002", "claim", "extracted", False),
        ("s0003-0004", "letter", "extracted", False),
    ]
    cover = s3_json.get_section_result("job-cover-ignore", "cover.pdf", "s0001-0001")
    assert cover is not None and cover.ignored and cover.error == "UnknownDocumentClass"
    assert cover.reason is not None and "ignored (unclassified_pages: ignore)" in cover.reason
    assert outcome.row is not None and review_items(outcome.row) == []
    assert "ignored" not in packet.sections[1].model_dump()  # a section not ignored dumps as before


def test_review_makes_the_cover_page_a_review_item_of_its_own(jobs: dict[str, PreparedJob]) -> None:
    outcome, model = run(jobs["review"])
    assert outcome.status == "review" and model.asked == ["classify-pages", "extract", "extract"]
    assert outcome.row is not None and review_items(outcome.row) == ["cover.pdf#s0001-0001"]
    cover = s3_json.get_section_result("job-cover-review", "cover.pdf", "s0001-0001")
    assert cover is not None
    assert (cover.status, cover.class_name, cover.fields, cover.error) == ("review", None, None, None)
    assert cover.reason is not None and cover.reason.startswith("pages 1-1 are of no known class")


def test_a_reviewer_clears_the_cover_page_and_the_packet_is_extracted(jobs: dict[str, PreparedJob]) -> None:
    outcome, _ = run(jobs["review"])
    outputs = {"BucketName": BUCKET, "StateMachineArn": STATE_MACHINE}
    context = OperatorContext(endpoint=None, stack_name="DocAgent", outputs=outputs, session=new_session())
    context._clients["stepfunctions"] = FinishedExecutions()
    records = JobRecords(context, "job-cover-review")
    [item] = queue(records)
    assert (item["item"], item["class_name"], item["pages"]) == ("cover.pdf#s0001-0001", None, [1, 1])
    decided = decide(records, "cover.pdf#s0001-0001", "accepted", typed={}, by="rita", reason="a cover sheet")
    assert decided.written and decided.decision.class_name is None
    assert outcome.row is not None
    [row] = apply_decisions("job-cover-review", [outcome.row], definition("review"))
    assert row.status == "extracted" and row.sections is not None
    assert [s.status for s in row.sections] == ["extracted", "extracted", "extracted"]


def test_reject_rejects_the_packet_as_before(jobs: dict[str, PreparedJob]) -> None:
    outcome, _ = run(jobs["reject"])
    assert (outcome.status, outcome.error) == ("rejected", "UnknownDocumentClass")
    assert outcome.row is not None and review_items(outcome.row) == []
    assert outcome.row.sections is not None
    assert [s.status for s in outcome.row.sections] == ["rejected", "extracted", "extracted"]


def test_an_ignored_section_counts_as_no_class_for_the_case(jobs: dict[str, PreparedJob]) -> None:
    outcome, _ = run(jobs["case"])
    packet = s3_json.get_result("job-cover-case", "cover.pdf")
    assert packet is not None and packet.case is not None
    assert (outcome.status, packet.case.status) == ("extracted", "extracted")
    assert [check.passed for check in packet.checks] == [True, True]


def test_the_setting_is_checked_and_not_dumped_when_unset() -> None:
    assert definition(None).definition.unclassified_pages is None and UNCLASSIFIED_DEFAULT == "review"
    assert "unclassified_pages" not in definition(None).definition.model_dump()
    assert definition("ignore").definition.model_dump()["unclassified_pages"] == "ignore"
    with pytest.raises(ValueError, match="unclassified_pages"):
        definition("skip")
