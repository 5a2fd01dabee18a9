"""Packets (job.json ``split: pages``; docs/design.md, "Packets"): a PDF or a TIFF that may hold several
documents is classified page by page (one durable model step per window of pages), its consecutive pages of
one class become *sections*, and each section is processed as a document of its own: its own durable steps,
outcome and stored result (``storage.section_result_key``). The packet's own result, written last, lists
them.

A redrive re-runs only what is unfinished: the page classification and the sections are durable steps, and a
section with a stored result is not processed again. A packet of one section covering every page is the
document itself (process_document goes on as for any document, its class the section's).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from functions import s3_json, spend
from functions.batch_inference.output_records import BatchReplies
from functions.checks.cases import case_of
from functions.checks.fields import FieldsInvalid, parse_reply, row_columns
from functions.definition.job_spec import UNKNOWN_CLASS_ERROR, DefinitionBundle, UnclassifiedPages
from functions.durability.faults import fault_point
from functions.errors import DocumentFormatUnsupported, DocumentRejected, ExtractionFailed
from functions.inference import ModelProvider
from functions.inference.calls import CallSpec
from functions.inference.instructions import classify_pages_instruction
from functions.inference.prompts import PAGES_KEY, classify_pages_prompt
from functions.logic.window_extraction import WindowClock
from functions.payloads.common import DocumentStatus
from functions.payloads.document import DocumentOutcome, DocumentResult, ProcessDocumentEvent
from functions.payloads.job import JobManifest
from functions.payloads.model_calls import ExtractionRecord
from functions.payloads.report import CaseOutcome, SectionRow
from functions.reading.documents import DocumentInput, document_input
from functions.reading.page_windows import ImageSlicer, PageWindow
from functions.reading.pdf_layers import ReadMode
from functions.reading.pdf_pages import page_windows, slice_pages

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

ResultT = TypeVar("ResultT", bound=BaseModel)

SECTIONS_STEP = "sections"
# A section's id: its first and last page (``section_id``), as its result, its review item and eval name it;
# ``-r1``: a section a reviewer's re-split made (functions/resplit.py); its identity: its pages and class.
SECTION_ID_PATTERN = r"^s[0-9]{4}-[0-9]{4}(-r1)?$"
REVISION = "r1"  # a packet is re-split once
# A packet's section of no class when job.json sets no ``unclassified_pages`` (docs/design.md).
UNCLASSIFIED_DEFAULT: UnclassifiedPages = "review"
# A packet's status is its worst section's: rejected over review over extracted.
_SEVERITY: dict[DocumentStatus, int] = {"extracted": 0, "review": 1, "rejected": 2}


class PageClass(BaseModel):
    """One page's answer: its class (None: of no class) and whether a new document starts on it."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True, serialize_by_alias=True)

    page: int = Field(ge=1)
    class_name: str | None = Field(None, alias="class")
    starts: bool = False


class Section(BaseModel):
    """Consecutive pages of one class (from 1, inclusive)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    section_id: str = Field(pattern=SECTION_ID_PATTERN)
    class_name: str | None
    pages: tuple[int, int]


class Sections(BaseModel):
    """The durable ``sections`` step's result: a packet's pages and its sections, in page order."""

    model_config = ConfigDict(extra="forbid")

    pages: int = Field(ge=1)
    sections: list[Section] = Field(min_length=1)


def section_id(first: int, last: int) -> str:
    return f"s{first:04d}-{last:04d}"


def window_id(first: int) -> str:
    """The journal's ``section_id`` of a page-classification call: its window's first page."""
    return f"w{first:04d}"


def page_count(document: DocumentInput) -> int:
    """The pages a packet's split counts: a PDF's, a TIFF's (its converted pages:
    functions/reading/images.py); 0 for a format that is not split (one document)."""
    if document.format == "pdf":
        return document.pages
    return len(document.images) if document.format == "tiff" else 0


def splits(bundle: DefinitionBundle, document: DocumentInput) -> bool:
    """True when ``document`` is read as a possible packet: the job splits (job.json ``split: pages``) and
    it is a PDF or a TIFF (other formats are one document)."""
    return bundle.definition.split == "pages" and page_count(document) > 0


def is_packet_class(bundle: DefinitionBundle, class_name: str) -> bool:
    """True when a document of ``class_name`` is a packet of documents of the other classes (the class's
    ``split: pages``)."""
    spec = bundle.definition.classes.get(class_name)
    return spec is not None and spec.split == "pages"


def page_classes(bundle: DefinitionBundle) -> list[str]:
    """The classes a packet's pages are of: every class but the packet classes."""
    return [name for name, spec in bundle.definition.classes.items() if spec.split is None]


