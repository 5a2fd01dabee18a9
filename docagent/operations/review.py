"""``docagent review``: the reviewers' queue of a job (docs/design.md, "Review").

``review list JOB`` shows the review items, the documents whose result is ``review`` and the packets'
sections whose own result is (``DOC#s0001-0002``: functions/reading/sections.py), with their decision, if any;
``review accept JOB ITEM [--set FIELD=JSON]...`` and ``review reject JOB ITEM --reason TEXT`` record a
reviewer's decision beside the result (written once: the same decision again changes nothing, another one is
refused); ``review export JOB DIR`` writes each accepted item with its corrected fields as a labelled
sample (``NAME.EXT`` + ``NAME.label.json``, in a folder per class when the definition has several; a section
as its pages of the packet) for ``docagent eval``. The console (docagent/console/) decides through
:func:`decide` too.
"""

from __future__ import annotations

import argparse
import getpass
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import JsonValue, ValidationError

from docagent.operations.context import (
    EXIT_NOT_FOUND,
    EXIT_OK,
    OperatorContext,
    RefusedError,
    command,
    emit,
    target_arguments,
)
from docagent.operations.display import wide_console
from docagent.operations.records import JobRecords
from docagent.operations.review_evidence import parse_evidence, resolved
from docagent.operations.review_queue import QueueRelease, release_queue
from docagent.operations.review_split import register_split
from functions import s3_json, storage
from functions.payloads.common import utc_now
from functions.payloads.document import DocumentResult
from functions.reading.pdf_pages import slice_pages
from functions.reviews import (
    ChosenEvidence,
    FieldCorrection,
    ReviewDecision,
    ReviewVerdict,
    decision_id,
)

LABEL_SUFFIX = ".label.json"
ITEM_HELP = "a document id, or DOCUMENT#SECTION for a packet's section (as `review list` shows it)"
# The largest document exported as a sample: Converse's limit per document (docs/design.md, "Documents").
EXPORT_MAX_BYTES = 4_500_000


@dataclass(frozen=True)
class Decided:
    """A decision as stored, and whether this call wrote it (False: it was already recorded)."""

    decision: ReviewDecision
    written: bool
    queue: QueueRelease | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            **self.decision.model_dump(mode="json"),
            "written": self.written,
            "item": self.decision.item_id,
            "review_key": storage.review_item_key(self.decision.job_id, self.decision.item_id),
            "review_wait": None if self.queue is None else self.queue.as_json(),
        }


def register(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    common: argparse.ArgumentParser,
) -> None:
    target = target_arguments()
    review = commands.add_parser(
        "review",
        help="the review queue of a job: list, accept or reject (with corrections), re-split a packet, "
        "export labels",
    )
    actions = review.add_subparsers(dest="review_command", required=True, metavar="ACTION")

    listed = actions.add_parser(
        "list",
        parents=[common, target],
        help="the review items of a job (documents, packets' sections), with decisions",
    )
    listed.add_argument("job_id", metavar="JOB")
    listed.set_defaults(handler=cmd_list)

    accept = actions.add_parser(
        "accept", parents=[common, target], help="accept a review item, optionally with corrected fields"
    )
    accept.add_argument("job_id", metavar="JOB")
    accept.add_argument("document_id", metavar="ITEM", help=ITEM_HELP)
    accept.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="a corrected field (VALUE: text for a field read as text, else JSON); repeat for several",
    )
    accept.add_argument(
        "--evidence",
        action="append",
        default=[],
        metavar="FIELD=PAGE:QUOTE",
        help="where you read a field: its page and the text there (checked against the document, stored "
        "with the correction); repeat for several",
    )
    accept.add_argument("--by", help="who decides (default: the current user)")
    accept.add_argument("--reason", help="an optional note stored with the decision")
    accept.set_defaults(handler=cmd_accept)

    reject = actions.add_parser("reject", parents=[common, target], help="reject a review item")
    reject.add_argument("job_id", metavar="JOB")
    reject.add_argument("document_id", metavar="ITEM", help=ITEM_HELP)
    reject.add_argument("--reason", required=True, help="why (stored with the decision)")
    reject.add_argument("--by", help="who decides (default: the current user)")
    reject.set_defaults(handler=cmd_reject)

    export = actions.add_parser(
        "export", parents=[common, target], help="write the accepted documents as labels for docagent eval"
    )
    export.add_argument("job_id", metavar="JOB")
    export.add_argument("directory", metavar="DIR", type=Path)
    export.set_defaults(handler=cmd_export)
    register_split(actions, common, target)


