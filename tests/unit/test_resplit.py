"""A reviewer's re-split of a packet (functions/resplit.py; docs/design.md "Re-splitting a packet"): the plan
(which sections are kept, replaced, added; what is refused) and, on moto, the packet's re-run, which calls the
model only for the sections the re-split added and writes the packet's result again; the report and the
review queue take a re-split packet's row from its stored result."""

from __future__ import annotations

import json
import re

import pytest

from docagent.localcloud.bedrock.model_faults import ModelFaults, parse_model_faults
from functions import s3_json, storage
from functions.logic.process_document import process_document
from functions.logic.resplit_packet import resplit_packet
from functions.payloads.job import PreparedJob
from functions.payloads.report import ReportRow
from functions.reading.sections import PageClass, Section, Sections, build_sections
from functions.resplit import (
    RESPLIT_ACTION,
    GivenSection,
    InvalidSplitError,
    ResplitEvent,
    SplitDecision,
    parse_given,
    resplit,
    split_decision_id,
    split_documents,
    split_rows,
)
from functions.reviews import apply_decisions
from tests.fakes import FakeLambdaContext
from tests.moto_state import build_once
from tests.support import PREFIX, document_event, prepare, put_object
from tests.unit.test_packets import (
    CLAIM,
    LETTER,
    LETTER_ON,
    RECIPE,
    PageReader,
    entry_of,
    put_policy,
    splitting,
)

JOB, PACKET = "job-resplit", "a-packet.pdf"
# The packet as the model split it: a claim, a two-page letter, a page of no class.
PREVIOUS = Sections(
    pages=4,
    sections=[
        Section(section_id="s0001-0001", class_name="claim", pages=(1, 1)),
        Section(section_id="s0002-0003", class_name="letter", pages=(2, 3)),
        Section(section_id="s0004-0004", class_name=None, pages=(4, 4)),
    ],
)


def given(*texts: str) -> list[GivenSection]:
    return [parse_given(text) for text in texts]


def plan(*texts: str) -> list[tuple[str, str | None, tuple[int, int]]]:
    sections, *_ = resplit(splitting(), PREVIOUS, given(*texts))
    return [(section.section_id, section.class_name, section.pages) for section in sections]


def test_giving_a_page_of_no_class_a_class_adds_that_section_alone() -> None:
    sections, kept, replaced, added = resplit(splitting(), PREVIOUS, given("4=letter"))
    assert [section.section_id for section in sections] == ["s0001-0001", "s0002-0003", "s0004-0004-r1"]
    assert (kept, replaced, added) == (["s0001-0001", "s0002-0003"], ["s0004-0004"], ["s0004-0004-r1"])


def test_moving_a_boundary_cuts_the_section_it_crosses_and_the_rest_keeps_its_class() -> None:
    assert plan("3-4=letter") == [
        ("s0001-0001", "claim", (1, 1)),
        ("s0002-0002-r1", "letter", (2, 2)),  # what is left of the letter: a section of its own
        ("s0003-0004-r1", "letter", (3, 4)),
    ]
    assert plan("1-2=claim") == [
        ("s0001-0002-r1", "claim", (1, 2)),
        ("s0003-0003-r1", "letter", (3, 3)),
        ("s0004-0004", None, (4, 4)),
    ]
    # two given sections of one class side by side stay two documents (two letters back to back)
    assert plan("2=letter", "3=letter")[1:3] == [
        ("s0002-0002-r1", "letter", (2, 2)),
        ("s0003-0003-r1", "letter", (3, 3)),
    ]


@pytest.mark.parametrize(
    ("texts", "says"),
    [
        (["1=claim"], "the split changes no section"),
        (["4-5=letter"], "pages 4-5 are not pages of the packet (pages 1-4)"),
        (["4=recipe"], "'recipe' is no page class: the classes are claim, letter"),
        (["2-3=letter", "3-4=claim"], "pages 3-4 overlap pages given before"),
    ],
)
def test_a_split_that_cannot_be_is_refused_naming_why(texts: list[str], says: str) -> None:
    with pytest.raises(InvalidSplitError, match=re.escape(says)):
        resplit(splitting(), PREVIOUS, given(*texts))


@pytest.mark.parametrize("text", ["4", "=letter", "a-b=letter", "4=", "4-x=letter"])
def test_pages_not_first_last_class_are_refused(text: str) -> None:
    with pytest.raises(InvalidSplitError, match="expected FIRST\\[-LAST\\]=CLASS"):
        parse_given(text)


# ------------------------------------------------------------------------------------------ the re-run


@pytest.fixture
def job(cloud: None) -> PreparedJob:
    def build() -> PreparedJob:
        put_policy()
        put_object(f"{PREFIX}{PACKET}", render_packet())
        return prepare(JOB, definition=splitting())

    return build_once("resplit.job", build)


def render_packet() -> bytes:
    from docagent.drills.scaffold import render_pdf_pages  # noqa: PLC0415

    return render_pdf_pages([CLAIM, LETTER, LETTER_ON, RECIPE], title="p")


