"""process_document with a definition of two classes (built here): classification as a durable, journalled
step never repeated after a crash, unknown classes, rule and lookup checks with the review outcome, lookups as
durable steps, and jobs whose definition is missing."""

from __future__ import annotations

import time
from typing import Any

import boto3
import pytest

from functions import s3_json, storage
from functions.checks import references
from functions.definition.job_spec import DefinitionBundle, canonical_json
from functions.logic.build_report import build_report
from functions.logic.process_document import process_document
from functions.logic.verify_job import verify_job
from functions.payloads.document import DocumentResult
from functions.payloads.job import FaultSpec, JobOptions, PreparedJob
from functions.payloads.report import BuildReportEvent, MapRunInfo, Report
from functions.payloads.verification import VerifyJobEvent
from functions.settings import get_settings
from tests.fakes import CountingProvider, FakeLambdaContext, SimulatedCrash
from tests.moto_state import build_once
from tests.support import (
    PREFIX,
    REFERENCE_TABLE,
    RequestLog,
    actions,
    document_event,
    get_json,
    items,
    prepare,
    process_all,
    put_object,
    report,
)

CLAIM_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "additionalProperties": False,
    "required": ["policy", "filed", "total", "items"],
    "properties": {
        "policy": {"type": "string", "pattern": "^P-[0-9]{4}$", "x-normalise": "upper"},
        "filed": {"type": "string", "format": "date", "x-normalise": "date"},
        "total": {"type": "string", "x-normalise": "amount"},
        "currency": {"type": "string", "x-normalise": "upper"},
        "items": {"type": "array", "items": {"type": "string"}, "minItems": 1},
    },
}
LETTER_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["sender"],
    "properties": {"sender": {"type": "string", "description": "who wrote it", "x-normalise": "strip"}},
}


def two_classes() -> DefinitionBundle:
    definition = {
        "name": "claims",
        "classes": {
            "claim": {
                "description": "an insurance claim with a policy number and the items claimed",
                "schema": "claim.json",
                "checks": [
                    {"type": "rule", "name": "filed-in-past", "field": "filed", "not_after": "today",
                     "on_fail": "reject", "error": "FiledInFuture"},
                    {"type": "rule", "name": "small", "field": "total", "maximum": 5000},
                    {"type": "lookup", "name": "known-policy", "field": "policy", "table": "policies",
                     "attach": "policy", "message": "policy {value} is unknown"},
                ],
            },
            "letter": {"description": "a letter from a policy holder", "schema": "letter.json"},
        },
        "totals": [{"name": "claimed", "sum": "total", "by": "currency"}],
    }  # fmt: skip
    return DefinitionBundle.model_validate(
        {
            "definition": definition,
            "classes": {
                "claim": {"spec": definition["classes"]["claim"], "schema": CLAIM_SCHEMA},  # type: ignore[index]
                "letter": {"spec": definition["classes"]["letter"], "schema": LETTER_SCHEMA},  # type: ignore[index]
            },
        }
    )


def claim(policy: str, total: str, filed: str = "2026-01-10") -> dict[str, Any]:
    return {"policy": policy, "filed": filed, "total": total, "currency": "eur", "items": ["roof"]}


DOCUMENTS = {
    "a-claim.txt": ("CLAIM P-0001 roof 1.200,00 EUR filed 10.01.2026", "claim", claim("p-0001", "1.200,00")),
    "b-big-claim.txt": ("CLAIM P-0001 roof 9000 EUR filed 10.01.2026", "claim", claim("P-0001", "9000")),
    "c-unknown-policy.txt": ("CLAIM P-0999 roof 10 EUR filed 10.01.2026", "claim", claim("P-0999", "10")),
    "d-future.txt": (
        "CLAIM P-0001 roof 10 EUR filed 01.01.2099",
        "claim",
        claim("P-0001", "10", "2099-01-01"),
    ),
    "e-letter.txt": ("Dear insurer, Ada", "letter", {"sender": " Ada "}),
    "f-recipe.txt": ("Pancakes: flour, eggs, milk", None, None),
    "g-memo.txt": ("Memo to staff", "memo", None),
}


def provider(**kwargs: Any) -> CountingProvider:
    return CountingProvider(
        {text: reply for text, _, reply in DOCUMENTS.values() if reply is not None},
        classes={text: name for text, name, _ in DOCUMENTS.values()},
        **kwargs,
    )


@pytest.fixture
def job(cloud: None) -> PreparedJob:
    def build() -> PreparedJob:
        boto3.client("dynamodb").put_item(
            TableName=REFERENCE_TABLE,
            Item={
                "table": {"S": "policies"},
                "key": {"S": "P-0001"},
                "holder": {"S": "Ada"},
                "n": {"N": "2"},
            },
        )
        for name, (text, _, _) in DOCUMENTS.items():
            put_object(f"{PREFIX}{name}", text)
        return prepare("job-claims", definition=two_classes())

    return build_once("process_definition.job", build)


