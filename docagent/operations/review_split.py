"""``docagent review split JOB DOCUMENT --pages FIRST[-LAST]=CLASS...``: a reviewer re-splits a packet
(docs/design.md, "Review", "Re-splitting a packet"), giving pages a class or moving a boundary.

The decision (functions/resplit.py ``SplitDecision``) is stored once beside the sections' decisions; then the
packet re-runs only what changed: process_document's ``resplit`` action, invoked here synchronously (again
while it hands the packet back to continue), extracts and checks the sections the re-split added, reuses the
kept ones, checks the case again and writes the packet's result again. A job that waits for its review queue
has the packet's items replaced by the re-run's, and is released when every item is decided. The console
(docagent/console/split_form.py) re-splits through :func:`split_packet` too.
"""

from __future__ import annotations

import argparse
import getpass
import json
from dataclasses import dataclass
from typing import Any

from botocore.config import Config

from docagent.localcloud.request_counts import OPERATOR_USER_AGENT
from docagent.operations.context import (
    EXIT_NOT_FOUND,
    EXIT_OK,
    OperatorContext,
    RefusedError,
    command,
    emit,
)
from docagent.operations.display import wide_console
from docagent.operations.records import JobRecords
from docagent.operations.review_queue import QueueRelease, release_queue
from functions import s3_json, storage
from functions.payloads.common import utc_now
from functions.payloads.document import DocumentOutcome, DocumentResult
from functions.payloads.job import JobOptions
from functions.payloads.report import SectionRow
from functions.reading.sections import Section, Sections
from functions.resplit import (
    RESPLIT_ACTION,
    GivenSection,
    InvalidSplitError,
    ResplitEvent,
    SplitDecision,
    parse_given,
    resplit,
    split_decision_id,
)
from functions.reviews import review_items
from stacks import outputs as names

# The re-run is handed back (DocumentInProgress) when one invocation cannot finish it: invoked again, at most.
MAX_INVOCATIONS = 5
# A synchronous Invoke waits for the function (its timeout is at most 900 s: Lambda quotas, looked up
# 2026-12-07, docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html "Function timeout").
INVOKE_READ_TIMEOUT_SECONDS = 910


@dataclass(frozen=True)
class Resplit:
    """A re-split as stored, whether this call wrote it, and the packet re-run."""

    decision: SplitDecision
    written: bool
    rerun: DocumentResult
    queue: QueueRelease | None = None

    def as_json(self) -> dict[str, Any]:
        sections = self.rerun.sections or []
        return {
            **self.decision.model_dump(mode="json"),
            "written": self.written,
            "split_key": storage.split_decision_key(self.decision.job_id, self.decision.document_id),
            "rerun": {
                "status": self.rerun.status,
                "error": self.rerun.error,
                "reason": self.rerun.reason,
                "sections": [section.model_dump(mode="json") for section in sections],
            },
            "review_wait": None if self.queue is None else self.queue.as_json(),
        }


def register_split(actions: argparse._SubParsersAction[argparse.ArgumentParser], *parents: Any) -> None:
    """``review split`` (added to ``review``'s actions by docagent/operations/review.py)."""
    split = actions.add_parser(
        "split",
        parents=list(parents),
        help="re-split a packet: give pages a class or move a boundary; only the changed sections re-run",
    )
    split.add_argument("job_id", metavar="JOB")
    split.add_argument("document_id", metavar="DOCUMENT", help="the packet's document id")
    split.add_argument(
        "--pages",
        action="append",
        required=True,
        metavar="FIRST[-LAST]=CLASS",
        help="pages of the packet that are one document of CLASS (a section it overlaps is cut around "
        "it); repeat for several",
    )
    split.add_argument("--by", help="who decides (default: the current user)")
    split.add_argument("--reason", help="an optional note stored with the decision")
    split.set_defaults(handler=cmd_split)


def packet_sections(records: JobRecords, document_id: str) -> tuple[DocumentResult, Sections]:
    """The packet's stored result and its sections as they are now; refused when it is no packet."""
    result = records.results.get(document_id)
    if result is None:
        raise RefusedError(
            "DocumentNotFound", f"job {records.job_id} has no stored result for {document_id}", EXIT_NOT_FOUND
        )
    if result.sections is None:
        raise RefusedError(
            "NotAPacket", f"document {document_id} of job {records.job_id} is no packet: it has no sections"
        )
    sections = [
        Section(section_id=row.section_id, class_name=row.class_name, pages=row.pages)
        for row in result.sections
    ]
    return result, Sections(pages=sections[-1].pages[1], sections=sections)


def split_packet(
    records: JobRecords, document_id: str, given: list[GivenSection], *, by: str | None, reason: str | None
) -> Resplit:
    """Store a reviewer's re-split of a packet once, then re-run the packet's changed sections (see the
    module). The same split again answers the stored one (and re-runs: a re-run that did not finish goes
    on, one that did changes nothing); another split after one is refused."""
    stored = s3_json.get_json_or_none(
        storage.split_decision_key(records.job_id, document_id),
        bucket=records.ctx.bucket,
        client=records.ctx.client("s3"),
    )
    existing = None if stored is None else SplitDecision.model_validate(stored)
    decision = existing if existing is not None else _new_decision(records, document_id, given, by, reason)
    candidate = decision.model_copy(update={"given": given, "reason": (reason or "").strip() or None})
    if existing is not None and not existing.same_decision(candidate):
        raise RefusedError(
            "AlreadyReviewed",
            f"packet {document_id} of job {records.job_id} was already re-split by {existing.decided_by} at "
            f"{existing.decided_at}: a packet is re-split once",
            details={"decision": existing.model_dump(mode="json")},
        )
    written = existing is None and s3_json.put_json_once(
        storage.split_decision_key(records.job_id, document_id),
        decision,
        bucket=records.ctx.bucket,
        client=records.ctx.client("s3"),
    )
    rerun = _rerun(records, document_id)
    _requeue(records, document_id, rerun)
    return Resplit(decision, written=written, rerun=rerun, queue=release_queue(records, decision.decided_by))


