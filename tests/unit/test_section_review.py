"""A review item per packet section (docs/design.md, "Review" and "Packets"): each section in review is its
own item (``DOC#s0001-0001``), decided once under its own key, and the report (both paths), the review wait
and the queue follow the section decisions; against moto's S3 and a botocore Stubber for Step Functions."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import ANY, Stubber
from pypdf import PdfReader

from docagent.operations.context import OperatorContext, RefusedError
from docagent.operations.records import JobRecords
from docagent.operations.review import decide, export_labels, queue
from docagent.operations.sessions import new_session
from functions import aws, s3_json, storage
from functions.checks.fields import row_columns
from functions.logic.build_report import build_report
from functions.logic.report_fan_in import merge_report, report_partition, summarize_results
from functions.logic.review_wait import release_if_decided, review_queue
from functions.logic.verify_partition import expected_row
from functions.payloads.common import utc_now
from functions.payloads.document import DocumentResult
from functions.payloads.fan_in import PartitionEvent, SummarizeEvent
from functions.payloads.job import JobInfo, JobManifest, JobOptions, JobVersions, ManifestEntry
from functions.payloads.report import BuildReportEvent, MapRunInfo, ReportRow, SectionRow
from functions.reading.sections import packet_status
from functions.reviews import ChosenEvidence, ReviewWaitRecord, decision_id
from tests.support import BUCKET, example_bundle, get_json, list_keys, publish_definition, put_object

JOB = "job-sections"
PACKET = "packet-0001.pdf"
MIXED = "packet-0002.pdf"  # a packet rejected by one section, another of its sections in review
SINGLE = "claim-0001.txt"
STATE_MACHINE = "arn:aws:states:us-east-1:123456789012:stateMachine:DocAgent-DocumentReview"
PACKET_PDF = Path(__file__).resolve().parents[2] / "examples" / "claims" / "samples" / "packet-0001.pdf"
CLAIM = {
    "policy_number": "POL-204415",
    "claimant": {"name": "Aisha Rahman"},
    "incident_date": "2025-10-18",
    "incident_type": "collision",
    "total": "785.00",
    "currency": "GBP",
}
ESTIMATE = {
    "estimate_number": "BSB-7912",
    "policy_number": "POL-204415",
    "total": "785.00",
    "currency": "GBP",
}


def result(document_id: str, index: int, status: str, **more: Any) -> DocumentResult:
    bundle = example_bundle("claims")
    versions = JobVersions(
        model_id="m",
        prompt_version="p",
        prompt_sha256="0" * 64,
        code_version="c",
        created_at="2026-12-04T00:00:00Z",
        definition=bundle.name,
        definition_sha256=bundle.sha256,
    )
    return DocumentResult(
        job_id=JOB,
        document_id=document_id,
        key=f"incoming/{JOB}/{document_id}",
        index=index,
        status=status,  # type: ignore[arg-type]
        versions=versions,
        format="pdf" if document_id.endswith(".pdf") else "txt",
        processed_at="2026-12-04T00:00:01Z",
        **more,
    )


def section(
    document_id: str, index: int, section_id: str, pages: tuple[int, int], status: str, **more: Any
) -> SectionRow:
    part = result(document_id, index, status, section_id=section_id, pages=pages, **more)
    put_object(storage.section_result_key(JOB, document_id, section_id), part.model_dump_json())
    return part.section_row(row_columns(example_bundle("claims"), part.class_name))


def packet(document_id: str, index: int, rows: list[SectionRow]) -> None:
    status, error, reason = packet_status(rows)
    stored = result(document_id, index, status, error=error, reason=reason, sections=rows)
    put_object(storage.result_key(JOB, document_id), stored.model_dump_json())


@pytest.fixture
def job(cloud: None) -> JobManifest:
    """Three documents: a claim in review (unsplit); a packet whose claim form (page 1) is in review and whose
    repair estimate (pages 2-3) is extracted; a packet whose first section is of no class (rejected) and whose
    second is in review."""
    bundle = example_bundle("claims")
    publish_definition(bundle)
    single = result(SINGLE, 0, "review", class_name="claim-form", fields=CLAIM, reason="above the desk limit")
    put_object(storage.result_key(JOB, SINGLE), single.model_dump_json())
    claim = {"class_name": "claim-form", "fields": CLAIM}
    packet(
        PACKET,
        1,
        [
            section(
                PACKET, 1, "s0001-0001", (1, 1), "review", reason="incident_date is not grounded", **claim
            ),
            section(
                PACKET, 1, "s0002-0003", (2, 3), "extracted", class_name="repair-estimate", fields=ESTIMATE
            ),
        ],
    )
    packet(
        MIXED,
        2,
        [
            section(
                MIXED, 2, "s0001-0001", (1, 1), "rejected", error="UnknownDocumentClass", reason="no class"
            ),
            section(MIXED, 2, "s0002-0002", (2, 2), "review", reason="above the desk limit", **claim),
        ],
    )
    put_object(f"incoming/{JOB}/{PACKET}", PACKET_PDF.read_bytes())
    entries = [
        ManifestEntry(document_id=name, key=f"incoming/{JOB}/{name}", index=index)
        for index, name in enumerate([SINGLE, PACKET, MIXED])
    ]
    manifest = JobManifest(
        job=JobInfo(job_id=JOB, source_bucket=BUCKET, prefix=f"incoming/{JOB}/", request_sha256="0" * 64),
        versions=single.versions,
        entries=entries,
    )
    put_object(storage.manifest_key(JOB), manifest.model_dump_json())
    return manifest


class FinishedExecutions:
    def describe_execution(self, executionArn: str) -> dict[str, Any]:  # noqa: N803 (boto3's name)
        return {"executionArn": executionArn, "status": "SUCCEEDED"}


@pytest.fixture
def records(job: JobManifest) -> JobRecords:
    context = OperatorContext(
        endpoint=None,
        stack_name="DocAgent",
        outputs={"BucketName": BUCKET, "StateMachineArn": STATE_MACHINE},
        session=new_session(),
    )
    context._clients["stepfunctions"] = FinishedExecutions()
    return JobRecords(context, JOB)


def fresh(records: JobRecords) -> JobRecords:
    return JobRecords(records.ctx, JOB)


def test_a_review_item_is_a_document_or_a_section_and_its_key_names_both() -> None:
    assert storage.review_item("a.pdf") == "a.pdf"
    assert storage.review_item("a.pdf", "s0001-0002") == "a.pdf#s0001-0002"
    assert storage.review_item_parts("a.pdf#s0001-0002") == ("a.pdf", "s0001-0002")
    assert storage.review_item_parts("a.pdf") == ("a.pdf", None)
    key = storage.review_item_key("j", "a.pdf#s0001-0002")
    assert key == storage.section_review_key("j", "a.pdf", "s0001-0002")
    assert key == "jobs/j/reviews/a.pdf/sections/s0001-0002.json"
    prefix = storage.reviews_prefix("j")
    assert storage.review_item_of_key(prefix, key) == "a.pdf#s0001-0002"
    assert storage.review_item_of_key(prefix, storage.review_key("j", "a.pdf")) == "a.pdf"
    assert storage.review_item_of_key(prefix, f"{prefix}a.pdf/other/s0001-0002.json") is None
    assert storage.review_item_of_key(prefix, f"{prefix}a.pdf.txt") is None
    assert decision_id("j", "a.pdf", "s0001-0002") != decision_id("j", "a.pdf")


def test_the_queue_holds_each_section_in_review_with_its_own_class_fields_and_pages(
    records: JobRecords,
) -> None:
    items = {item["item"]: item for item in queue(records)}
    assert set(items) == {SINGLE, f"{PACKET}#s0001-0001", f"{MIXED}#s0002-0002"}
    claim_form = items[f"{PACKET}#s0001-0001"]
    assert (claim_form["document_id"], claim_form["section_id"], claim_form["pages"]) == (
        PACKET,
        "s0001-0001",
        [1, 1],
    )
    assert claim_form["class_name"] == "claim-form" and claim_form["fields"] == CLAIM
    assert claim_form["reason"] == "incident_date is not grounded" and claim_form["decision"] is None
    assert (items[SINGLE]["section_id"], items[SINGLE]["pages"]) == (None, None)


def test_a_section_decision_is_stored_once_under_its_document_and_section(records: JobRecords) -> None:
    item = f"{PACKET}#s0001-0001"
    decided = decide(records, item, "accepted", typed={"incident_date": "2025-10-17"}, by="rita", reason=None)
    assert decided.written
    stored = get_json(storage.section_review_key(JOB, PACKET, "s0001-0001"))
    assert (stored["document_id"], stored["section_id"]) == (PACKET, "s0001-0001")
    assert stored["decision_id"] == decision_id(JOB, PACKET, "s0001-0001")
    assert stored["fields"]["incident_date"] == "2025-10-17" and stored["class_name"] == "claim-form"
    assert decided.as_json()["item"] == item
    assert decided.as_json()["review_key"] == storage.section_review_key(JOB, PACKET, "s0001-0001")
    again = decide(
        fresh(records), item, "accepted", typed={"incident_date": "2025-10-17"}, by="sam", reason=None
    )
    assert not again.written and again.decision == decided.decision
    with pytest.raises(RefusedError) as refused:
        decide(fresh(records), item, "rejected", typed={}, by="sam", reason="no")
    assert refused.value.error_type == "AlreadyReviewed" and "section s0001-0001" in str(refused.value)
    assert fresh(records).reviews[item].section_id == "s0001-0001"
    # the packet's own result and its document's key hold no decision
    assert not list_keys(storage.review_key(JOB, PACKET))


def test_a_packet_is_not_an_item_nor_is_a_section_out_of_review(records: JobRecords) -> None:
    with pytest.raises(RefusedError) as whole:
        decide(records, PACKET, "accepted", typed={}, by="rita", reason=None)
    assert whole.value.error_type == "NotInReview" and f"{PACKET}#s0001-0001" in str(whole.value)
    with pytest.raises(RefusedError) as extracted:
        decide(records, f"{PACKET}#s0002-0003", "accepted", typed={}, by="rita", reason=None)
    assert extracted.value.error_type == "NotInReview" and "is extracted" in str(extracted.value)
    with pytest.raises(RefusedError) as missing:
        decide(records, f"{PACKET}#s0004-0004", "accepted", typed={}, by="rita", reason=None)
    assert missing.value.error_type == "DocumentNotFound"


def test_evidence_outside_the_sections_pages_is_refused(records: JobRecords) -> None:
    chosen = {"total": ChosenEvidence(page=1, quote="785.00")}
    with pytest.raises(RefusedError) as refused:
        decide(records, f"{MIXED}#s0002-0002", "accepted", typed={}, by="r", reason=None, evidence=chosen)
    assert refused.value.error_type == "InvalidEvidence"
    outside = {"total": ChosenEvidence(page=2, quote="785.00")}
    with pytest.raises(RefusedError) as other:
        decide(records, f"{PACKET}#s0001-0001", "accepted", typed={}, by="r", reason=None, evidence=outside)
    assert "pages 1-1, not page 2" in str(other.value)


def report_both_ways(job_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The report of a job that waited for review, by the one-pass path and by the fan-in."""
    options = JobOptions(wait_for_review=True)
    event = BuildReportEvent(job_id=job_id, map_run=MapRunInfo(), options=options)
    build_report(event)
    one_pass = get_json(storage.report_key(job_id))
    plan = summarize_results(SummarizeEvent(action="summarize", job_id=job_id, map_run=MapRunInfo()))
    for partition in plan.partitions:
        report_partition(
            PartitionEvent(action="partial", job_id=job_id, partition=partition, options=options)
        )
    merge_report(event, plan)
    fan_in = get_json(storage.report_key(job_id))
    one_pass.pop("table", None)
    fan_in.pop("table", None)
    return one_pass, fan_in


