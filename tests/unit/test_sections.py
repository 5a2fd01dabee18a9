"""Packets, the parts that need no cloud (functions/reading/sections.py, functions/reading/pdf_pages.py, the
packet label of docagent/kit/samples.py and its registration in docagent/localcloud/bedrock/labels.py): page
answers become sections, a reply is renumbered into its window, a slice is the same bytes every time, a
packet's label is read (or refused naming what is wrong) and registered by its windows and sections."""

from __future__ import annotations

import hashlib
import io
import json

import pytest
from pypdf import PdfReader

from docagent.drills.scaffold import render_pdf_pages
from docagent.kit.samples import SectionLabel, labelled_parts, read_label
from docagent.localcloud.bedrock.converse_api import LocalBedrock
from docagent.localcloud.bedrock.labels import packet_labels
from functions.checks.fields import FieldsInvalid
from functions.errors import DocumentUnreadable
from functions.inference.instructions import classify_pages_instruction, extract_instruction
from functions.payloads.report import SectionRow
from functions.reading.pdf_pages import page_count, page_windows, slice_pages
from functions.reading.sections import PageClass, build_sections, packet_status, read_pages_reply


def answers(*pages: tuple[str | None, bool]) -> list[PageClass]:
    return [
        PageClass(page=number, class_name=name, starts=starts)
        for number, (name, starts) in enumerate(pages, 1)
    ]


def test_consecutive_pages_of_one_class_are_one_section_until_a_new_document_starts() -> None:
    found = build_sections(
        answers(("claim", True), ("claim", True), ("letter", True), ("letter", False), (None, False)), 6
    )
    assert [(s.section_id, s.class_name, s.pages) for s in found.sections] == [
        ("s0001-0001", "claim", (1, 1)),
        ("s0002-0002", "claim", (2, 2)),  # a new claim starts on page 2
        ("s0003-0004", "letter", (3, 4)),
        ("s0005-0006", None, (5, 6)),  # page 6 had no answer: of no class, as page 5
    ]
    assert found.pages == 6


def test_a_reply_is_renumbered_into_its_window_and_unknown_classes_are_none() -> None:
    reply = json.dumps(
        {
            "pages": [
                {"page": 1, "class": "claim", "starts": True},
                {"page": 2, "class": "memo"},
                {"page": 3, "class": "claim"},  # beyond the window 21-22: dropped
            ]
        }
    )
    assert read_pages_reply(reply, ["claim", "letter"], 21, 22) == {
        "pages": [
            {"page": 21, "class": "claim", "starts": True},
            {"page": 22, "class": None, "starts": False},
        ]
    }
    with pytest.raises(FieldsInvalid, match="page classification reply"):
        read_pages_reply('{"class": "claim"}', ["claim"], 1, 1)
    with pytest.raises(FieldsInvalid, match="is not a page answer"):
        read_pages_reply('{"pages": [{"page": 0}]}', ["claim"], 1, 1)


def row(section_id: str, status: str, error: str | None = None) -> SectionRow:
    return SectionRow.model_validate(
        {"section_id": section_id, "pages": [1, 1], "status": status, "error": error, "reason": "why"}
    )


def test_a_packet_is_its_worst_section() -> None:
    assert packet_status([row("s0001-0001", "extracted")]) == ("extracted", None, None)
    assert packet_status([row("s0001-0001", "extracted"), row("s0002-0002", "review")]) == (
        "review",
        None,
        "section s0002-0002 (pages 1-1): why",
    )
    rejected = packet_status(
        [row("s0001-0001", "review"), row("s0002-0002", "rejected", "UnknownDocumentClass")]
    )
    assert rejected[:2] == ("rejected", "UnknownDocumentClass")


PAGES = ["CLAIM one", "LETTER one", "LETTER two"]


def test_a_slice_is_the_same_bytes_every_time_and_every_page_is_the_document() -> None:
    data = render_pdf_pages(PAGES, title="packet")
    piece = slice_pages(data, 2, 3)
    assert piece == slice_pages(data, 2, 3)
    assert [page.extract_text() for page in PdfReader(io.BytesIO(piece)).pages] == PAGES[1:]
    assert slice_pages(data, 1, 3) is data
    assert page_count(data) == 3
    with pytest.raises(DocumentUnreadable, match="not within the PDF's 3 pages"):
        slice_pages(data, 2, 4)
    assert page_windows(45) == [(1, 20), (21, 40), (41, 45)]


