"""A reviewer's re-split of a packet (docs/design.md, "Review", "Re-splitting a packet").

The sections the model made may be wrong: a page of no class, a section rejected because its pages are not
one document, a boundary in the wrong place. A reviewer gives pages a class (``docagent review split``, the
console): each given section cuts the packet's sections it overlaps (what is left of one keeps its class).
The new split is a ``SplitDecision`` stored once beside the sections' decisions; the packet then re-runs only
what changed: a section is its pages and its class, so one of the new split that the packet had keeps its id
(its stored result, durable steps and model calls are reused), every other one is a new section
``s{first:04d}-{last:04d}-r1`` with durable steps of its own; then the case again (``case-r1``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from pydantic import BaseModel, ConfigDict, Field

from functions import s3_json, storage
from functions.checks.fields import row_columns
from functions.definition.job_spec import DefinitionBundle
from functions.payloads.common import DOCUMENT_ID_PATTERN, JOB_ID_PATTERN, StrictModel
from functions.payloads.job import JobOptions, ManifestEntry
from functions.payloads.report import ReportRow
from functions.reading.sections import REVISION, Section, Sections, page_classes, section_id

RESPLIT_ACTION = "resplit"
_READ_WORKERS = 16


class InvalidSplitError(ValueError):
    """A re-split that cannot be: pages outside the packet, overlapping, a class that is no page class, or
    nothing changed (the message says which)."""


class GivenSection(BaseModel):
    """Pages a reviewer gave a class (``--pages FIRST-LAST=CLASS``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    pages: tuple[int, int]
    class_name: str = Field(min_length=1)

    def text(self) -> str:
        first, last = self.pages
        return f"{first}-{last}={self.class_name}"


class SplitDecision(BaseModel):
    """jobs/{job_id}/reviews/{document_id}/split.json: a packet's sections as a reviewer set them."""

    model_config = ConfigDict(extra="forbid")

    decision_id: str = Field(pattern=r"^[0-9a-f]{32}$")
    job_id: str = Field(pattern=JOB_ID_PATTERN)
    document_id: str = Field(pattern=DOCUMENT_ID_PATTERN)
    given: list[GivenSection] = Field(min_length=1, description="the pages the reviewer gave a class")
    sections: list[Section] = Field(min_length=1, description="the packet's sections after the re-split")
    previous: list[Section] = Field(min_length=1, description="the packet's sections before it")
    kept: list[str] = Field(description="sections of both splits (their results are reused)")
    replaced: list[str] = Field(description="sections of the previous split that are gone")
    added: list[str] = Field(description="sections the re-split made (each processed again)")
    reason: str | None = None
    decided_by: str = Field(min_length=1)
    decided_at: str

    def same_decision(self, other: SplitDecision) -> bool:
        """The same split and reason (who and when aside): a repeated command or click."""
        return (self.given, self.reason) == (other.given, other.reason)


class ResplitEvent(StrictModel):
    """process_document's payload for a re-split packet (invoked by docagent/operations/resplit.py)."""

    action: str = Field(pattern=f"^{RESPLIT_ACTION}$")
    job_id: str = Field(pattern=JOB_ID_PATTERN)
    document: ManifestEntry
    options: JobOptions = Field(default_factory=JobOptions)


def split_decision_id(job_id: str, document_id: str) -> str:
    return hashlib.sha256(f"{job_id}\n{document_id}\nsplit".encode()).hexdigest()[:32]


def reviewed_section_id(first: int, last: int) -> str:
    """The id of a section a reviewer's re-split made."""
    return f"{section_id(first, last)}-{REVISION}"


def parse_given(text: str) -> GivenSection:
    """``FIRST[-LAST]=CLASS`` (``--pages``); InvalidSplitError when it is not."""
    pages, sep, class_name = text.partition("=")
    first, dash, last = pages.strip().partition("-")
    try:
        if not sep or not class_name.strip():
            raise ValueError
        numbers = (int(first), int(last) if dash else int(first))
    except ValueError:
        raise InvalidSplitError(f"--pages {text!r}: expected FIRST[-LAST]=CLASS (pages from 1)") from None
    return GivenSection(pages=numbers, class_name=class_name.strip())


def resplit(
    bundle: DefinitionBundle, previous: Sections, given: Sequence[GivenSection]
) -> tuple[list[Section], list[str], list[str], list[str]]:
    """The packet's sections after the reviewer's ``given`` ones, and which are kept, replaced and added. A
    given section cuts each section it overlaps; the rest of a cut section keeps its class (a section of its
    own). InvalidSplitError: pages outside the packet or given twice, no page class, no change."""
    classes = page_classes(bundle)
    owner: dict[int, tuple[str, int, str | None]] = {}  # page -> (whose, which, class)
    for index, old in enumerate(previous.sections):
        for page in range(old.pages[0], old.pages[1] + 1):
            owner[page] = ("old", index, old.class_name)
    taken: set[int] = set()
    for index, part in enumerate(given):
        first, last = part.pages
        if not 1 <= first <= last <= previous.pages:
            raise InvalidSplitError(
                f"pages {first}-{last} are not pages of the packet (pages 1-{previous.pages})"
            )
        if part.class_name not in classes:
            raise InvalidSplitError(
                f"{part.class_name!r} is no page class: the classes are {', '.join(classes)}"
            )
        given_pages = set(range(first, last + 1))
        if given_pages & taken:
            raise InvalidSplitError(f"pages {first}-{last} overlap pages given before: give each page once")
        taken |= given_pages
        owner.update({page: ("new", index, part.class_name) for page in given_pages})
    runs: list[tuple[int, int, tuple[str, int, str | None]]] = []  # first, last, owner
    for page in range(1, previous.pages + 1):
        if runs and runs[-1][2] == owner[page] and runs[-1][1] == page - 1:
            runs[-1] = (runs[-1][0], page, owner[page])
        else:
            runs.append((page, page, owner[page]))
    before = {(old.pages, old.class_name): old.section_id for old in previous.sections}
    sections = [
        Section(
            section_id=before.get(((first, last), whose[2])) or reviewed_section_id(first, last),
            class_name=whose[2],
            pages=(first, last),
        )
        for first, last, whose in runs
    ]
    ids = [section.section_id for section in sections]
    kept = [old.section_id for old in previous.sections if old.section_id in ids]
    if len(kept) == len(previous.sections) == len(sections):
        raise InvalidSplitError("the split changes no section: each page given already has that class there")
    replaced = [old.section_id for old in previous.sections if old.section_id not in ids]
    return sections, kept, replaced, [name for name in ids if name not in kept]


def split_rows(
    job_id: str, rows: list[ReportRow], bundle: DefinitionBundle | None, split: set[str]
) -> list[ReportRow]:
    """The rows with each re-split packet's (``split``: its document ids) taken from its stored result, the
    re-run's (one read per re-split packet)."""
    wanted = [row.document_id for row in rows if row.document_id in split]
    if not wanted:
        return rows
    with ThreadPoolExecutor(max_workers=min(_READ_WORKERS, len(wanted))) as pool:
        stored = dict(zip(wanted, pool.map(lambda doc: s3_json.get_result(job_id, doc), wanted), strict=True))
    replaced: list[ReportRow] = []
    for row in rows:
        result = stored.get(row.document_id)
        if result is None:
            replaced.append(row)
            continue
        columns = row_columns(bundle, result.class_name) if bundle is not None else []
        replaced.append(result.report_row(columns))
    return replaced


def split_documents(job_id: str, *, bucket: str | None = None, client: object = None) -> set[str]:
    """The documents with a re-split decision (one listing of reviews/)."""
    prefix = storage.reviews_prefix(job_id)
    keys = (obj["Key"] for obj in s3_json.list_objects(prefix, bucket=bucket, client=client))  # type: ignore[arg-type]
    return {document for key in keys if (document := storage.split_document_of_key(prefix, key)) is not None}


def load_split(job_id: str, document_id: str) -> SplitDecision | None:
    data = s3_json.get_json_or_none(storage.split_decision_key(job_id, document_id))
    return None if data is None else SplitDecision.model_validate(data)