def _new_decision(
    records: JobRecords, document_id: str, given: list[GivenSection], by: str | None, reason: str | None
) -> SplitDecision:
    bundle = records.bundle
    if bundle is None:
        raise RefusedError("DefinitionMissing", f"job {records.job_id} pins no job definition")
    _, previous = packet_sections(records, document_id)
    try:
        sections, kept, replaced, added = resplit(bundle, previous, given)
    except InvalidSplitError as error:
        raise RefusedError("InvalidSplit", f"packet {document_id}: {error}") from None
    decided = [
        item for item in replaced if records.review(storage.review_item(document_id, item)) is not None
    ]
    if decided:
        raise RefusedError(
            "AlreadyReviewed",
            f"section {decided[0]} of packet {document_id} has a review decision: a split may not replace it",
        )
    return SplitDecision(
        decision_id=split_decision_id(records.job_id, document_id),
        job_id=records.job_id,
        document_id=document_id,
        given=given,
        sections=sections,
        previous=previous.sections,
        kept=kept,
        replaced=replaced,
        added=added,
        reason=(reason or "").strip() or None,
        decided_by=(by or "").strip() or getpass.getuser(),
        decided_at=utc_now(),
    )


def _rerun(records: JobRecords, document_id: str) -> DocumentResult:
    """process_document's ``resplit`` action for the packet, until it is done; its stored result."""
    entry = next((entry for entry in records.entries() if entry.document_id == document_id), None)
    if entry is None:
        raise RefusedError(
            "DocumentNotFound", f"job {records.job_id} has no document {document_id}", EXIT_NOT_FOUND
        )
    stored = records.request  # the job's own options (its budget), without a drill's fault, on demand
    options = JobOptions() if stored is None else stored.request.options
    options = options.model_copy(update={"fault": None, "inference": "on_demand"})
    event = ResplitEvent(action=RESPLIT_ACTION, job_id=records.job_id, document=entry, options=options)
    ctx = records.ctx
    client = ctx.session.client(
        "lambda",
        endpoint_url=ctx.endpoint,
        config=Config(
            user_agent_extra=OPERATOR_USER_AGENT,
            read_timeout=INVOKE_READ_TIMEOUT_SECONDS,
            retries={"max_attempts": 1},
        ),
    )
    function = ctx.output(names.function_name_output(names.PROCESS_DOCUMENT))
    for _ in range(MAX_INVOCATIONS):
        response = client.invoke(FunctionName=function, Payload=event.model_dump_json().encode())
        payload = json.loads(response["Payload"].read() or b"null")
        if "FunctionError" not in response:
            DocumentOutcome.model_validate(payload)
            break
        if not isinstance(payload, dict) or payload.get("errorType") != "DocumentInProgress":
            raise RefusedError("ResplitFailed", f"the packet's re-run failed: {payload}")
    else:
        raise RefusedError(
            "ResplitUnfinished", f"the packet's re-run was handed back {MAX_INVOCATIONS} times"
        )
    result = s3_json.get_json_or_none(
        storage.result_key(records.job_id, document_id), bucket=ctx.bucket, client=ctx.client("s3")
    )
    return DocumentResult.model_validate(result)


def _requeue(records: JobRecords, document_id: str, rerun: DocumentResult) -> None:
    """A job waiting for its queue: the packet's items replaced by the re-run's (review-wait.json)."""
    record = records.review_wait_record()
    if record is None or record.status != "waiting":
        return
    prefix = storage.review_item(document_id, "")
    kept = [item for item in record.documents if not item.startswith(prefix) and item != document_id]
    items = review_items(rerun.report_row([]))
    if kept + items == record.documents:
        return
    s3_json.put_json(
        storage.review_wait_key(records.job_id),
        record.model_copy(update={"documents": kept + items}),
        bucket=records.ctx.bucket,
        client=records.ctx.client("s3"),
    )


def sections_text(rows: list[SectionRow]) -> str:
    return ", ".join(f"{row.section_id} {row.class_name or 'no class'} {row.status}" for row in rows)


@command
def cmd_split(args: argparse.Namespace) -> int:
    try:
        given = [parse_given(text) for text in args.pages]
    except InvalidSplitError as error:
        raise RefusedError("InvalidSplit", str(error)) from None
    records = JobRecords(OperatorContext.from_args(args), args.job_id)
    done = split_packet(records, args.document_id, given, by=args.by, reason=args.reason)
    said = "recorded" if done.written else "already recorded"

    def human() -> None:
        console = wide_console()
        decision = done.decision
        console.print(
            f"packet {decision.document_id} of job {decision.job_id} re-split "
            f"({said}: {decision.decided_by}); "
            f"re-ran {', '.join(decision.added)}, kept {', '.join(decision.kept) or 'none'}"
        )
        console.print(f"the packet is {done.rerun.status}: {sections_text(done.rerun.sections or [])}")
        if done.queue is not None:
            console.print(done.queue.sentence())

    emit(args, done.as_json(), human)
    return EXIT_OK