def test_a_packet_label_is_read_or_refused_naming_the_problem() -> None:
    content = read_label(
        {
            "sections": [
                {"class": "claim", "pages": [1, 1], "fields": {"a": 1}},
                {"class": None, "pages": [3, 3]},
            ]
        }
    )
    assert not isinstance(content, str)
    assert [(s.class_name, s.pages, s.section_id) for s in content.sections] == [
        ("claim", (1, 1), "s0001-0001"),
        (None, (3, 3), "s0003-0003"),
    ]
    assert "page order" in str(read_label({"sections": [{"pages": [2, 2]}, {"pages": [1, 1]}]}))
    assert "[FIRST, LAST]" in str(read_label({"sections": [{"class": "claim", "pages": [2, 1]}]}))
    assert "no class" in str(read_label({"sections": [{"class": None, "pages": [1, 1], "fields": {"a": 1}}]}))
    assert "packet's label" in str(read_label({"sections": []}))


def test_a_packet_is_registered_by_its_window_and_its_sections_slices() -> None:
    data = render_pdf_pages(PAGES, title="packet")
    labels = packet_labels(data, [SectionLabel("claim", (1, 1), {"a": 1})], "packet.pdf")
    by_digest = {label.sha256: label for label in labels}
    window = by_digest[hashlib.sha256(data).hexdigest()]  # 3 pages: one window, the document itself
    assert [(p.page, p.class_name, p.starts) for p in window.page_answers(3)] == [(1, "claim", True)]
    assert window.unlabelled == [2, 3]  # the local Bedrock refuses to classify them (DocumentNotLabelled)
    claim = by_digest[hashlib.sha256(slice_pages(data, 1, 1)).hexdigest()]
    assert (claim.class_name, claim.fields, claim.pages) == ("claim", {"a": 1}, None)


def test_the_local_bedrock_answers_a_window_from_its_label_and_refuses_unlabelled_pages() -> None:
    data = render_pdf_pages(PAGES, title="packet")
    bedrock = LocalBedrock()
    bedrock.labels.add(packet_labels(data, [SectionLabel("claim", (1, 1), {"a": 1})], "packet.pdf"))
    window = classify_pages_instruction("document-00001", 1, 3)
    refused = bedrock.answer(window, hashlib.sha256(data).hexdigest(), "")
    assert isinstance(refused, tuple) and refused[0] == 400
    assert "no label for this document" in refused[2] and "(pages 2, 3)" in refused[2]
    claim = slice_pages(data, 1, 1)
    bedrock.labels.add(packet_labels(claim, [SectionLabel("claim", (1, 1), {"a": 1})], "claim.pdf"))
    answered = bedrock.answer(
        classify_pages_instruction("document-00001", 1, 1), hashlib.sha256(claim).hexdigest(), ""
    )
    assert json.loads(str(answered)) == {"pages": [{"page": 1, "class": "claim", "starts": True}]}
    extract = bedrock.answer(
        extract_instruction("claim", "document-00001"), hashlib.sha256(claim).hexdigest(), ""
    )
    assert json.loads(str(extract)) == {"a": 1}


def test_a_packet_label_may_name_its_packet_class_which_answers_the_packets_classification() -> None:
    content = read_label({"class": "bundle", "sections": [{"class": "claim", "pages": [1, 1], "fields": {}}]})
    assert not isinstance(content, str) and content.class_name == "bundle"
    assert labelled_parts(content, None, ["claim", "bundle"])[1] is None
    assert "packet class 'bundle' is not one of" in str(labelled_parts(content, None, ["claim"])[1])
    data = render_pdf_pages(PAGES, title="packet")
    labels = packet_labels(data, content.sections, "packet.pdf", content.class_name)
    whole = next(label for label in labels if label.sha256 == hashlib.sha256(data).hexdigest())
    assert whole.class_name == "bundle" and whole.pages is not None
