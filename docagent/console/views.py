"""What each page of the console shows, read through the operator's one reader of a job's records
(docagent/operations/records.py) and the functions the operator's commands print from (status, redrive
--dry-run, trace, review list). Nothing here writes."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from docagent.console.pages import MAX_DOCUMENT_BYTES, page_sizes
from docagent.operations.context import OperatorContext, RefusedError
from docagent.operations.display import as_datetime, iso
from docagent.operations.progress import Snapshot, snapshot
from docagent.operations.records import JobRecords, check_job_id
from docagent.operations.redrive_plan import plan_redrive
from docagent.operations.review import queue
from docagent.operations.spend import actual_cost
from docagent.operations.trace_job import build_trace, span_lines, trace_steps
from functions import storage
from functions.errors import DocumentRejected
from functions.payloads.document import DocumentResult
from functions.payloads.job import ManifestEntry
from functions.payloads.model_calls import ModelCallRecord
from functions.reading.documents import detect_format
from functions.reading.images import image_kind
from functions.reading.page_texts import page_texts, stored_page_texts
from functions.reviews import ReviewDecision

# How many jobs the jobs page lists (newest first), and the most of a document it shows.
JOBS_SHOWN = 50
DOCUMENT_BYTES_SHOWN = 4_500_000
DOCUMENT_TEXT_SHOWN = 200_000


@dataclass
class JobRow:
    """One line of the jobs page: the job's snapshot (as ``docagent status`` reads it) and its usage."""

    snapshot: Snapshot
    cost_usd: str | None  # the report's cost when it has one (docagent cost); else None
    review: int | None  # documents for review, once the report is built

    @property
    def done(self) -> int:
        return int(self.snapshot.documents["succeeded"])


def jobs(ctx: OperatorContext) -> list[JobRow]:
    """The newest executions of the state machine, each as ``docagent status`` sees it."""
    states = ctx.client("stepfunctions")
    executions: list[dict[str, Any]] = []
    for page in states.get_paginator("list_executions").paginate(stateMachineArn=ctx.state_machine_arn):
        executions += page.get("executions", [])
    executions.sort(key=lambda item: str(iso(item.get("startDate")) or ""), reverse=True)
    rows: list[JobRow] = []
    for item in executions[:JOBS_SHOWN]:
        try:
            records = JobRecords(ctx, str(item["name"]))
        except RefusedError:
            continue  # an execution docagent did not start (not a job id)
        report = records.report
        rows.append(
            JobRow(
                snapshot(records, count_rejected=False),
                cost_of(records),
                None if report is None else report.review,
            )
        )
    return rows


def usd(cost: float | None) -> str | None:
    """A cost as the console shows it (after a ``$``): four decimals, as ``status`` does; None: unknown."""
    return None if cost is None else f"{cost:.4f}"


def cost_of(records: JobRecords) -> str | None:
    """A job's model cost on the jobs page: its report's (the rows' costs summed); None before the report."""
    report = records.report
    return None if report is None else usd(report.model_cost_usd)


def section_decisions(
    document_id: str, result: DocumentResult | None, reviews: Mapping[str, ReviewDecision]
) -> dict[str, ReviewDecision]:
    """A packet's decided sections: section id -> its review item's decision (none for another document)."""
    sections = (result.sections or []) if result is not None else []
    items = {part.section_id: storage.review_item(document_id, part.section_id) for part in sections}
    return {section: reviews[item] for section, item in items.items() if item in reviews}


@dataclass
class DocumentRow:
    document_id: str
    index: int
    outcome: str  # extracted | review | rejected | failed | pending
    result: DocumentResult | None
    review: ReviewDecision | None
    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0
    section_reviews: dict[str, ReviewDecision] = field(default_factory=dict)  # a packet's, by section id

    def class_label(self) -> str:
        """Its class; a packet's: ``packet: `` and its sections' classes (DocumentResult.class_label)."""
        return (self.result.class_label or "") if self.result is not None else ""

    def review_text(self) -> str:
        """Its review: the decision; a packet's: how many of its sections are in review and decided."""
        if self.result is None or self.result.sections is None:
            return self.review.verdict if self.review else ""
        waiting = self.result.sections_in_review
        decided = f", {len(self.section_reviews)} decided" if self.section_reviews else ""
        return f"{waiting} in review{decided}" if waiting or decided else ""

    def key_fields(self, limit: int = 3) -> str:
        if self.result is not None and self.result.sections is not None:  # a packet: its sections
            parts = [
                f"{part.class_name or 'no class'} (pages {part.pages[0]}-{part.pages[1]}) {part.status}"
                + (f", {decided.verdict}" if (decided := self.section_reviews.get(part.section_id)) else "")
                for part in self.result.sections
            ]
            shown = f"{len(parts)} sections: " + "; ".join(parts)
            case = self.result.case  # its case checks (functions/checks/cases.py), when they failed
            return shown if case is None or case.status == "extracted" else f"{shown}; case {case.status}"
        fields = (self.result.fields or {}) if self.result is not None else {}
        scalars = [(name, value) for name, value in fields.items() if isinstance(value, str | int | float)]
        return "; ".join(f"{name}: {value}" for name, value in scalars[:limit])


