"""docagent definition validate against a packet's label (issue #53): sections that run past the document's
last page, a page in no section and overlapping sections are each one problem naming the label file, the place
and the fix; a page of no class is labelled as a section of class null."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from docagent.drills.scaffold import render_pdf_pages
from docagent.kit.problems import Problem
from docagent.kit.samples import document_pages, read_label
from docagent.kit.validate import validate
from tests.images import fax

CLAIMS = Path(__file__).resolve().parents[2] / "examples" / "claims"
LABEL = "samples/packet-0001.label.json"  # its PDF has 3 pages: a claim form (1) and a repair estimate (2-3)


@pytest.fixture
def claims(tmp_path: Path) -> Path:
    copy = tmp_path / "claims"
    shutil.copytree(CLAIMS, copy)
    return copy


def _label(folder: Path, pages: list[tuple[str | None, int, int]]) -> None:
    """The packet's label with these (class, first, last) sections, each of its labelled fields or none."""
    path = folder / LABEL
    fields = {s["class"]: s["fields"] for s in json.loads(path.read_text())["sections"]}
    sections: list[dict[str, Any]] = [
        {"class": name, "pages": [first, last], **({"fields": fields[name]} if name else {})}
        for name, first, last in pages
    ]
    path.write_text(json.dumps({"sections": sections}))


def _packet_problems(folder: Path) -> list[Problem]:
    return [problem for problem in validate(folder) if problem.file == LABEL]


def test_the_claims_packet_as_labelled_is_valid(claims: Path) -> None:
    assert validate(claims) == []
    assert document_pages((claims / "samples" / "packet-0001.pdf").read_bytes()) == 3


def test_a_section_past_the_last_page_is_named_with_the_pages_there_are(claims: Path) -> None:
    _label(claims, [("claim-form", 1, 1), ("repair-estimate", 2, 4)])
    [problem] = _packet_problems(claims)
    assert problem.where == "$.sections[1].pages"
    assert "pages 2-4 run past the document's last page, 3" in problem.message
    assert "end the section at page 3" in problem.fix
    assert problem.line().startswith(f"{LABEL}: $.sections[1].pages: ")


@pytest.mark.parametrize(
    ("sections", "where", "pages"),
    [
        ([("claim-form", 1, 1), ("repair-estimate", 3, 3)], "$.sections[1].pages", "page 2 is"),
        ([("claim-form", 1, 1)], "$.sections", "pages 2-3 are"),  # after the last section
        ([("repair-estimate", 2, 3)], "$.sections[0].pages", "page 1 is"),  # before the first
    ],
)
def test_a_page_in_no_section_is_a_gap_whose_fix_is_a_section_of_no_class(
    claims: Path, sections: list[tuple[str | None, int, int]], where: str, pages: str
) -> None:
    _label(claims, sections)
    [problem] = _packet_problems(claims)
    assert (problem.where, problem.message.split(" in no section")[0]) == (where, pages)
    assert '{"class": null, "pages": [' in problem.fix
    assert "folder" not in problem.fix and "CLASS/" not in problem.fix


def test_the_gap_fix_is_a_label_validate_accepts(claims: Path) -> None:
    _label(claims, [("claim-form", 1, 1), (None, 2, 2), ("repair-estimate", 3, 3)])
    assert validate(claims) == []


def test_overlapping_sections_are_named_with_a_fix_about_pages_not_folders(claims: Path) -> None:
    _label(claims, [("claim-form", 1, 2), ("repair-estimate", 2, 3)])
    [problem] = _packet_problems(claims)
    assert problem.where == "$.sections[1].pages"
    assert "pages 2-3 overlap the sections above, which cover pages 1-2" in problem.message
    assert problem.fix.startswith("start this section at page 3, or end the one above before page 2")


def test_sections_out_of_page_order_are_an_overlap_and_the_pages_left_a_gap(claims: Path) -> None:
    _label(claims, [("repair-estimate", 2, 3), ("claim-form", 1, 1)])
    assert [(p.where, p.message.split(":")[0]) for p in _packet_problems(claims)] == [
        ("$.sections[0].pages", "page 1 is in no section (the local model would refuse to classify it"),
        ("$.sections[1].pages", "pages 1-1 overlap the sections above, which cover pages 1-3"),
    ]


def test_the_local_model_and_eval_still_refuse_overlaps_and_take_gaps() -> None:
    """read_label (the local Bedrock's registration, eval) refuses overlapping sections as before; a gap is
    registered unlabelled (the local Bedrock refuses to classify its pages)."""
    overlapping = {"sections": [{"pages": [1, 2]}, {"pages": [2, 3]}]}
    assert read_label(overlapping) == (
        "section 2: pages 2-3 overlap the sections above, which cover pages 1-2: the sections are in page "
        "order and each page is in one"
    )
    assert not isinstance(read_label(overlapping, in_order=False), str)
    assert not isinstance(read_label({"sections": [{"pages": [1, 1]}, {"pages": [3, 3]}]}), str)


def test_a_tiff_fax_counts_its_pages_and_a_document_without_pages_is_not_counted() -> None:
    assert document_pages(fax(2)) == 2
    assert document_pages(render_pdf_pages(["one", "two", "three", "four"], title="t")) == 4
    assert document_pages(b"a,b\n1,2\n") is None


def test_an_unreadable_packet_document_is_named(claims: Path) -> None:
    (claims / "samples" / "packet-0001.pdf").write_bytes(b"%PDF-1.7\n" + b"\x00" * 64)
    problems = _packet_problems(claims)
    assert [p.message.split(",")[0] for p in problems] == ["its document packet-0001.pdf cannot be read"]
