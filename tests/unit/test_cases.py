"""A packet is a case (issue #53; job.json ``case``, functions/checks/cases.py): on a copy of examples/claims
given a case block, process_document (on moto, answered by the local Bedrock from the copy's labels) checks
each packet of several sections once they are stored, as the durable step ``case``:

- packet-0001 (its claim, 785.00, over its repair estimate, 725.00, by 8.3 %): review naming the case rule;
  with a 10 % tolerance the same packet is extracted;
- packet-0002 (two claim forms, no repair estimate): review naming the missing class;

and ``definition validate`` refuses a required class no section can be of, and a case rule's expression that
does not compile, each in one line."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path
from typing import Any

import boto3
import pytest
from pypdf import PdfReader, PdfWriter

from docagent.console import views
from docagent.console.app import ReviewConsole
from docagent.evaluation.figures import DefinitionVersion
from docagent.evaluation.labelled_sets import definition_of, read_samples
from docagent.evaluation.runs import match_results
from docagent.evaluation.scoring import evaluate
from docagent.kit.loader import read_bundle
from docagent.kit.validate import validate
from docagent.localcloud.bedrock.labels import read_labels
from docagent.operations.context import OperatorContext
from docagent.operations.sessions import new_session
from docagent.operations.step_records import document_steps
from functions import s3_json, storage
from functions.checks import cases
from functions.definition.case_spec import CaseSpec
from functions.definition.job_spec import JobDefinition
from functions.durability import durable
from functions.logic.process_document import process_document
from functions.payloads.document import DocumentOutcome, DocumentResult
from functions.payloads.job import PreparedJob
from functions.payloads.report import CaseOutcome, ReportRow, SectionRow
from functions.reading.sections import packet_status
from functions.reviews import ReviewDecision, reviewed_packet
from tests.fakes import FakeLambdaContext
from tests.support import (
    BUCKET,
    EXAMPLES,
    IDEMPOTENCY_TABLE,
    PREFIX,
    REFERENCE_TABLE,
    document_event,
    items,
    prepare,
    put_object,
)
from tests.unit.test_derived_fields_job import LabelModel

CLAIMS = EXAMPLES / "claims"
WITHIN = "claim-within-estimates"
# the claim's total against the sum of its repair estimates' totals, with a tolerance of 5 %
EXPRESSION = (
    "$sum($sections.`claim-form`.fields.$number(total)) <= "
    "{tolerance} * $sum($sections.`repair-estimate`.fields.$number(total))"
)


def case_block(tolerance: str = "1.05") -> dict[str, Any]:
    return {
        "requires": ["claim-form", {"class": "repair-estimate", "min": 1}],
        "checks": [
            {
                "type": "rule",
                "name": WITHIN,
                "expression": EXPRESSION.format(tolerance=tolerance),
                "on_fail": "review",
                "error": "ClaimAboveEstimates",
                "message": "the claim is over its repair estimates by more than 5 %",
            }
        ],
    }


def claims_copy(folder: Path, case: dict[str, Any] | None = None) -> Path:
    """examples/claims with ``case`` in its job.json (None: the example's own) and packet-0002: packet-0001's
    claim form followed by claim-0001's (two claims, no repair estimate), labelled."""
    copy = folder / "claims"
    shutil.copytree(CLAIMS, copy)
    if case is not None:
        job = json.loads((copy / "job.json").read_text())
        (copy / "job.json").write_text(json.dumps({**job, "case": case}))
    samples = copy / "samples"
    writer = PdfWriter()
    writer.add_page(PdfReader(samples / "packet-0001.pdf").pages[0])
    writer.add_page(PdfReader(samples / "claim-form" / "claim-0001.pdf").pages[0])
    buffer = io.BytesIO()
    writer.write(buffer)
    (samples / "packet-0002.pdf").write_bytes(buffer.getvalue())
    first = json.loads((samples / "packet-0001.label.json").read_text())["sections"][0]
    second = json.loads((samples / "claim-form" / "claim-0001.label.json").read_text())
    label = {"sections": [first, {"class": "claim-form", "pages": [2, 2], "fields": second}]}
    (samples / "packet-0002.label.json").write_text(json.dumps(label))
    return copy


def load_policies() -> None:
    with (CLAIMS / "references" / "policies.csv").open(newline="") as rows:
        for row in csv.DictReader(rows):
            item = {"table": {"S": "policies"}, "key": {"S": row["policy_number"]}}
            item |= {name: {"S": value} for name, value in row.items()}
            boto3.client("dynamodb").put_item(TableName=REFERENCE_TABLE, Item=item)


def run_packets(folder: Path, job_id: str) -> tuple[PreparedJob, dict[str, DocumentOutcome]]:
    load_policies()
    samples = folder / "samples"
    for name in ("packet-0001.pdf", "packet-0002.pdf"):
        put_object(f"{PREFIX}{name}", (samples / name).read_bytes())
    job = prepare(job_id, definition=read_bundle(folder))
    model = LabelModel(read_labels(folder))
    outcomes = {
        entry.document_id: process_document(document_event(job, entry), FakeLambdaContext(), provider=model)
        for entry in items(job)
    }
    return job, outcomes


def packet(job_id: str, document_id: str) -> DocumentResult:
    result = s3_json.get_result(job_id, document_id)
    assert result is not None and result.sections is not None
    return result


# -------------------------------------------------------------------------------------- the claims packets


def test_a_claim_over_its_estimates_and_a_packet_without_an_estimate_end_in_review(
    cloud: None, tmp_path: Path
) -> None:
    folder = claims_copy(tmp_path, case_block())
    assert validate(folder) == []
    job, outcomes = run_packets(folder, "job-cases")
    assert {name: outcome.status for name, outcome in outcomes.items()} == {
        "packet-0001.pdf": "review",
        "packet-0002.pdf": "review",
    }
    over = packet(job.job_id, "packet-0001.pdf")
    assert [section.status for section in over.sections or []] == ["extracted", "extracted"]
    assert over.case == CaseOutcome(
        status="review",
        reason=f"case rule {WITHIN}: the claim is over its repair estimates by more than 5 %",
    )
    assert over.reason == over.case.reason and over.error is None
    assert [(c.name, c.type, c.passed) for c in over.checks] == [
        ("claim-form", "requires", True),
        ("repair-estimate", "requires", True),
        (WITHIN, "rule", False),
    ]
    assert document_steps(read_bundle(folder), over)[-1] == cases.CASE_STEP  # inspect's steps of it
    row = outcomes["packet-0001.pdf"].row
    assert row is not None and (row.status, row.reason, row.case) == ("review", over.reason, over.case)

    missing = packet(job.job_id, "packet-0002.pdf")
    assert [(s.class_name, s.status) for s in missing.sections or []] == [
        ("claim-form", "extracted"),
        ("claim-form", "extracted"),
    ]
    assert missing.reason is not None
    assert missing.reason.startswith("case requires repair-estimate: the case has no repair-estimate")
    assert missing.checks[1].error == "CaseIncomplete"
    # the rule read no estimate: 0 is not above 1.05 x 0 for two claims of 785.00 and 1820.50
    assert f"case rule {WITHIN}" in missing.reason

    # the case step is durable: its record is what a retry after a crash before the packet's result reuses
    ids = {"job_id": job.job_id, "document_id": "packet-0001.pdf"}
    record = boto3.client("dynamodb").get_item(
        TableName=IDEMPOTENCY_TABLE, Key={"id": {"S": durable.record_key(cases.CASE_STEP, ids)}}
    )
    assert record["Item"]["status"]["S"] == "COMPLETED"


def test_within_the_tolerance_the_packet_is_extracted_and_a_retry_reuses_the_case_step(
    cloud: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = claims_copy(tmp_path, case_block(tolerance="1.10"))
    job, outcomes = run_packets(folder, "job-cases-within")
    assert outcomes["packet-0001.pdf"].status == "extracted"
    within = packet(job.job_id, "packet-0001.pdf")
    assert within.case == CaseOutcome(status="extracted") and all(c.passed for c in within.checks)

    # a crash after the case step, before the packet's result: the retry checks nothing again
    boto3.client("s3").delete_object(Bucket=BUCKET, Key=storage.result_key(job.job_id, "packet-0001.pdf"))

    def again(*_: object) -> None:
        raise AssertionError("the case step ran again")

    monkeypatch.setattr(cases, "check_case", again)
    [entry] = [entry for entry in items(job) if entry.document_id == "packet-0001.pdf"]
    model = LabelModel(read_labels(folder))
    retried = process_document(document_event(job, entry, retry_count=1), FakeLambdaContext(), provider=model)
    assert retried.status == "extracted"


def test_the_claims_examples_own_case_accepts_its_packet_and_names_what_two_claims_lack(
    cloud: None, tmp_path: Path
) -> None:
    """examples/claims' case: a claim form and a repair estimate, for one policy, in one currency."""
    job, outcomes = run_packets(claims_copy(tmp_path), "job-cases-example")
    assert outcomes["packet-0001.pdf"].status == "extracted"
    accepted = packet(job.job_id, "packet-0001.pdf")
    assert [(c.name, c.passed) for c in accepted.checks] == [
        ("claim-form", True),
        ("repair-estimate", True),
        ("one-policy", True),
        ("one-currency", True),
    ]
    two_claims = packet(job.job_id, "packet-0002.pdf")  # POL-204415 in GBP, POL-100234 in EUR
    assert two_claims.case is not None and two_claims.case.reason is not None
    assert [c.name for c in two_claims.checks if not c.passed] == [
        "repair-estimate",
        "one-policy",
        "one-currency",
    ]
    assert two_claims.case.reason.split("; ") == [
        "case requires repair-estimate: the case has no repair-estimate: it requires at least 1",
        "case rule one-policy: the packet's claim and estimates are for different policies",
        "case rule one-currency: the packet's claim and estimates are in different currencies",
    ]


def test_eval_names_each_section_of_a_packet_whose_case_failed(cloud: None, tmp_path: Path) -> None:
    folder = claims_copy(tmp_path, case_block())
    job, _ = run_packets(folder, "job-cases-eval")
    definition = definition_of(read_bundle(folder))
    samples = [s for s in read_samples(folder / "samples", definition) if s.name.startswith("packet-")]
    packets = [packet(job.job_id, name) for name in ("packet-0001.pdf", "packet-0002.pdf")]
    sections = {
        (result.document_id, row.section_id): s3_json.get_section_result(
            job.job_id, result.document_id, row.section_id
        )
        for result in packets
        for row in result.sections or []
    }
    matched = match_results(packets, samples, definition, sections)  # type: ignore[arg-type]
    version = DefinitionVersion(name=definition.name)
    run = evaluate(definition, samples, matched, mode="labels", version=version)
    cases = {document.sample: document.case for document in run.documents}
    rule = f"review: case rule {WITHIN}: the claim is over its repair estimates by more than 5 %"
    assert cases["packet-0001.pdf#s0001-0001"] == cases["packet-0001.pdf#s0002-0003"] == rule
    assert str(cases["packet-0002.pdf#s0001-0001"]).startswith("review: case requires repair-estimate")
    assert {document.score for document in run.documents} == {1.0}  # its sections' fields as labelled


# ------------------------------------------------------------------------------------------ the status


def row(section_id: str, status: str, reason: str | None = None, error: str | None = None) -> SectionRow:
    first = int(section_id[1:5])
    return SectionRow(
        section_id=section_id,
        pages=(first, first),
        status=status,
        reason=reason,
        error=error,
    )


def test_a_packets_status_is_the_worse_of_its_sections_and_its_case() -> None:
    extracted = [row("s0001-0001", "extracted"), row("s0002-0002", "extracted")]
    review = CaseOutcome(status="review", reason="case rule r: no")
    rejected = CaseOutcome(status="rejected", error="CaseIncomplete", reason="case requires x: none")
    assert packet_status(extracted, CaseOutcome(status="extracted")) == ("extracted", None, None)
    assert packet_status(extracted, review) == ("review", None, "case rule r: no")
    in_review = [row("s0001-0001", "review", "low"), row("s0002-0002", "extracted")]
    assert packet_status(in_review, review) == (
        "review",
        None,
        "section s0001-0001 (pages 1-1): low; case rule r: no",
    )
    assert packet_status(in_review, rejected) == ("rejected", "CaseIncomplete", "case requires x: none")
    bad = [row("s0001-0001", "rejected", "gone", "UnknownPolicy")]
    assert packet_status(bad, review) == ("rejected", "UnknownPolicy", "section s0001-0001 (pages 1-1): gone")


def test_a_reviewed_section_leaves_the_packet_in_review_while_its_case_fails() -> None:
    """Accepting the section in review does not clear the case: the packet's row stays in review by it."""
    sections = [row("s0001-0001", "review", "low"), row("s0002-0002", "extracted")]
    case = CaseOutcome(status="review", reason="case rule r: no")
    status, _, reason = packet_status(sections, case)
    packet_row = {"document_id": "p.pdf", "index": 0, "key": "k/p.pdf", "status": status, "reason": reason}
    decision = ReviewDecision.model_validate(
        {
            "decision_id": "0" * 32,
            "job_id": "job-x",
            "document_id": "p.pdf",
            "section_id": "s0001-0001",
            "verdict": "accepted",
            "class_name": None,
            "fields": {},
            "decided_by": "ana",
            "decided_at": "2026-12-07T00:00:00Z",
        }
    )
    reviewed = reviewed_packet(
        ReportRow.model_validate({**packet_row, "sections": sections, "case": case}),
        {storage.review_item("p.pdf", "s0001-0001"): decision},
        None,
    )
    assert reviewed.sections is not None and reviewed.sections[0].status == "extracted"
    assert (reviewed.status, reviewed.reason) == ("review", "case rule r: no")


def test_the_console_shows_a_packets_case_on_its_row_and_page(cloud: None, tmp_path: Path) -> None:
    job, _ = run_packets(claims_copy(tmp_path, case_block()), "job-cases-console")
    over = packet(job.job_id, "packet-0001.pdf")
    row = views.DocumentRow(
        document_id="packet-0001.pdf", index=0, outcome="review", result=over, review=None
    )
    assert row.key_fields().endswith("(pages 2-3) extracted; case review")
    console = ReviewConsole(
        OperatorContext(endpoint=None, stack_name="DocAgent", outputs={}, session=new_session()), "tester"
    )
    view = views.DocumentView(
        job_id=job.job_id, document_id="packet-0001.pdf", index=0, key=over.key, result=over, review=None,
        calls=[], text=None, text_note="a PDF", is_pdf=True, trace=None, job_status="SUCCEEDED",
    )  # fmt: skip
    page = console.render("document.html", doc=view, reviewer="tester", field_text=str, said=None).decode()
    assert f"case rule {WITHIN}: the claim is over its repair estimates by more than 5 %" in page
    assert "repair-estimate (requires)" in page
    assert f"{WITHIN} (rule, review: <code>ClaimAboveEstimates" in page


# ---------------------------------------------------------------------------------------------- validate


def test_validate_refuses_a_required_class_no_section_is_of_and_a_rule_that_does_not_compile(
    tmp_path: Path,
) -> None:
    block = case_block()
    block["requires"].append({"class": "payslip"})
    block["checks"][0]["expression"] = "$sum(sections.("
    folder = claims_copy(tmp_path, block)
    problems = [problem for problem in validate(folder) if problem.where.startswith("$.case")]
    assert [(p.where, p.message.split(":")[0]) for p in problems] == [
        ("$.case.requires[2].class", "case requires 'payslip', which is no section's class (a packet's sections are of claim-form, repair-estimate)"),  # noqa: E501
        ("$.case.checks[0].expression", f"case rule {WITHIN!r}"),
    ]  # fmt: skip
    assert "does not compile" in problems[1].message
    assert (
        problems[0].fix == "name one of the classes a packet's sections are of: claim-form, repair-estimate"
    )
    assert all("\n" not in p.line() for p in problems)


def test_a_case_is_written_as_names_or_requirements_and_dumps_only_when_set() -> None:
    spec = CaseSpec.model_validate({"requires": ["a", {"class": "b", "min": 2, "max": 3}]})
    assert [(r.class_name, r.min, r.max) for r in spec.requires] == [("a", 1, None), ("b", 2, 3)]
    with pytest.raises(ValueError, match="max 1 is below min 2"):
        CaseSpec.model_validate({"requires": [{"class": "b", "min": 2, "max": 1}]})
    job = json.loads((CLAIMS / "job.json").read_text())
    assert "case" in JobDefinition.model_validate(job).model_dump(mode="json", by_alias=True)
    del job["case"]
    assert "case" not in JobDefinition.model_validate(job).model_dump(mode="json", by_alias=True)
    with pytest.raises(ValueError, match="two case checks are named 'r'"):
        rule = {"type": "rule", "name": "r", "expression": "true"}
        JobDefinition.model_validate({**job, "case": {"checks": [rule, rule]}})