def test_the_report_applies_each_sections_decision_and_the_packet_follows_its_worst_section(
    records: JobRecords,
) -> None:
    before, _ = report_both_ways(JOB)
    assert (before["review"], before["rejected"], before["sections"]) == (2, 1, 4)
    decide(
        records, f"{PACKET}#s0001-0001", "accepted", typed={"total": "790.00"}, by="rita", reason="checked"
    )
    decide(fresh(records), f"{MIXED}#s0002-0002", "rejected", typed={}, by="sam", reason="a duplicate")
    one_pass, fan_in = report_both_ways(JOB)
    assert one_pass == fan_in
    rows = {row["document_id"]: row for row in one_pass["rows"]}
    accepted = rows[PACKET]
    assert (accepted["status"], accepted["error"], accepted["reason"]) == ("extracted", None, None)
    claim_form = accepted["sections"][0]
    assert (claim_form["status"], claim_form["fields"]["total"], claim_form["reason"]) == (
        "extracted",
        "790.00",
        "checked",
    )
    mixed = rows[MIXED]
    assert (
        mixed["status"] == "rejected" and mixed["error"] == "UnknownDocumentClass"
    )  # its first worst section
    assert mixed["sections"][1]["status"] == "rejected" and mixed["sections"][1]["error"] == "ReviewRejected"
    assert "rejected in review by sam: a duplicate" in mixed["sections"][1]["reason"]
    assert rows[SINGLE]["status"] == "review"  # no decision: it stays
    assert (one_pass["extracted"], one_pass["review"], one_pass["rejected"]) == (1, 1, 1)
    # the accepted sections count in the totals, the corrected total among them
    assert one_pass["totals"]["total-by-currency"] == {"GBP": "1575.00"}
    # verify_job expects the decided packet row for the stored packet result (and not the undecided one)
    stored = s3_json.get_result(JOB, PACKET)
    assert stored is not None and stored.status == "review"
    decided_row = ReportRow.model_validate(accepted)
    assert expected_row(stored, decided_row) == decided_row
    undecided = stored.report_row(list(decided_row.fields))
    assert expected_row(stored, undecided) == undecided  # a job that did not wait shows the workflow's row
    wrong = decided_row.model_copy(update={"sections": [undecided.sections[0], decided_row.sections[1]]})  # type: ignore[index]
    assert expected_row(stored, wrong) == decided_row != wrong  # a row with the decision half applied: caught


