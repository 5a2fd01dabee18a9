"""Split accuracy (docs/evaluation.md, "The figures"): how well a job split its packets into their labelled
sections.

A labelled packet's sections (its samples with ``pages``) are compared with the sections the job made
(the packet's result's ``sections``; a packet the job read as one document: one section of every page):
a labelled section is *matched* when the job has a section of the same pages and class. A *boundary* is a
page where a section starts (page 1 aside): a labelled boundary the job did not make is missed, one the job
made that the label does not have is spurious; both are boundary errors. Precision and recall are
page-level: the boundaries found that are labelled over those found, over those labelled.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from functions.payloads.document import DocumentResult

Part = tuple[int, int, str | None]  # first page, last page, class


class Labelled(Protocol):
    """A labelled sample as splitting reads it (docagent/evaluation/labelled_sets.py ``LabelledSample``, which
    reads figures.py, which holds SplitFigures)."""

    pages: tuple[int, int] | None
    class_name: str | None

    @property
    def document(self) -> str: ...


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PacketSplitError(_Model):
    """A packet the job split otherwise than its label."""

    packet: str
    labelled: list[Part]
    found: list[Part] = Field(description="the job's sections (none: no result for the packet)")
    missed: list[int] = Field(description="labelled boundaries (a section's first page) the job did not make")
    spurious: list[int] = Field(description="boundaries the job made that the label does not have")


class SplitFigures(_Model):
    """The packets' splitting, over every labelled packet of the set."""

    packets: int
    sections_labelled: int
    sections_matched: int = Field(description="labelled sections the job made with the same pages and class")
    boundaries_labelled: int
    boundaries_found: int
    boundary_errors: int = Field(description="missed and spurious boundaries")
    boundary_precision: float
    boundary_recall: float
    errors: list[PacketSplitError] = Field(description="the packets split wrong, by name")


def _starts(parts: Sequence[Part]) -> set[int]:
    return {first for first, _, _ in parts if first != 1}


def found_parts(result: DocumentResult | None, pages: int) -> list[Part]:
    """The sections the job made of a packet: its result's, or one of every page (read as one document)."""
    if result is None:
        return []
    if result.sections is None:
        return [(1, pages, result.class_name)]
    return [(row.pages[0], row.pages[1], row.class_name) for row in result.sections]


def split_figures(samples: Sequence[Labelled], results: Sequence[DocumentResult]) -> SplitFigures | None:
    """The split accuracy of the set's packets (None: the set labels no packet)."""
    labelled: dict[str, list[Part]] = defaultdict(list)
    for sample in samples:
        if sample.pages is not None:
            labelled[sample.document].append((*sample.pages, sample.class_name))
    if not labelled:
        return None
    matched = found_total = right_total = errors_total = 0
    errors: list[PacketSplitError] = []
    for packet, parts in sorted(labelled.items()):
        parts.sort()
        result = next((r for r in results if r.key == packet or r.key.endswith("/" + packet)), None)
        found = found_parts(result, max(last for _, last, _ in parts))
        matched += len(set(parts) & set(found))
        want, have = _starts(parts), _starts(found)
        found_total += len(have)
        right_total += len(want & have)
        missed, spurious = sorted(want - have), sorted(have - want)
        errors_total += len(missed) + len(spurious)
        if found != parts:
            errors.append(
                PacketSplitError(packet=packet, labelled=parts, found=found, missed=missed, spurious=spurious)
            )
    boundaries = sum(len(_starts(parts)) for parts in labelled.values())
    return SplitFigures(
        packets=len(labelled),
        sections_labelled=sum(len(parts) for parts in labelled.values()),
        sections_matched=matched,
        boundaries_labelled=boundaries,
        boundaries_found=found_total,
        boundary_errors=errors_total,
        boundary_precision=round(right_total / found_total, 4) if found_total else 1.0,
        boundary_recall=round(right_total / boundaries, 4) if boundaries else 1.0,
        errors=errors,
    )


def split_lines(figures: SplitFigures) -> list[str]:
    """The figures as the eval's printout and report say them."""
    lines = [
        f"splitting: {figures.sections_matched} of {figures.sections_labelled} labelled sections matched in "
        f"{figures.packets} packet(s); boundaries precision {figures.boundary_precision:.3f}, recall "
        f"{figures.boundary_recall:.3f}, {figures.boundary_errors} boundary error(s)"
    ]
    for error in figures.errors:
        found = (
            ", ".join(f"{first}-{last} {name or 'no class'}" for first, last, name in error.found) or "none"
        )
        lines.append(
            f"split {error.packet}: found {found}; missed boundaries {error.missed or 'none'}, spurious "
            f"{error.spurious or 'none'}"
        )
    return lines