# ------------------------------------------------------------------------------------------ the queue


def queue(records: JobRecords) -> list[dict[str, Any]]:
    """The review items: each document whose result is ``review``, and each section of a packet whose own
    result is (read from its section result), the least certain first (its lowest field confidence; then in
    job order, a packet's sections in page order), each with its fields as read, its evidence and its
    decision (or null)."""
    decisions = records.reviews
    waiting = sorted(
        review_results(records),
        key=lambda result: (
            least_confidence(result) if result.evidence else 1.0,
            result.index,
            result.pages or (0, 0),
        ),
    )
    items = []
    for result in waiting:
        item = storage.review_item(result.document_id, result.section_id)
        items.append(
            {
                "item": item,
                "document_id": result.document_id,
                "section_id": result.section_id,
                "pages": None if result.pages is None else list(result.pages),
                "index": result.index,
                "class_name": result.class_name,
                "fields": result.fields,
                "reason": result.reason,
                "error": result.error,
                "confidence": least_confidence(result) if result.evidence else None,
                "evidence": {path: found.model_dump(mode="json") for path, found in result.evidence.items()},
                "decision": None if item not in decisions else decisions[item].model_dump(mode="json"),
            }
        )
    return items


def review_results(records: JobRecords) -> list[DocumentResult]:
    """The results of the job's review items: a document's whose status is ``review`` (not a packet), a
    packet's sections' whose own status is (one read per such section), a packet's whose case is."""
    found: list[DocumentResult] = []
    for result in records.results.values():
        if result.sections is None:
            found += [result] if result.status == "review" else []
            continue
        for section in result.sections:
            if section.status == "review":
                stored = records.section_result(result.document_id, section.section_id)
                found += [stored] if stored is not None else []
        found += [result] if case_in_review(result) else []  # the packet, decided as a whole
    return found


def case_in_review(result: DocumentResult) -> bool:
    """A packet whose case is in review: a review item itself (functions/reviews.py ``review_items``)."""
    return result.sections is not None and result.case is not None and result.case.status == "review"


def least_confidence(result: DocumentResult) -> float:
    return min((found.confidence for found in result.evidence.values()), default=1.0)


def parse_corrections(values: list[str]) -> dict[str, str]:
    """``FIELD=VALUE`` pairs, as typed (``--set``)."""
    pairs: dict[str, str] = {}
    for value in values:
        name, sep, raw = value.partition("=")
        if not sep or not name.strip():
            raise RefusedError("InvalidCorrection", f"--set {value!r}: expected FIELD=VALUE")
        pairs[name.strip()] = raw
    return pairs


def typed_corrections(typed: dict[str, str], extracted: dict[str, JsonValue]) -> dict[str, JsonValue]:
    """The typed values as field values: text for a field the model read as text (``"5930.00"`` stays
    text), JSON for any other (a number, a list, an object), else text; a value equal to what the model read
    is no correction."""
    corrected: dict[str, JsonValue] = {}
    for name, raw in typed.items():
        value: JsonValue = raw
        if not isinstance(extracted.get(name), str):
            try:
                value = json.loads(raw)
            except ValueError:
                value = raw
        if name not in extracted or value != extracted[name]:
            corrected[name] = value
    return corrected


def _reviewable(records: JobRecords, item: str) -> DocumentResult:
    """The stored result of a review item (a document, or a packet's section) that waits for review."""
    document_id, section_id = storage.review_item_parts(item)
    if section_id is None:
        result = records.results.get(document_id)
    else:
        result = records.section_result(document_id, section_id)
    what = item_name(item)
    if result is None:
        raise RefusedError(
            "DocumentNotFound", f"job {records.job_id} has no stored result for {what}", EXIT_NOT_FOUND
        )
    if result.sections is not None and not case_in_review(result):
        sections = [
            storage.review_item(document_id, part.section_id)
            for part in result.sections
            if part.status == "review"
        ]
        raise RefusedError(
            "NotInReview",
            f"document {document_id} of job {records.job_id} is a packet: its sections are reviewed one by "
            f"one ({', '.join(sections) if sections else 'none is in review'})",
        )
    if result.status != "review":
        raise RefusedError(
            "NotInReview", f"{what} of job {records.job_id} is {result.status}, not waiting for review"
        )
    return result