def test_without_the_wait_the_report_keeps_what_the_workflow_decided(records: JobRecords) -> None:
    decide(records, f"{PACKET}#s0001-0001", "rejected", typed={}, by="rita", reason="no")
    build_report(BuildReportEvent(job_id=JOB, map_run=MapRunInfo()))
    rows = {row["document_id"]: row for row in get_json(storage.report_key(JOB))["rows"]}
    assert rows[PACKET]["status"] == "review" and rows[PACKET]["sections"][0]["status"] == "review"


@pytest.fixture
def states(monkeypatch: pytest.MonkeyPatch) -> Iterator[Stubber]:
    client = boto3.client("stepfunctions", region_name="us-east-1")
    stub = Stubber(client)
    stub.activate()
    monkeypatch.setattr(aws, "stepfunctions_client", functools.cache(lambda: client))
    yield stub
    stub.assert_no_pending_responses()


def test_the_wait_queues_section_items_and_is_released_when_every_one_is_decided(
    records: JobRecords, states: Stubber
) -> None:
    records.ctx._clients["stepfunctions"] = states.client  # the reviewer's Step Functions: the stub
    items = review_queue(JOB, MapRunInfo())
    assert items == [SINGLE, f"{PACKET}#s0001-0001", f"{MIXED}#s0002-0002"]  # job order, pages in order
    now = utc_now()
    record = ReviewWaitRecord(
        job_id=JOB,
        status="waiting",
        task_token="token",
        documents=items,
        requested_at=now,
        token_updated_at=now,
    )
    s3_json.put_json(storage.review_wait_key(JOB), record)
    decide(records, SINGLE, "accepted", typed={}, by="rita", reason=None)
    waiting = decide(fresh(records), f"{PACKET}#s0001-0001", "accepted", typed={}, by="rita", reason=None)
    assert waiting.queue is not None and waiting.queue.wait.status == "waiting"
    assert (waiting.queue.wait.documents, waiting.queue.wait.decided) == (3, 2)
    assert fresh(records).review_wait() is not None
    assert fresh(records).review_wait()["undecided"] == [f"{MIXED}#s0002-0002"]  # type: ignore[index]
    states.add_response("send_task_success", {}, {"taskToken": "token", "output": ANY})
    last = decide(fresh(records), f"{MIXED}#s0002-0002", "rejected", typed={}, by="sam", reason="no")
    assert last.queue is not None and last.queue.sent and last.queue.wait.status == "released"
    stored = ReviewWaitRecord.model_validate(get_json(storage.review_wait_key(JOB)))
    assert stored.status == "released" and stored.released_by == "reviewer sam"
    # released: a repeat sends nothing
    assert release_if_decided(stored, by="WaitForReview")[0].status == "released"


def test_an_accepted_section_is_exported_as_its_pages_alone_with_its_label(
    records: JobRecords, tmp_path: Path
) -> None:
    decide(records, f"{PACKET}#s0001-0001", "accepted", typed={"total": "790.00"}, by="rita", reason=None)
    [exported] = export_labels(fresh(records), tmp_path)
    assert exported["item"] == f"{PACKET}#s0001-0001"
    sample = tmp_path / "claim-form" / "packet-0001-s0001-0001.pdf"
    assert len(PdfReader(sample).pages) == 1
    label = get_label(tmp_path / "claim-form" / "packet-0001-s0001-0001.label.json")
    assert label["total"] == "790.00" and label["policy_number"] == "POL-204415"


def get_label(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text())
    assert isinstance(data, dict)
    return data