@dataclass
class JobView:
    snapshot: Snapshot
    documents: list[DocumentRow]
    timeline: list[dict[str, Any]]
    redrive_plan: dict[str, Any] | None
    approval: Any
    report: Any
    reviews_waiting: int
    cost_usd: str | None
    tokens: dict[str, int] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        found: dict[str, int] = {}
        for document in self.documents:
            found[document.outcome] = found.get(document.outcome, 0) + 1
        return found


def job(ctx: OperatorContext, job_id: str) -> JobView:
    records = JobRecords(ctx, check_job_id(job_id))
    current = snapshot(records)
    children = records.map_run_entries_by_document() if records.map_run_files is not None else {}
    calls = records.model_calls
    reviews = records.reviews
    rows: list[DocumentRow] = []
    for entry in records.entries():
        result = records.results.get(entry.document_id)
        child = children.get(entry.document_id)
        outcome: str
        if result is not None:
            outcome = result.status
        elif child is not None and child.get("status") in {"FAILED", "TIMED_OUT", "ABORTED"}:
            outcome = "failed"
        else:
            outcome = "pending"
        made = calls.get(entry.document_id, [])
        rows.append(
            DocumentRow(
                document_id=entry.document_id,
                index=entry.index,
                outcome=outcome,
                result=result,
                review=reviews.get(entry.document_id),
                section_reviews=section_decisions(entry.document_id, result, reviews),
                input_tokens=sum(call.input_tokens for call in made),
                output_tokens=sum(call.output_tokens for call in made),
                calls=len(made),
            )
        )
    plan = None
    if current.status in {"FAILED", "TIMED_OUT", "ABORTED"}:
        plan = plan_redrive(records, allow_version_drift=False)
    tokens = {
        "input": sum(row.input_tokens for row in rows),
        "output": sum(row.output_tokens for row in rows),
        "calls": sum(row.calls for row in rows),
    }
    waiting = sum(1 for item in queue(records) if item["decision"] is None)
    return JobView(
        snapshot=current,
        documents=rows,
        timeline=[entry.as_json() for entry in records.timeline()],
        redrive_plan=plan,
        approval=records.approval,
        report=records.report,
        reviews_waiting=waiting,
        cost_usd=usd(actual_cost(calls)["model_cost_usd"]) if calls else cost_of(records),
        tokens=tokens,
    )


@dataclass
class CallView:
    call: ModelCallRecord
    reused: bool  # made before a redrive and used by the attempt after it: not made again


@dataclass
class DocumentView:
    job_id: str
    document_id: str
    index: int
    key: str
    result: DocumentResult | None
    review: ReviewDecision | None
    calls: list[CallView]
    text: str | None
    text_note: str | None
    is_pdf: bool
    trace: dict[str, Any] | None
    job_status: str
    # each page's size in pixels as shown (docagent/console/pages.py): a PDF's, a TIFF's, a photo's
    page_sizes: list[tuple[int, int]] = field(default_factory=list)
    # the page texts the evidence's offsets refer to (functions/reading/page_texts.py)
    pages: list[str] | None = None
    # a packet's section shown as its own review item (its result, its decision); None: the document
    section_id: str | None = None
    section_reviews: dict[str, ReviewDecision] = field(default_factory=dict)  # a packet's, by section id

    @property
    def path(self) -> str:
        """This page's path: the document's, or its section's (its review form posts to ``{path}/review``)."""
        return item_path(self.job_id, storage.review_item(self.document_id, self.section_id))


def item_path(job_id: str, item: str) -> str:
    """The page of a review item: ``/job/JOB/document/DOC``, a packet's section's ``.../section/SECTION``."""
    document_id, section_id = storage.review_item_parts(item)
    document = f"/job/{job_id}/document/{document_id}"
    return document if section_id is None else f"{document}/section/{section_id}"


def _reused(call: ModelCallRecord, result: DocumentResult | None, redrives: list[dict[str, Any]]) -> bool:
    """A journalled call reused by a redrive: it finished before an execution redrive and the document's
    result was stored after it (the redrive read the call's record instead of calling the model)."""
    finished = as_datetime(call.finished_at)
    processed = as_datetime(result.processed_at) if result is not None else None
    if finished is None or processed is None:
        return False
    for redrive in redrives:
        at = as_datetime(redrive["at"])
        if redrive["kind"] == "execution" and at is not None and finished <= at <= processed:
            return True
    return False


