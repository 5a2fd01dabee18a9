"""A definition's labelled samples: ``NAME.EXT`` with ``NAME.label.json`` beside it. The local Bedrock answers
from the labels (docagent/localcloud/bedrock/labels.py); ``docagent eval`` scores against them
(docagent/evaluation/labelled_sets.py); ``definition validate`` checks them (docagent/kit/validate.py).

A label is one of two JSON objects (docs/defining-a-job.md, "Samples and labels"):

- the document's fields, as its class's schema describes them; its class is the folder it sits in
  (``samples/CLASS/NAME.EXT``), or the definition's only class;
- ``{"class": "CLASS", "fields": {...}}``: the class said in the label, so a flat folder of several classes
  works; ``{"class": null}`` says the document is of no class (it ends ``UnknownDocumentClass``);
- ``{"sections": [{"class": CLASS, "pages": [FIRST, LAST], "fields": {...}}, ...]}``: a packet (a job that
  splits, job.json ``split: pages``), each section's class (null: pages of no class), pages (from 1) and
  fields; the sections cover every page of the document once, in order (``section_page_problems``: a page in
  no section is unlabelled, and the local Bedrock refuses to classify it). With ``"class": PACKET`` beside
  ``sections``: the packet is of that packet class (a class with ``split: pages``), which the document's
  classification answers.

An object whose keys are ``class`` and (optionally) ``fields`` and nothing else is the second form; one with
``sections`` (and optionally ``class``) the third. A document's fields (the first two forms) may carry
``"_evidence": {PATH: TEXT}``, the text of the document that supports a field (a summary's, a judgement's),
which the local model quotes for it (docagent/localcloud/bedrock/evidence.py); it is no field: ``quotes``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from functions.inference.evidence import EVIDENCE_KEY
from functions.reading.documents import CONVERSE_FORMATS, detect_format
from functions.reading.images import page_images
from functions.reading.pdf_pages import page_count, release
from functions.reading.sections import section_id

LABEL_SUFFIX = ".label.json"
SAMPLES_FOLDER = "samples"


@dataclass(frozen=True)
class SectionLabel:
    """A packet's labelled section: its class (None: of no class), its pages from 1, its fields."""

    class_name: str | None
    pages: tuple[int, int]
    fields: dict[str, Any]

    @property
    def section_id(self) -> str:
        """As functions/reading/sections.py names the section the job makes of these pages."""
        return section_id(*self.pages)


@dataclass(frozen=True)
class LabelContent:
    """What a label says: its fields, and its class when the label says one (``says_class``; ``class_name``
    None then means no class); a packet's label says its ``sections`` instead (no fields of its own)."""

    fields: dict[str, Any]
    says_class: bool = False
    class_name: str | None = None
    sections: tuple[SectionLabel, ...] = ()
    quotes: dict[str, str] = field(default_factory=dict)  # a field's supporting text, by path (``_evidence``)

    def class_in(self, folder_class: str | None, classes: Iterable[str]) -> tuple[str | None, str | None]:
        """(the sample's class, None for no class; or a problem): the label's own, else the folder's, else
        the only class."""
        known = list(classes)
        if self.says_class:
            if self.class_name is not None and self.class_name not in known:
                return None, f"class {self.class_name!r} is not one of the definition's ({', '.join(known)})"
            return self.class_name, None
        if folder_class is None and len(known) == 1:
            return known[0], None
        if folder_class not in known:
            return None, (
                f"with several classes ({', '.join(known)}) a sample sits in {SAMPLES_FOLDER}/CLASS/ or its "
                'label says its class: {"class": "CLASS", "fields": {...}}'
            )
        return folder_class, None


@dataclass(frozen=True)
class LabelledPart:
    """What a label labels: the document (``section`` None) or one section of a packet."""

    class_name: str | None
    fields: dict[str, Any]
    section: SectionLabel | None = None