def item_name(item: str) -> str:
    """A review item as a sentence names it: ``document D`` or ``section S of document D``."""
    document_id, section_id = storage.review_item_parts(item)
    if section_id is None:
        return f"document {document_id}"
    return f"section {section_id} of document {document_id}"


def decide(
    records: JobRecords,
    item: str,
    verdict: ReviewVerdict,
    *,
    typed: dict[str, str],
    by: str | None,
    reason: str | None,
    evidence: dict[str, ChosenEvidence] | None = None,
) -> Decided:
    """Record a reviewer's decision on one review item (a document, or a packet's section as
    ``{document_id}#{section_id}``) that waits for review, once: ``typed`` holds the
    fields as the reviewer typed them (FIELD: text; a rejection keeps the fields as read), ``evidence``
    where the reviewer read them (checked against the document: docagent/operations/review_evidence.py).

    The same decision again (a double click, a reload, a retried command) answers the stored one and
    writes nothing; a different decision after one is recorded is refused (exit 2)."""
    result = _reviewable(records, item)
    section_id = result.section_id
    extracted = dict(result.fields or {})
    corrected = typed_corrections(typed, extracted) if verdict == "accepted" else {}
    chosen = (evidence or {}) if verdict == "accepted" else {}
    unknown = sorted((set(corrected) | set(chosen)) - set(extracted))
    if unknown:
        raise RefusedError(
            "UnknownField",
            f"{item_name(item)} has no field {', '.join(unknown)} (its fields: {', '.join(extracted)})",
        )
    chosen = resolved(records, result, chosen)
    changes = [  # each changed field, and each the reviewer chose evidence for
        FieldCorrection(field=name, extracted=extracted[name], corrected=value, evidence=chosen.get(name))
        for name, value in {**extracted, **corrected}.items()
        if extracted[name] != value or name in chosen
    ]
    try:
        decision = ReviewDecision(
            decision_id=decision_id(records.job_id, result.document_id, section_id),
            job_id=records.job_id,
            document_id=result.document_id,
            section_id=section_id,
            verdict=verdict,
            class_name=result.class_name,
            fields={**extracted, **corrected},
            corrections=changes,
            reason=(reason or "").strip() or None,
            decided_by=(by or "").strip() or getpass.getuser(),
            decided_at=utc_now(),
        )
    except ValidationError as error:
        raise RefusedError("InvalidDecision", f"invalid decision: {error.errors()[0]['msg']}") from None
    key = storage.review_item_key(records.job_id, decision.item_id)
    written = s3_json.put_json_once(key, decision, bucket=records.ctx.bucket, client=records.ctx.client("s3"))
    if written:
        return Decided(decision, written=True, queue=release_queue(records, decision.decided_by))
    stored = records.review(decision.item_id)
    if stored is None:  # pragma: no cover - a conditional write lost to a record that is gone
        raise RefusedError("ReviewConflict", f"{key} changed while deciding; try again")
    if not stored.same_decision(decision):
        raise RefusedError(
            "AlreadyReviewed",
            f"{item_name(decision.item_id)} of job {records.job_id} was already {stored.verdict} by "
            f"{stored.decided_by} at {stored.decided_at}: a decision is recorded once",
            details={"decision": stored.model_dump(mode="json")},
        )
    return Decided(stored, written=False, queue=release_queue(records, stored.decided_by))


# ---------------------------------------------------------------------------------------- the labels


