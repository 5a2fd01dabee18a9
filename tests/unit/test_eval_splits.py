"""Split accuracy in eval (docagent/evaluation/splits.py; docs/evaluation.md): a packet's labelled sections
against the sections the job made: sections matched by pages and class, page-level boundary precision and
recall, each packet split wrong named with its missed and spurious boundaries."""

from __future__ import annotations

from pathlib import Path

from docagent.evaluation.labelled_sets import LabelledSample
from docagent.evaluation.splits import split_figures, split_lines
from functions.payloads.document import DocumentResult
from functions.payloads.report import SectionRow
from tests.unit.test_section_review import result


def sample(packet: str, section: str, pages: tuple[int, int], class_name: str | None) -> LabelledSample:
    return LabelledSample(
        name=f"{packet}#{section}", path=Path(packet), class_name=class_name, label={}, pages=pages
    )


def packet(name: str, parts: list[tuple[int, int, str | None]]) -> DocumentResult:
    rows = [
        SectionRow(
            section_id=f"s{first:04d}-{last:04d}", pages=(first, last), status="extracted", class_name=cls
        )
        for first, last, cls in parts
    ]
    return result(name, 0, "extracted", sections=rows)


LABELLED = [
    sample("a.pdf", "s0001-0001", (1, 1), "claim-form"),
    sample("a.pdf", "s0002-0003", (2, 3), "repair-estimate"),
    sample("b.pdf", "s0001-0002", (1, 2), "claim-form"),
    sample("b.pdf", "s0003-0003", (3, 3), None),
]


def test_a_split_as_labelled_matches_every_section_with_no_boundary_error() -> None:
    results = [
        packet("a.pdf", [(1, 1, "claim-form"), (2, 3, "repair-estimate")]),
        packet("b.pdf", [(1, 2, "claim-form"), (3, 3, None)]),
    ]
    figures = split_figures(LABELLED, results)
    assert figures is not None
    assert (figures.packets, figures.sections_labelled, figures.sections_matched) == (2, 4, 4)
    assert (figures.boundary_errors, figures.boundary_precision, figures.boundary_recall) == (0, 1.0, 1.0)
    assert figures.errors == []


def test_a_moved_boundary_and_a_merge_are_counted_and_named() -> None:
    results = [
        packet("a.pdf", [(1, 2, "claim-form"), (3, 3, "repair-estimate")]),  # the boundary a page later
        result("b.pdf", 1, "extracted", class_name="claim-form", fields={}),  # read as one document
    ]
    figures = split_figures(LABELLED, results)
    assert figures is not None
    assert figures.sections_matched == 0
    # labelled boundaries: a.pdf 2, b.pdf 3; found: a.pdf 3 only
    assert (figures.boundaries_labelled, figures.boundaries_found, figures.boundary_errors) == (2, 1, 3)
    assert (figures.boundary_precision, figures.boundary_recall) == (0.0, 0.0)
    a, b = figures.errors
    assert (a.packet, a.missed, a.spurious) == ("a.pdf", [2], [3])
    assert (b.found, b.missed, b.spurious) == ([(1, 3, "claim-form")], [3], [])
    lines = split_lines(figures)
    assert lines[0] == (
        "splitting: 0 of 4 labelled sections matched in 2 packet(s); boundaries precision 0.000, "
        "recall 0.000, 3 boundary error(s)"
    )
    assert lines[1] == (
        "split a.pdf: found 1-2 claim-form, 3-3 repair-estimate; missed boundaries [2], spurious [3]"
    )


def test_a_set_without_packets_has_no_split_figures() -> None:
    plain = LabelledSample(name="c.txt", path=Path("c.txt"), class_name="claim-form", label={})
    assert split_figures([plain], []) is None
