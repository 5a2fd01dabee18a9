"""``docagent review``: a reviewer's decision stored once beside the result, and the labels it exports,
against moto's S3 (docs/design.md, "Review")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from docagent import cli
from docagent.console.app import chosen_evidence
from docagent.operations.context import OperatorContext, OperatorError, RefusedError
from docagent.operations.json_shapes import validate_output
from docagent.operations.records import JobRecords
from docagent.operations.review import decide, export_labels, parse_corrections, typed_corrections
from docagent.operations.review_evidence import parse_evidence
from docagent.operations.sessions import new_session
from functions import storage
from functions.payloads.document import DocumentResult
from functions.payloads.job import JobInfo, JobManifest, JobVersions, ManifestEntry
from functions.reviews import ChosenEvidence, decision_id
from tests.support import BUCKET, get_json, put_object

JOB = "job-review"
STATE_MACHINE = "arn:aws:states:us-east-1:123456789012:stateMachine:DocAgent-DocumentReview"
VERSIONS = JobVersions(
    model_id="m",
    prompt_version="p",
    prompt_sha256="0" * 64,
    code_version="c",
    created_at="2026-12-01T00:00:00Z",
)
FIELDS = {"policy_number": "POL-000001", "total": "5930.00", "incident_type": "fire"}


def store(document_id: str, index: int, status: str) -> None:
    result = DocumentResult(
        job_id=JOB,
        document_id=document_id,
        key=f"incoming/{JOB}/{document_id}",
        index=index,
        status=status,  # type: ignore[arg-type]
        class_name=None if status == "rejected" else "claim-form",
        fields=None if status == "rejected" else FIELDS,
        error="UnknownPolicy" if status == "rejected" else None,
        reason="above the desk limit" if status == "review" else None,
        versions=VERSIONS,
        format="txt",
        processed_at="2026-12-01T00:00:01Z",
    )
    put_object(storage.result_key(JOB, document_id), result.model_dump_json())
    put_object(result.key, f"claim {document_id}: a pan fire, total 5.930,00 EUR")


class FinishedExecutions:
    """Step Functions, as far as the review commands ask it: every job's execution succeeded."""

    def describe_execution(self, executionArn: str) -> dict[str, Any]:  # noqa: N803 (boto3's name)
        return {"executionArn": executionArn, "status": "SUCCEEDED"}


@pytest.fixture
def records(cloud: None, monkeypatch: pytest.MonkeyPatch) -> JobRecords:
    store("claim-1.txt", 0, "review")
    store("claim-2.txt", 1, "extracted")
    store("claim-3.txt", 2, "review")
    entries = [
        ManifestEntry(document_id=f"claim-{n}.txt", key=f"incoming/{JOB}/claim-{n}.txt", index=n - 1)
        for n in (1, 2, 3)
    ]
    manifest = JobManifest(
        job=JobInfo(job_id=JOB, source_bucket=BUCKET, prefix=f"incoming/{JOB}/", request_sha256="0" * 64),
        versions=VERSIONS,
        entries=entries,
    )
    put_object(storage.manifest_key(JOB), manifest.model_dump_json())
    context = OperatorContext(
        endpoint=None,
        stack_name="DocAgent",
        outputs={"BucketName": BUCKET, "StateMachineArn": STATE_MACHINE},
        session=new_session(),
    )
    context._clients["stepfunctions"] = FinishedExecutions()
    monkeypatch.setattr(OperatorContext, "from_args", classmethod(lambda cls, args: context))
    return JobRecords(context, JOB)


def fresh(records: JobRecords) -> JobRecords:
    return JobRecords(records.ctx, JOB)


def test_a_correction_is_stored_beside_the_result_with_who_and_when(records: JobRecords) -> None:
    decided = decide(
        records, "claim-1.txt", "accepted", typed={"incident_type": "storm"}, by="rita", reason=None
    )
    assert decided.written
    stored = get_json(storage.review_key(JOB, "claim-1.txt"))
    assert stored["decision_id"] == decision_id(JOB, "claim-1.txt")
    assert stored["verdict"] == "accepted" and stored["decided_by"] == "rita" and stored["decided_at"]
    assert stored["fields"] == {**FIELDS, "incident_type": "storm"}
    assert stored["corrections"] == [
        {"field": "incident_type", "extracted": "fire", "corrected": "storm", "evidence": None}
    ]
    # The result itself is what the workflow decided: unchanged.
    assert get_json(storage.result_key(JOB, "claim-1.txt"))["fields"] == FIELDS