def read_pages_reply(reply: str, classes: Sequence[str], first: int, last: int) -> dict[str, JsonValue]:
    """A page-classification reply as ``{"pages": [{"page", "class", "starts"}]}``, its pages renumbered from
    the window's ``first`` (the reply counts from 1 in the attached block); a page outside the window is
    dropped, a class not among ``classes`` is no class. FieldsInvalid when it is not such a reply."""
    data = parse_reply(reply)
    raw = data.get(PAGES_KEY)
    if not isinstance(raw, list):
        raise FieldsInvalid(f'a page classification reply is {{"{PAGES_KEY}": [...]}}, got {reply[:200]!r}')
    answers: dict[int, PageClass] = {}
    for item in raw:
        try:
            answer = PageClass.model_validate(item)
        except ValidationError as error:
            raise FieldsInvalid(
                f"a page of the reply is not a page answer (page, class, starts): {error}"
            ) from None
        page = answer.page + first - 1
        if page > last or page in answers:
            continue
        known = answer.class_name if answer.class_name in classes else None
        answers[page] = PageClass(page=page, class_name=known, starts=answer.starts)
    return {PAGES_KEY: [answers[page].model_dump(mode="json") for page in sorted(answers)]}


def build_sections(answers: Sequence[PageClass], pages: int) -> Sections:
    """Consecutive pages of one class without a ``starts`` become one section; a page with no answer is of
    no class."""
    by_page = {answer.page: answer for answer in answers}
    runs: list[list[Any]] = []  # [first, last, class]
    for page in range(1, pages + 1):
        answer = by_page.get(page, PageClass(page=page))
        if runs and runs[-1][2] == answer.class_name and not answer.starts:
            runs[-1][1] = page
        else:
            runs.append([page, page, answer.class_name])
    return Sections(
        pages=pages,
        sections=[
            Section(section_id=section_id(first, last), class_name=name, pages=(first, last))
            for first, last, name in runs
        ],
    )


def packet_status(
    rows: Sequence[SectionRow], case: CaseOutcome | None = None
) -> tuple[DocumentStatus, str | None, str | None]:
    """A packet's status (its worst section's, or its case's when worse: functions/checks/cases.py), error
    (its first rejected section's, else its case's) and reason (the worst section's, and the case's when as
    bad). An ignored section (job.json ``unclassified_pages: ignore``) decides nothing, unless all are."""
    counted = [row for row in rows if not row.ignored] or rows
    worst = max(counted, key=lambda row: _SEVERITY[row.status])
    status, error, reason = worst.status, None, None
    if worst.status != "extracted":
        where = f"section {worst.section_id} (pages {worst.pages[0]}-{worst.pages[1]})"
        status, reason = worst.status, f"{where}: {worst.reason}"
        error = worst.error if worst.status == "rejected" else None
    if case is None or case.status == "extracted" or _SEVERITY[case.status] < _SEVERITY[status]:
        return status, error, reason
    if _SEVERITY[case.status] > _SEVERITY[status]:
        return case.status, case.error, case.reason
    return status, error or case.error, f"{reason}; {case.reason}"


# ------------------------------------------------------------------------------------------- the flow


class PacketRun(Protocol):
    """What of process_document's run a packet uses (functions/logic/process_document.py ``DocumentRun``)."""

    event: ProcessDocumentEvent
    context: LambdaContext
    manifest: JobManifest
    bundle: DefinitionBundle | None
    ids: dict[str, str]
    calls: list[ExtractionRecord]
    ran: set[str]

    def result(self, **fields: object) -> DocumentResult: ...

    def store(self, **fields: object) -> DocumentOutcome: ...

    def step(self, name: str, fn: Callable[[], ResultT], result_model: type[ResultT]) -> ResultT: ...

    def time_left(self) -> float: ...

    def model_step(
        self, spec: CallSpec, document: DocumentInput | Callable[[], DocumentInput], model: ModelProvider
    ) -> ExtractionRecord: ...

    def extracted(
        self,
        class_name: str,
        classify_call_id: str | None,
        document: DocumentInput,
        model: ModelProvider,
        *,
        section_id: str | None = None,
    ) -> dict[str, object]: ...


@dataclass(frozen=True)
class PacketSplit:
    """What became of a possible packet: ``outcome`` (stored: rejected, or several sections), else one
    section covering every page, processed on as the document (``class_name``)."""

    outcome: DocumentOutcome | None
    class_name: str = ""
    classify_call_id: str | None = None