def labelled_parts(
    content: LabelContent, folder_class: str | None, classes: Iterable[str]
) -> tuple[list[LabelledPart], str | None]:
    """(the parts a label labels, each of a class or of none; or a problem): the document itself, or each of
    a packet's sections (whose classes the label says)."""
    known = list(classes)
    if not content.sections:
        class_name, problem = content.class_in(folder_class, known)
        return ([] if problem else [LabelledPart(class_name, content.fields)]), problem
    if content.class_name is not None and content.class_name not in known:
        return [], f"packet class {content.class_name!r} is not one of the definition's ({', '.join(known)})"
    for section in content.sections:
        if section.class_name is not None and section.class_name not in known:
            return [], (
                f"section {section.section_id}: class {section.class_name!r} is not one of the definition's "
                f"({', '.join(known)})"
            )
    return [LabelledPart(section.class_name, section.fields, section) for section in content.sections], None


def read_label(data: Any, *, in_order: bool = True) -> LabelContent | str:
    """A label's JSON read (any form), or what is wrong with it; a packet's overlapping sections too, unless
    not ``in_order`` (``definition validate`` names them with ``section_page_problems``)."""
    if not isinstance(data, dict):
        return 'a label is a JSON object: the document\'s fields, or {"class": CLASS, "fields": {...}}'
    if "sections" in data and set(data) <= {"class", "sections"}:
        packet = _packet_label(data["sections"])
        overlaps = [] if isinstance(packet, str) or not in_order else section_page_problems(packet.sections)
        overlap = next((problem for problem in overlaps if problem.kind == "overlap"), None)
        if overlap is not None:
            return f"section {int(overlap.where[1]) + 1}: {overlap.message}"
        named = data.get("class")
        if isinstance(packet, str) or named is None:
            return packet
        if not isinstance(named, str):
            return "a packet's class is the name of its packet class (a class with split: pages)"
        return replace(packet, class_name=named)
    if "class" in data and set(data) <= {"class", "fields"}:
        named, fields = data["class"], data.get("fields", {})
        if named is not None and not isinstance(named, str):
            return "a label's class is a class name, or null for a document of no class"
        if not isinstance(fields, dict):
            return "a label's fields are a JSON object"
        if named is None and fields:
            return "a label of no class has no fields"
        quoted = _quoted(fields)
        if isinstance(quoted, str):
            return quoted
        return LabelContent(fields=quoted[0], says_class=True, class_name=named, quotes=quoted[1])
    quoted = _quoted(data)
    return quoted if isinstance(quoted, str) else LabelContent(fields=quoted[0], quotes=quoted[1])


def _quoted(fields: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]] | str:
    """A label's fields without their ``_evidence`` and its quotes by path, or what is wrong with them."""
    if EVIDENCE_KEY not in fields:
        return fields, {}
    given = fields[EVIDENCE_KEY]
    if not isinstance(given, dict) or not all(
        isinstance(text, str) and text.strip() for text in given.values()
    ):
        return (
            f"a label's \"{EVIDENCE_KEY}\" is an object: each field's path and the text of the document that "
            'supports it ({"summary": "She rebuilt our billing engine"})'
        )
    return {name: value for name, value in fields.items() if name != EVIDENCE_KEY}, dict(given)


def _packet_label(raw: Any) -> LabelContent | str:
    shape = 'a packet\'s label is {"sections": [{"class": CLASS, "pages": [FIRST, LAST], "fields": {...}}]}'
    if not isinstance(raw, list) or not raw:
        return shape
    sections: list[SectionLabel] = []
    for number, item in enumerate(raw, 1):
        if not isinstance(item, dict) or not set(item) <= {"class", "pages", "fields"} or "pages" not in item:
            return f"section {number}: {shape}"
        named, pages, fields = item.get("class"), item["pages"], item.get("fields", {})
        if named is not None and not isinstance(named, str):
            return f"section {number}: its class is a class name, or null for pages of no class"
        if not (
            isinstance(pages, list)
            and len(pages) == 2
            and all(isinstance(page, int) and not isinstance(page, bool) for page in pages)
            and 1 <= pages[0] <= pages[1]
        ):
            return f"section {number}: its pages are [FIRST, LAST], counted from 1, FIRST <= LAST"
        if not isinstance(fields, dict) or (named is None and fields):
            return f"section {number}: its fields are a JSON object (none for pages of no class)"
        sections.append(SectionLabel(class_name=named, pages=(pages[0], pages[1]), fields=fields))
    return LabelContent(fields={}, says_class=True, sections=tuple(sections))