def test_the_same_decision_again_writes_nothing_and_another_is_refused(records: JobRecords) -> None:
    first = decide(records, "claim-1.txt", "accepted", typed={"total": "5000.00"}, by="rita", reason=None)
    again = decide(
        fresh(records), "claim-1.txt", "accepted", typed={"total": "5000.00"}, by="sam", reason=None
    )
    assert not again.written
    assert again.decision == first.decision  # who and when of the first: nothing was rewritten
    with pytest.raises(RefusedError) as refused:
        decide(fresh(records), "claim-1.txt", "rejected", typed={}, by="sam", reason="duplicate")
    assert refused.value.error_type == "AlreadyReviewed" and "rita" in str(refused.value)
    assert get_json(storage.review_key(JOB, "claim-1.txt"))["verdict"] == "accepted"


def test_only_a_document_in_review_and_its_own_fields_can_be_decided(records: JobRecords) -> None:
    with pytest.raises(RefusedError) as not_in_review:
        decide(records, "claim-2.txt", "accepted", typed={}, by="rita", reason=None)
    assert not_in_review.value.error_type == "NotInReview"
    with pytest.raises(RefusedError) as missing:
        decide(records, "claim-9.txt", "accepted", typed={}, by="rita", reason=None)
    assert missing.value.exit_code == 3
    with pytest.raises(RefusedError) as unknown:
        decide(records, "claim-1.txt", "accepted", typed={"colour": "red"}, by="rita", reason=None)
    assert unknown.value.error_type == "UnknownField"
    assert storage.review_key(JOB, "claim-1.txt") not in records.keys(storage.reviews_prefix(JOB))


def test_accepted_documents_export_as_labels_with_their_corrections(
    records: JobRecords, tmp_path: Path
) -> None:
    decide(records, "claim-1.txt", "accepted", typed={"total": "5000.00"}, by="rita", reason=None)
    decide(records, "claim-3.txt", "rejected", typed={}, by="rita", reason="not a claim")
    exported = export_labels(fresh(records), tmp_path)
    assert [item["document_id"] for item in exported] == ["claim-1.txt"]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["claim-1.label.json", "claim-1.txt"]
    assert json.loads((tmp_path / "claim-1.label.json").read_text()) == {**FIELDS, "total": "5000.00"}
    assert (tmp_path / "claim-1.txt").read_text().startswith("claim claim-1.txt")


def test_typed_values_keep_the_type_the_model_read() -> None:
    typed = parse_corrections(["total=5930.00", "count=3", 'items=[{"a": 1}]', "name=Ada Lovelace"])
    extracted: dict[str, Any] = {"total": "5930.00", "count": 2, "items": [], "name": None}
    assert typed_corrections(typed, extracted) == {
        "count": 3,  # a number stays a number
        "items": [{"a": 1}],
        "name": "Ada Lovelace",  # not JSON: text
    }  # total: text as the model read it, unchanged: no correction
    with pytest.raises(RefusedError):
        parse_corrections(["no-equals-sign"])