def result(document_id: str) -> DocumentResult:
    found = s3_json.get_result("job-claims", document_id)
    assert found is not None
    return found


def test_each_document_is_classified_then_extracted_and_checked(job: PreparedJob) -> None:
    model = provider()
    outcomes = process_all(job, model)

    assert {doc: (o.status, o.error) for doc, o in outcomes.items()} == {
        "a-claim.txt": ("extracted", None),
        "b-big-claim.txt": ("review", None),
        "c-unknown-policy.txt": ("rejected", "NotInReference"),
        "d-future.txt": ("rejected", "FiledInFuture"),
        "e-letter.txt": ("extracted", None),
        "f-recipe.txt": ("rejected", "UnknownDocumentClass"),
        "g-memo.txt": ("rejected", "UnknownDocumentClass"),
    }
    accepted = result("a-claim.txt")
    assert (accepted.class_name, accepted.fields) == (
        "claim",
        {"policy": "P-0001", "filed": "2026-01-10", "total": "1200.00", "currency": "EUR", "items": ["roof"]},
    )
    assert accepted.attached == {"policy": {"holder": "Ada", "n": 2}}
    assert [(c.name, c.type, c.passed) for c in accepted.checks] == [
        ("filed-in-past", "rule", True), ("small", "rule", True), ("known-policy", "lookup", True),
    ]  # fmt: skip
    assert outcomes["a-claim.txt"].row is not None
    assert outcomes["a-claim.txt"].row.fields == {
        "policy": "P-0001", "filed": "2026-01-10", "total": "1200.00", "currency": "EUR",
    }  # fmt: skip
    review = result("b-big-claim.txt")
    assert (review.error, review.reason) == (None, "total 9000.00 is above the maximum 5000")
    assert result("c-unknown-policy.txt").reason == "policy P-0999 is unknown"
    assert result("c-unknown-policy.txt").attached == {}
    assert result("e-letter.txt").fields == {"sender": "Ada"}
    recipe, memo = result("f-recipe.txt"), result("g-memo.txt")
    assert "the classes are claim, letter; the model answered none of them" in str(recipe.reason)
    assert "'memo', not one of them" in str(memo.reason)
    assert (recipe.model_call_id, recipe.fields) == (None, None)  # no extraction of a document of no class

    # one classify and (for a known class) one extract call per document, each journalled with its purpose
    assert model.asked.count("classify") == 7 and model.asked.count("extract") == 5
    calls = s3_json.list_model_calls("job-claims", "a-claim.txt")
    assert sorted((c.purpose, c.class_name, c.call_id) for c in calls) == sorted(
        [("classify", None, accepted.classify_call_id), ("extract", "claim", accepted.model_call_id)]
    )
    classify_call = next(c for c in calls if c.purpose == "classify")
    assert classify_call.fields == {"class": "claim"}
    classify_prompt = model.systems[model.asked.index("classify")]
    assert '"claim": an insurance claim' in classify_prompt and '"letter": a letter' in classify_prompt
    assert 'document of class "claim"' in model.systems[model.asked.index("extract")]  # generated


def test_the_report_counts_review_and_totals_by_the_definitions_totals(job: PreparedJob) -> None:
    process_all(job, provider())
    summary = build_report(BuildReportEvent(job_id="job-claims", map_run=MapRunInfo()))
    report = Report.model_validate(get_json(summary.report_key))
    assert (report.documents, report.extracted, report.review, report.rejected, report.failed) == (
        7,
        2,
        1,
        4,
        0,
    )
    assert (summary.extracted, summary.review, summary.rejected) == (2, 1, 4)
    assert report.totals == {"claimed": {"EUR": "1200.00"}}  # accepted documents only; the letter has none
    assert report.rejection_reasons == {"FiledInFuture": 1, "NotInReference": 1, "UnknownDocumentClass": 2}
    letter = next(row for row in report.rows if row.document_id == "e-letter.txt")
    # its own class's columns only: no other class's total field (issue 53)
    assert (letter.class_name, letter.fields) == ("letter", {"sender": "Ada"})


def test_a_journalled_classification_is_not_repeated_after_a_crash(
    job: PreparedJob, env: pytest.MonkeyPatch, fake_exit: list[int]
) -> None:
    """The process dies after the classify call was journalled, before its step completed: the retry (after
    the dead invocation's deadline) reuses the journalled class and calls the model only to extract."""
    env.setenv("FAULT_INJECTION_ENABLED", "true")
    get_settings.cache_clear()
    entry = next(e for e in items(job) if e.document_id == "a-claim.txt")
    options = JobOptions(
        fault=FaultSpec(point="after_model_call", document_index=entry.index, mode="exit", times=1)
    )
    model = provider()
    with pytest.raises(SimulatedCrash):
        process_document(
            document_event(job, entry, options=options), FakeLambdaContext(timeout_ms=800), provider=model
        )
    assert (fake_exit, model.asked) == ([137], ["classify"])
    time.sleep(0.9)
    outcome = process_document(
        document_event(job, entry, options=options, retry_count=1), FakeLambdaContext(), provider=model
    )
    assert outcome.status == "extracted"
    assert model.asked == ["classify", "extract"]  # the class was not asked again
    calls = s3_json.list_model_calls("job-claims", "a-claim.txt")
    assert sorted(call.purpose for call in calls) == ["classify", "extract"]