def document(
    ctx: OperatorContext, job_id: str, document_id: str, section_id: str | None = None
) -> DocumentView | None:
    """A document's page, or (``section_id``) a packet's section's: its own result, calls and decision,
    beside the packet's pages (its evidence's pages are counted in the packet)."""
    records = JobRecords(ctx, check_job_id(job_id))
    described = records.require_execution()
    entry = next((item for item in records.entries() if item.document_id == document_id), None)
    if entry is None:
        return None
    if section_id is None:
        result = records.results.get(document_id)
    elif (result := records.section_result(document_id, section_id)) is None:
        return None
    redrives = records.redrives()
    calls = [
        CallView(call, _reused(call, result, redrives))
        for call in records.model_calls.get(document_id, [])
        if section_id is None or call.section_id == section_id
    ]
    section_reviews = section_decisions(document_id, result, records.reviews)
    content = records.document_bytes(entry, DOCUMENT_BYTES_SHOWN)
    text, note = document_text(content, result, records)
    started = as_datetime(described.get("startDate"))
    lines = span_lines(ctx, records.job_id, started - dt.timedelta(minutes=1) if started else None)
    trace = build_trace(
        records.job_id,
        described,
        records.history,
        [entry.model_dump(mode="json")],
        lines,
        document_id=document_id,
        document_spans=trace_steps(records.bundle),
    )
    return DocumentView(
        job_id=records.job_id,
        document_id=document_id,
        index=entry.index,
        key=entry.key,
        result=result,
        review=records.review(storage.review_item(document_id, section_id)),
        calls=calls,
        text=text,
        text_note=note,
        is_pdf=content is not None and content.startswith(b"%PDF-"),
        page_sizes=page_sizes(whole_document(records, entry, content)),
        trace=trace["documents"][0] if trace["documents"] else None,
        job_status=str(described["status"]),
        pages=evidence_pages(content, result),
        section_id=section_id,
        section_reviews=section_reviews,
    )


def whole_document(records: JobRecords, entry: ManifestEntry, content: bytes | None) -> bytes | None:
    """The document whole (its pages are counted from it): ``content`` unless it was cut at
    DOCUMENT_BYTES_SHOWN, else read again up to the largest document a job reads."""
    if content is None or len(content) < DOCUMENT_BYTES_SHOWN:
        return content
    return records.document_bytes(entry, MAX_DOCUMENT_BYTES)


def evidence_pages(content: bytes | None, result: DocumentResult | None) -> list[str] | None:
    """The page texts a result's evidence points into, when it has evidence with offsets."""
    if content is None or result is None or not any(e.start is not None for e in result.evidence.values()):
        return None
    return page_texts(content, result.format or detect_format(content))


def document_text(
    content: bytes | None, result: DocumentResult | None, records: JobRecords | None = None
) -> tuple[str | None, str | None]:
    """The document's text as the model read it (PDF pages, DOCX, XLSX, text; a page without a text layer:
    the text OCR read of it, stored once per document and read by the grounding's one reader,
    functions/reading/page_texts.py), and a note when there is none: the local extra's readers
    (docagent/localcloud/bedrock/document_text.py) do the reading."""
    if content is None:
        return None, "the document is no longer in its bucket"
    if result is not None and result.ocr is not None and records is not None:  # a scan, a photo, a fax (#52)
        fmt = result.format or detect_format(content)
        pages = stored_page_texts(content, fmt, result.ocr, records.read_json)
        if pages:
            return "\n\n".join(pages)[:DOCUMENT_TEXT_SHOWN], None
    if image_kind(content) is not None:
        return None, "an image: its pages are shown above (no text layer to show)"
    try:
        from docagent.localcloud.bedrock.document_text import extract_text  # noqa: PLC0415 (the local extra's readers)
    except ImportError:  # an install without the local extra: the PDF still shows in the page
        return None, "install docagent[local] to show the document's text"
    try:
        text = extract_text(
            content, (result.format if result and result.format else None) or detect_format(content)
        )
    except DocumentRejected as problem:
        return None, f"cannot show the document's text: {problem}"
    return text[:DOCUMENT_TEXT_SHOWN], None


def file_of(ctx: OperatorContext, job_id: str, document_id: str) -> bytes | None:
    """The document's bytes when it is a PDF (the page shows it in a frame); None otherwise."""
    records = JobRecords(ctx, check_job_id(job_id))
    entry = next((item for item in records.entries() if item.document_id == document_id), None)
    content = None if entry is None else records.document_bytes(entry, DOCUMENT_BYTES_SHOWN)
    return content if content is not None and content.startswith(b"%PDF-") else None


def review_queue(ctx: OperatorContext, job_id: str) -> list[dict[str, Any]]:
    records = JobRecords(ctx, check_job_id(job_id))
    records.require_execution()
    return queue(records)