def test_the_review_commands_answer_their_documented_json(
    records: JobRecords, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    def run(*argv: str) -> tuple[int, Any]:
        capsys.readouterr()
        code = cli.main([*argv, "--json"])
        answer = json.loads(capsys.readouterr().out)
        validate_output(" ".join(argv[:2]), answer)  # docs/reference/cli-json.md
        return code, answer

    code, accepted = run(
        "review", "accept", JOB, "claim-1.txt", "--set", "incident_type=storm", "--by", "rita"
    )
    assert code == 0 and accepted["written"] is True and accepted["fields"]["incident_type"] == "storm"
    code, again = run("review", "accept", JOB, "claim-1.txt", "--set", "incident_type=storm", "--by", "rita")
    assert code == 0 and again["written"] is False
    code, refused = run("review", "reject", JOB, "claim-1.txt", "--reason", "changed my mind")
    assert code == 2 and refused["error_type"] == "AlreadyReviewed"
    code, exported = run("review", "export", JOB, str(tmp_path))
    assert code == 0 and [item["document_id"] for item in exported["exported"]] == ["claim-1.txt"]


TEXT_1 = "claim claim-1.txt: a pan fire, total 5.930,00 EUR"  # what store() puts as claim-1.txt


def test_a_correction_records_the_evidence_the_reviewer_chose(records: JobRecords) -> None:
    """The reviewer's evidence is checked against the document and stored beside the corrected value, with
    its span in the page's text; a field confirmed with evidence (its value unchanged) is recorded too."""
    decide(
        records,
        "claim-1.txt",
        "accepted",
        typed={"incident_type": "pan fire"},
        by="rita",
        reason=None,
        evidence={
            "incident_type": ChosenEvidence(page=1, quote="a  PAN fire"),  # found as the grounding finds
            "total": ChosenEvidence(page=1, quote="5.930,00 EUR", start=37, end=49),  # a selection's offsets
        },
    )
    corrections = get_json(storage.review_key(JOB, "claim-1.txt"))["corrections"]
    start = TEXT_1.index("a pan fire")
    assert corrections == [
        {
            "field": "total",
            "extracted": "5930.00",
            "corrected": "5930.00",
            "evidence": {"page": 1, "quote": "5.930,00 EUR", "start": 37, "end": 49},
        },
        {
            "field": "incident_type",
            "extracted": "fire",
            "corrected": "pan fire",
            "evidence": {"page": 1, "quote": "a  PAN fire", "start": start, "end": start + len("a pan fire")},
        },
    ]
    assert TEXT_1[37:49] == "5.930,00 EUR"


@pytest.mark.parametrize(
    ("evidence", "said"),
    [
        (ChosenEvidence(page=1, quote="a kitchen flood"), "'a kitchen flood' is not on page 1"),
        (ChosenEvidence(page=2, quote="a pan fire"), "has 1 page(s), not page 2"),
    ],
)
def test_evidence_the_document_does_not_hold_is_refused_and_nothing_stored(
    records: JobRecords, evidence: ChosenEvidence, said: str
) -> None:
    with pytest.raises(RefusedError) as refused:
        decide(
            records,
            "claim-1.txt",
            "accepted",
            typed={"incident_type": "flood"},
            by="rita",
            reason=None,
            evidence={"incident_type": evidence},
        )
    assert refused.value.error_type == "InvalidEvidence" and said in str(refused.value)
    assert storage.review_key(JOB, "claim-1.txt") not in records.keys(storage.reviews_prefix(JOB))
    with pytest.raises(RefusedError) as unknown:
        decide(
            records, "claim-1.txt", "accepted", typed={}, by="r", reason=None, evidence={"colour": evidence}
        )
    assert unknown.value.error_type == "UnknownField"


def test_evidence_as_typed_and_as_the_console_sends_it() -> None:
    assert parse_evidence(["total=1:5.930,00 EUR"]) == {"total": ChosenEvidence(page=1, quote="5.930,00 EUR")}
    for bad in ("total=5.930,00 EUR", "total=one:5.930", "total=1:", "=1:x", "total=0:x"):
        with pytest.raises(RefusedError):
            parse_evidence([bad])
    form = {
        "field:total": "5930.00",
        "evidence:total": '{"page": 1, "quote": "5.930,00 EUR", "start": 37, "end": 49}',
        "evidence:incident_type": "",  # none chosen
    }
    assert chosen_evidence(form) == {"total": ChosenEvidence(page=1, quote="5.930,00 EUR", start=37, end=49)}
    with pytest.raises(OperatorError):
        chosen_evidence({"evidence:total": '{"page": 0}'})


def test_review_accept_takes_evidence_on_the_command_line(
    records: JobRecords, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [
        "review",
        "accept",
        JOB,
        "claim-1.txt",
        "--set",
        "total=5930",
        "--evidence",
        "total=1:5.930,00 EUR",
    ]
    assert cli.main([*argv, "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    validate_output("review accept", answer)
    assert answer["corrections"][0]["evidence"] == {
        "page": 1,
        "quote": "5.930,00 EUR",
        "start": 37,
        "end": 49,
    }