def classify_pages_spec(
    bundle: DefinitionBundle, prompt_version: str, document: DocumentInput, first: int, last: int
) -> CallSpec:
    """The classification of pages ``first`` to ``last`` of ``document`` (its window's slice keeps its
    name)."""
    classes = page_classes(bundle)
    return CallSpec(
        purpose="classify-pages",
        class_name=None,
        system=classify_pages_prompt(bundle),
        user=classify_pages_instruction(document.name, first, last),
        prompt_version=prompt_version,
        read=lambda reply: read_pages_reply(reply, classes, first, last),
        section_id=window_id(first),
    )


def pages_of(document: DocumentInput, first: int, last: int, read: ReadMode) -> DocumentInput:
    """Pages ``first`` to ``last`` of a PDF (read as the job reads PDFs) or a TIFF (its pages' image blocks,
    the first noting the source and the pages, as a TIFF's page window: functions/reading/page_windows.py) as
    the model receives them."""
    total = page_count(document)
    if (first, last) == (1, total):
        return document
    if document.format == "tiff":
        window = PageWindow(first, last, total)
        return ImageSlicer(document, hashlib.sha256(document.data).hexdigest()).slice(window)
    return document_input(slice_pages(document.data, first, last), document.name, read)


def on_demand(model: ModelProvider) -> ModelProvider:
    """The model a packet's calls go to: on demand, never a batch job's record (functions/batch_inference/
    output_records.py ``BatchReplies``), which answers a whole document's extraction, not a part of it."""
    return model.on_demand if isinstance(model, BatchReplies) else model


def split_packet(
    run: PacketRun, document: DocumentInput, model: ModelProvider, chosen: Sections | None = None
) -> PacketSplit:
    """Classify a PDF's or a TIFF's pages (durably, window by window), make its sections (durably), and
    process each section not processed yet; the packet's result stored when it has several sections.
    ``chosen``: the sections a reviewer's re-split set (functions/resplit.py), in place of the ``sections``
    step's, and the case checked again as its own step (``case-r1``)."""
    bundle = run.bundle
    assert bundle is not None
    model = on_demand(model)
    total = page_count(document)
    if total < 1:  # a document of a packet class that is no PDF or TIFF
        what = f"a packet is split by its pages, and only a PDF's or a TIFF's are: this is {document.format}"
        return PacketSplit(
            run.store(status="rejected", error=DocumentFormatUnsupported.__name__, reason=what)
        )
    records: list[ExtractionRecord] = []
    clock = WindowClock(run.time_left)
    try:
        for first, last in page_windows(total):
            clock.before(f"pages {first}-{last}")
            spec = classify_pages_spec(bundle, run.manifest.versions.prompt_version, document, first, last)
            # the window's pages are sliced only when its step runs: a window classified in an earlier
            # invocation costs its step's record, not a slice (functions/reading/pdf_pages.py reads the PDF
            # once)
            window = functools.partial(pages_of, document, first, last, bundle.definition.read)
            record = run.model_step(spec, window, model)
            clock.after(called=spec.journal_name in run.ran)
            if not record.ok or record.fields is None:
                return PacketSplit(
                    run.store(
                        status="rejected",
                        error=record.error or ExtractionFailed.__name__,
                        reason=f"pages {first}-{last}: {record.reason}",
                        classify_call_id=record.call_id,
                    )
                )
            records.append(record)
    except DocumentRejected as rejection:
        return PacketSplit(run.store(status="rejected", error=rejection.error_name, reason=rejection.reason))
    call_id = records[0].call_id
    found = chosen or run.step(SECTIONS_STEP, lambda: _sections_of(records, total), Sections)
    if len(found.sections) == 1:
        only = found.sections[0]
        if only.class_name is None:
            none = f"no page is of a known class: the classes are {', '.join(sorted(page_classes(bundle)))}"
            return PacketSplit(
                run.store(status="rejected", error=UNKNOWN_CLASS_ERROR, reason=none, classify_call_id=call_id)
            )
        return PacketSplit(None, only.class_name, call_id)
    results = [_section_result(run, section, document, model, clock) for section in found.sections]
    rows = [result.section_row(row_columns(bundle, result.class_name)) for result in results]
    step = run.step if chosen is None else _revised(run)
    checks, case = case_of(bundle.definition.case, results, found.pages, step)  # functions/checks/cases.py
    status, error, reason = packet_status(rows, case)
    costs = [spend.records_cost_usd(records)] + [result.model_cost_usd for result in results]
    known = [cost for cost in costs if cost is not None]
    return PacketSplit(
        run.store(
            status=status,
            error=error,
            reason=reason,
            sections=rows,
            checks=checks,
            case=case,
            classify_call_id=call_id,
            model_cost_usd=spend.to_usd(sum(spend.to_nano(cost) for cost in known)) if known else None,
        )
    )