@dataclass(frozen=True)
class PagesProblem:
    """A packet label's sections against its document's pages: where (in the label), what, and the fix."""

    kind: Literal["overlap", "gap", "past_end"]
    where: tuple[str | int, ...]
    message: str
    fix: str


def section_page_problems(sections: Sequence[SectionLabel], pages: int | None = None) -> list[PagesProblem]:
    """Where a packet label's sections are not its document's pages, each once and in order: a section that
    overlaps (or comes before) the one above it, a page in no section (a gap: the local Bedrock would refuse
    to classify it), a section past the document's last page (``pages``, when known)."""
    problems: list[PagesProblem] = []
    covered = 0  # the last page a section covers so far
    for index, section in enumerate(sections):
        first, last = section.pages
        where: tuple[str | int, ...] = ("sections", index, "pages")
        if first <= covered:
            problems.append(
                PagesProblem(
                    "overlap",
                    where,
                    f"pages {first}-{last} overlap the sections above, which cover pages 1-{covered}: the "
                    "sections are in page order and each page is in one",
                    f"start this section at page {covered + 1}, or end the one above before page {first} "
                    "(list the sections in page order)",
                )
            )
        elif first > covered + 1:
            problems.append(_gap(where, covered + 1, first - 1))
        if pages is not None and last > pages:
            problems.append(
                PagesProblem(
                    "past_end",
                    where,
                    f"pages {first}-{last} run past the document's last page, {pages}",
                    f"end the section at page {pages} at most (or label the document these pages are of)",
                )
            )
        covered = max(covered, last)
    if pages is not None and covered < pages:
        problems.append(_gap(("sections",), covered + 1, pages))
    return problems


def _gap(where: tuple[str | int, ...], first: int, last: int) -> PagesProblem:
    shown, them = (f"page {first} is", "it") if first == last else (f"pages {first}-{last} are", "them")
    return PagesProblem(
        "gap",
        where,
        f"{shown} in no section (the local model would refuse to classify {them}: DocumentNotLabelled)",
        f"add {them} to a section, or label {them} as a section of no class: "
        f'{{"class": null, "pages": [{first}, {last}]}}',
    )


def document_pages(data: bytes) -> int | None:
    """A sample document's pages as the job counts them (pypdf for a PDF, as a packet is split:
    functions/reading/pdf_pages.py; Pillow for an image's, a TIFF's frames: functions/reading/images.py), None
    for a format without pages; DocumentRejected when the job could not read it."""
    found = detect_format(data)
    if found == "pdf":
        try:
            return page_count(data)
        finally:
            release()
    return None if found in CONVERSE_FORMATS else len(page_images(data))


def label_problem(label: Any, schema: dict[str, Any]) -> str | None:
    """What is wrong with a label of a class of ``schema``, or None."""
    if not isinstance(label, dict):
        return "a label is a JSON object of the class's fields"
    known = set(schema.get("properties", {}))
    unknown = sorted(set(label) - known)
    if known and unknown:
        return f"fields not in the schema: {', '.join(unknown)} (known: {', '.join(sorted(known))})"
    return None


def label_path(sample: Path) -> Path:
    """``NAME.EXT`` -> ``NAME.label.json`` beside it (the local model's answer for that document)."""
    return sample.with_name(sample.name.split(".", 1)[0] + LABEL_SUFFIX)


def sample_documents(folder: Path) -> list[Path]:
    """The folder's samples that have a label (samples/NAME.EXT or samples/CLASS/NAME.EXT), in name order."""
    root = folder / SAMPLES_FOLDER
    if not root.is_dir():
        return []
    return sorted(
        path
        for path in root.rglob("*")
        if path.is_file() and not path.name.endswith(LABEL_SUFFIX) and label_path(path).is_file()
    )