def store_split(texts: list[str]) -> SplitDecision:
    sections, kept, replaced, added = resplit(splitting(), PREVIOUS, given(*texts))
    decision = SplitDecision(
        decision_id=split_decision_id(JOB, PACKET),
        job_id=JOB,
        document_id=PACKET,
        given=given(*texts),
        sections=sections,
        previous=PREVIOUS.sections,
        kept=kept,
        replaced=replaced,
        added=added,
        decided_by="rita",
        decided_at="2026-12-07T17:30:00Z",
    )
    s3_json.put_json(storage.split_decision_key(JOB, PACKET), decision)
    return decision


def test_the_re_run_calls_the_model_only_for_the_sections_the_split_added(job: PreparedJob) -> None:
    model = PageReader()
    entry = entry_of(job, PACKET)
    first = process_document(document_event(job, entry), FakeLambdaContext(), provider=model)
    assert first.status == "review" and model.asked == ["classify-pages", "extract", "extract"]
    claim = s3_json.get_section_result(JOB, PACKET, "s0001-0001")

    store_split(["2-4=letter"])  # the page of no class is the letter's last page
    event = ResplitEvent(action=RESPLIT_ACTION, job_id=JOB, document=entry)
    outcome = resplit_packet(event, FakeLambdaContext(), provider=model)
    # the page classification answered from its durable record, the claim from its stored result
    assert model.asked == ["classify-pages", "extract", "extract", "extract"]
    assert (outcome.status, outcome.error) == ("extracted", None)
    packet = s3_json.get_result(JOB, PACKET)
    assert packet is not None and packet.sections is not None
    assert [(s.section_id, s.class_name, s.pages, s.status) for s in packet.sections] == [
        ("s0001-0001", "claim", (1, 1), "extracted"),
        ("s0002-0004-r1", "letter", (2, 4), "extracted"),
    ]
    assert s3_json.get_section_result(JOB, PACKET, "s0001-0001") == claim  # not processed again
    letter = s3_json.get_section_result(JOB, PACKET, "s0002-0004-r1")
    assert letter is not None and letter.fields == {"sender": "Ada"} and letter.pages == (2, 4)
    calls = s3_json.list_model_calls(JOB, PACKET)
    assert sorted((c.purpose, c.section_id) for c in calls) == [
        ("classify-pages", "w0001"),
        ("extract", "s0001-0001"),
        ("extract", "s0002-0003"),
        ("extract", "s0002-0004-r1"),
    ]

    again = resplit_packet(event, FakeLambdaContext(), provider=model)  # a retried invocation
    assert again.status == "extracted" and len(model.asked) == 4

    # the report and the queue take the packet's row from its stored result, not the Map's first outcome
    assert first.row is not None and split_documents(JOB) == {PACKET}
    [row] = split_rows(JOB, [first.row], splitting(), {PACKET})
    assert row.status == "extracted" and [s.section_id for s in row.sections or []] == [
        "s0001-0001",
        "s0002-0004-r1",
    ]
    other = ReportRow(document_id="other.pdf", index=9, key="incoming/other.pdf", status="review")
    applied = apply_decisions(JOB, [first.row, other], splitting())
    assert [(found.document_id, found.status) for found in applied] == [
        (PACKET, "extracted"),
        ("other.pdf", "review"),
    ]


def test_a_re_run_without_a_decision_is_refused(job: PreparedJob) -> None:
    event = ResplitEvent(action=RESPLIT_ACTION, job_id=JOB, document=entry_of(job, PACKET))
    with pytest.raises(Exception, match="has no re-split decision"):
        resplit_packet(event, FakeLambdaContext(), provider=PageReader())


# --------------------------------------------------------------------- the local model's split faults


def answers(*classes: str | None) -> str:
    """A classify-pages reply: each page its class, ``starts`` where the class changes."""
    pages = [
        {"page": n, "class": name, "starts": n == 1 or name != classes[n - 2]}
        for n, name in enumerate(classes, 1)
    ]
    return json.dumps({"pages": pages})


def split_of(reply: str) -> list[tuple[str | None, int, int]]:
    found = build_sections([PageClass.model_validate(page) for page in json.loads(reply)["pages"]], 4)
    return [(section.class_name, *section.pages) for section in found.sections]


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("unplace", [("claim", 1, 1), ("letter", 2, 3), (None, 4, 4)]),
        ("boundary", [("claim", 1, 2), ("letter", 3, 4)]),
        ("merge", [("claim", 1, 4)]),
    ],
)
def test_a_split_fault_makes_the_sections_wrong_as_it_says(kind: str, expected: list[object]) -> None:
    reply = answers("claim", "letter", "letter", "letter")
    assert split_of(reply) == [("claim", 1, 1), ("letter", 2, 4)]
    assert split_of(parse_model_faults(f"split={kind}").wrong_split(reply, 0.5)) == expected
    assert parse_model_faults(f"split={kind}:0.2").wrong_split(reply, 0.5) == reply  # not drawn
    assert ModelFaults().wrong_split(reply, 0.0) == reply


def test_a_split_fault_must_name_its_kind() -> None:
    with pytest.raises(ValueError, match="split"):
        parse_model_faults("split=shuffle")