def _revised(run: PacketRun) -> Callable[[str, Callable[[], ResultT], type[ResultT]], ResultT]:
    """The run's durable steps as a re-split packet's (``case`` is ``case-r1``: over other sections)."""

    def step(name: str, fn: Callable[[], ResultT], result_model: type[ResultT]) -> ResultT:
        return run.step(f"{name}-{REVISION}", fn, result_model)

    return step


def _sections_of(records: Sequence[ExtractionRecord], pages: int) -> Sections:
    answers = [
        PageClass.model_validate(item)
        for record in records
        for item in (record.fields or {}).get(PAGES_KEY) or []  # type: ignore[union-attr]
    ]
    return build_sections(answers, pages)


def _section_result(
    run: PacketRun, section: Section, document: DocumentInput, model: ModelProvider, clock: WindowClock
) -> DocumentResult:
    """A section's stored result, or the section processed now (its own durable steps) and stored; handed
    back (DocumentInProgress) when a section was processed in this invocation and the time left would not
    cover this one's call."""
    stored = s3_json.get_section_result(run.event.job_id, run.event.document.document_id, section.section_id)
    if stored is not None:
        return stored
    clock.before(f"section {section.section_id}")
    part = _for_section(run, section.section_id)
    first, last = section.pages
    where = {"section_id": section.section_id, "pages": section.pages}
    assert run.bundle is not None
    if section.class_name is None:
        result = part.result(**unclassified(run.bundle, first, last), **where)
    else:
        try:
            piece = pages_of(document, first, last, run.bundle.definition.read)
        except DocumentRejected as rejection:
            result = part.result(
                status="rejected", error=rejection.error_name, reason=rejection.reason, **where
            )
        else:
            found = part.extracted(section.class_name, None, piece, model, section_id=section.section_id)
            result = in_packet(part.result(**found, **where), first)
    _store_section(run, result)
    clock.after(called=section.class_name is not None)
    return result


def unclassified(bundle: DefinitionBundle, first: int, last: int) -> dict[str, object]:
    """The outcome of a packet's section of no class, as job.json ``unclassified_pages`` says: ``reject``
    rejects it ``UnknownDocumentClass`` (and the packet with it), ``review`` makes it a review item of its
    own, ``ignore`` keeps it rejected but ``ignored``, so it decides nothing of the packet's status."""
    known = ", ".join(sorted(page_classes(bundle)))
    what = f"pages {first}-{last} are of no known class: the classes are {known}"
    handling = bundle.definition.unclassified_pages or UNCLASSIFIED_DEFAULT
    if handling == "review":
        return {"status": "review", "reason": f"{what}; a person decides them (unclassified_pages: review)"}
    if handling == "ignore":
        reason = f"{what}; ignored (unclassified_pages: ignore)"
        return {"status": "rejected", "error": UNKNOWN_CLASS_ERROR, "reason": reason, "ignored": True}
    return {"status": "rejected", "error": UNKNOWN_CLASS_ERROR, "reason": what}


def in_packet(result: DocumentResult, first: int) -> DocumentResult:
    """A section's result with its evidence's pages counted in the packet (the section was read from its own
    pages, page 1 being the packet's ``first``): the offsets stay within each page's text."""
    shift = first - 1
    if not shift:
        return result
    evidence = {
        path: found.model_copy(update={"page": None if found.page is None else found.page + shift})
        for path, found in result.evidence.items()
    }
    return result.model_copy(update={"evidence": evidence})


def _for_section(run: PacketRun, section: str) -> PacketRun:
    """The run as a section's: its durable steps keyed by the section too, its own calls (and cost)."""
    import copy  # noqa: PLC0415 (only a packet copies its run)

    part = copy.copy(run)
    part.ids = {**run.ids, "section_id": section}
    part.calls = []
    part.ran = set()
    return part


def _store_section(run: PacketRun, result: DocumentResult) -> None:
    """Stored between the same fault points as a document's result (the demo's crash lands on a section)."""
    event = run.event
    for point in ("before_store_result", "after_store_result"):
        if point == "after_store_result":
            s3_json.put_section_result(result)
        fault_point(
            point,
            event.options,
            event.retry_count,
            job_id=event.job_id,
            redrive_count=event.redrive_count,
            document_index=event.document.index,
            context=run.context,
        )
