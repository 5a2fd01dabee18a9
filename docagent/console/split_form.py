"""The console's re-split of a packet (docs/console.md; docs/design.md "Re-splitting a packet"): on the page
of a packet's section that is not extracted (in review, rejected, of no class), a form gives pages a class
(the section's, or across its boundary), posted to ``/job/JOB/document/DOCUMENT/split``; it calls
docagent/operations/review_split.py ``split_packet`` as ``docagent review split`` does, so only the changed
sections run again. Its template is templates/split_form.html (included by document.html)."""

from __future__ import annotations

from dataclasses import dataclass

from jinja2 import Environment

from docagent.operations.context import OperatorContext, OperatorError
from docagent.operations.records import JobRecords, check_job_id
from docagent.operations.review_split import sections_text, split_packet
from functions import s3_json, storage
from functions.reading.sections import page_classes
from functions.resplit import InvalidSplitError, SplitDecision, parse_given


@dataclass(frozen=True)
class SplitForm:
    """What the form shows: the packet's pages, the classes a page may be of, or the re-split made."""

    pages: int
    first: int
    last: int
    classes: list[str]
    decision: SplitDecision | None


def split_form(
    ctx: OperatorContext, job_id: str, document_id: str, section_id: str | None
) -> SplitForm | None:
    """The form of a packet's section page (None: no form: not a section, or an extracted one that is not
    re-split)."""
    if section_id is None:
        return None
    try:
        records = JobRecords(ctx, check_job_id(job_id))
    except OperatorError:  # a deployment without the job's records (no state machine): no form
        return None
    packet, section = records.results.get(document_id), records.section_result(document_id, section_id)
    if packet is None or not packet.sections or section is None or section.pages is None:
        return None
    data = s3_json.get_json_or_none(
        storage.split_decision_key(job_id, document_id), bucket=ctx.bucket, client=ctx.client("s3")
    )
    decision = None if data is None else SplitDecision.model_validate(data)
    if decision is None and section.status == "extracted":
        return None
    classes = page_classes(records.bundle) if records.bundle is not None else []
    first, last = section.pages
    return SplitForm(packet.sections[-1].pages[1], first, last, classes, decision)


def install(templates: Environment, ctx: OperatorContext) -> None:
    """The form's view as the templates' ``split_form(job, document, section)``."""
    templates.globals["split_form"] = lambda job, document, section: split_form(ctx, job, document, section)


def split_document(
    ctx: OperatorContext, reviewer: str, job_id: str, document_id: str, form: dict[str, str]
) -> str:
    """The form posted: the pages ``first``-``last`` given the class ``class``; the status line."""
    text = f"{form.get('first', '').strip()}-{form.get('last', '').strip()}={form.get('class', '').strip()}"
    try:
        given = [parse_given(text)]
    except InvalidSplitError:
        raise OperatorError("give the first and last page (numbers) and a class") from None
    done = split_packet(
        JobRecords(ctx, check_job_id(job_id)),
        document_id,
        given,
        by=form.get("by") or reviewer,
        reason=form.get("reason") or None,
    )
    said = "recorded" if done.written else "already recorded"
    queue = f"; {done.queue.sentence()}" if done.queue is not None else ""
    return (
        f"packet {document_id} re-split by {done.decision.decided_by} ({said}): re-ran "
        f"{', '.join(done.decision.added)}; the packet is {done.rerun.status}: "
        f"{sections_text(done.rerun.sections or [])}{queue}"
    )