def export_labels(records: JobRecords, directory: Path) -> list[dict[str, Any]]:
    """Each accepted review item with its corrected fields as a sample of a labelled set: ``NAME.EXT`` (the
    document's bytes as the job read them; a packet's section: its pages of the packet, ``NAME`` ending in
    ``-{section_id}``) and ``NAME.label.json``; in a folder named after its class when the job's definition
    has several classes (docagent/evaluation/labelled_sets.py ``class_of``)."""
    several = records.bundle is not None and len(records.bundle.definition.classes) > 1
    entries = {entry.document_id: entry for entry in records.entries()}
    exported: list[dict[str, Any]] = []
    for item, decision in sorted(records.reviews.items()):
        document_id, section_id = decision.document_id, decision.section_id
        entry = entries.get(document_id)
        result = (
            records.results.get(document_id)
            if section_id is None
            else records.section_result(document_id, section_id)
        )
        if decision.verdict != "accepted" or entry is None or result is None or result.sections is not None:
            continue  # a packet decided as a whole (its case) is no labelled sample: its sections are
        content = records.document_bytes(entry, EXPORT_MAX_BYTES)
        if content is None:
            continue
        stem = Path(document_id).stem if Path(document_id).suffix else document_id
        suffix = Path(entry.key).suffix or (f".{result.format}" if result.format else ".txt")
        if section_id is not None and result.pages is not None:  # the section's pages, a document of its own
            content = slice_pages(content, *result.pages)
            stem = f"{stem}-{section_id}"
        folder = directory / (decision.class_name or "") if several else directory
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{stem}{suffix}").write_bytes(content)
        label = folder / f"{stem}{LABEL_SUFFIX}"
        label.write_text(json.dumps(decision.fields, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        exported.append(
            {
                "document_id": document_id,
                "item": item,
                "label": str(label),
                "corrections": len(decision.corrections),
            }
        )
    return exported


# -------------------------------------------------------------------------------------- the commands


@command
def cmd_list(args: argparse.Namespace) -> int:
    records = JobRecords(OperatorContext.from_args(args), args.job_id)
    records.require_execution()
    documents = queue(records)
    waiting = sum(1 for document in documents if document["decision"] is None)
    payload = {"job_id": records.job_id, "documents": documents, "waiting": waiting}

    def human() -> None:
        console = wide_console()
        for document in documents:
            decided = document["decision"]
            state = "waiting" if decided is None else f"{decided['verdict']} by {decided['decided_by']}"
            console.print(f"{document['item']}  {document['class_name']}  {document['reason']}  {state}")
        console.print(f"{len(documents)} item(s) for review, {waiting} waiting")

    emit(args, payload, human)
    return EXIT_OK


def _decide_command(
    args: argparse.Namespace,
    verdict: ReviewVerdict,
    typed: dict[str, str],
    evidence: dict[str, ChosenEvidence] | None = None,
) -> int:
    records = JobRecords(OperatorContext.from_args(args), args.job_id)
    decided = decide(
        records, args.document_id, verdict, typed=typed, by=args.by, reason=args.reason, evidence=evidence
    )
    decision = decided.decision
    said = "recorded" if decided.written else "already recorded"

    def human() -> None:
        console = wide_console()
        console.print(
            f"{decision.item_id} of job {decision.job_id} {decision.verdict} ({said}: "
            f"{decision.decided_by}, {decision.decided_at}, {len(decision.corrections)} correction(s))"
        )
        if decided.queue is not None:
            console.print(decided.queue.sentence())

    emit(args, decided.as_json(), human)
    return EXIT_OK


@command
def cmd_accept(args: argparse.Namespace) -> int:
    return _decide_command(args, "accepted", parse_corrections(args.set), parse_evidence(args.evidence))


@command
def cmd_reject(args: argparse.Namespace) -> int:
    if not args.reason.strip():
        raise RefusedError("InvalidDecision", "--reason must not be empty")
    return _decide_command(args, "rejected", {})


@command
def cmd_export(args: argparse.Namespace) -> int:
    records = JobRecords(OperatorContext.from_args(args), args.job_id)
    records.require_execution()
    exported = export_labels(records, args.directory)
    payload = {"job_id": records.job_id, "directory": str(args.directory), "exported": exported}
    emit(
        args,
        payload,
        lambda: wide_console().print(f"{len(exported)} labelled document(s) written to {args.directory}"),
    )
    return EXIT_OK