def test_a_retry_after_a_crash_reuses_the_lookups(job: PreparedJob, monkeypatch: pytest.MonkeyPatch) -> None:
    entry = next(e for e in items(job) if e.document_id == "a-claim.txt")
    looked: list[tuple[str, str]] = []
    real_lookup, real_put = references.lookup, s3_json.put_result

    def counting_lookup(table: str, key: str) -> Any:
        looked.append((table, key))
        return real_lookup(table, key)

    def dying_put(stored: DocumentResult) -> str:
        raise SimulatedCrash("killed before the result was stored")

    monkeypatch.setattr(references, "lookup", counting_lookup)
    monkeypatch.setattr(s3_json, "put_result", dying_put)
    model = provider()
    with pytest.raises(SimulatedCrash):
        process_document(document_event(job, entry), FakeLambdaContext(), provider=model)
    # the policy is gone before the retry: the retry still checks the row the first attempt stored
    reference = {"table": {"S": "policies"}, "key": {"S": "P-0001"}}
    boto3.client("dynamodb").delete_item(TableName=REFERENCE_TABLE, Key=reference)
    try:
        monkeypatch.setattr(s3_json, "put_result", real_put)
        retry = document_event(job, entry, retry_count=1)
        outcome = process_document(retry, FakeLambdaContext(), provider=model)
    finally:
        item = {**reference, "holder": {"S": "Ada"}, "n": {"N": "2"}}
        boto3.client("dynamodb").put_item(TableName=REFERENCE_TABLE, Item=item)
    assert outcome.status == "extracted"
    # a lookup is a read step (docs/design.md "Durable steps"): read again, the stored row kept
    assert looked == [("policies", "P-0001")] * 2
    assert result("a-claim.txt").attached["policy"] == {"holder": "Ada", "n": 2}
    assert model.asked == ["classify", "extract"]


def test_a_document_of_two_calls_reads_the_breaker_once_and_its_own_journal_record_never(
    job: PreparedJob,
) -> None:
    entry = next(e for e in items(job) if e.document_id == "e-letter.txt")
    with RequestLog() as log:
        outcome = process_document(document_event(job, entry), FakeLambdaContext(), provider=provider())
    assert outcome.status == "extracted"
    breaker, calls = (
        storage.model_breaker_key(job.job_id),
        storage.model_calls_prefix(job.job_id, "e-letter.txt"),
    )
    assert log.requests.count(("GetObject", breaker)) == 1  # once a document and invocation, not once a call
    assert [op for op, key in log.requests if key.startswith(calls)] == ["PutObject", "PutObject"]  # unread
    assert log.requests.count(("ListObjectsV2", "list")) == 2  # the journal looked at by each model step


def test_a_job_whose_definition_is_missing_rejects_its_documents(job: PreparedJob) -> None:
    assert job.versions.definition_sha256 is not None
    boto3.client("s3").delete_object(
        Bucket=job.bucket, Key=storage.definition_key("claims", job.versions.definition_sha256)
    )
    model = provider()
    outcomes = process_all(job, model)
    assert {o.error for o in outcomes.values()} == {"DefinitionMissing"}
    assert "is not published" in str(result("a-claim.txt").reason)
    assert model.calls == []


def test_a_job_that_pins_no_definition_rejects_its_documents(job: PreparedJob) -> None:
    manifest = s3_json.get_manifest("job-claims")
    assert manifest is not None
    unpinned = manifest.versions.model_copy(update={"definition": None, "definition_sha256": None})
    put_object(
        storage.manifest_key("job-claims"),
        canonical_json(manifest.model_copy(update={"versions": unpinned}).model_dump(mode="json")),
    )
    outcome = process_document(document_event(job, items(job)[0]), FakeLambdaContext(), provider=provider())
    assert (outcome.status, outcome.error) == ("rejected", "DefinitionMissing")
    assert "pins no job definition" in str(result(outcome.document_id).reason)


def test_a_job_with_documents_for_review_verifies(job: PreparedJob) -> None:
    summary = report(job, process_all(job, provider()))
    done = actions(job, summary)
    verification = verify_job(
        VerifyJobEvent.model_validate(
            {
                "job_id": job.job_id,
                "report": summary.model_dump(),
                "actions": [action.model_dump(mode="json") for action in done.actions],
            }
        ),
        context=FakeLambdaContext(),
    )
    assert summary.review == 1
    assert verification.verified and set(verification.checks.values()) == {"ok"}
