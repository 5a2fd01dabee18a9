"""A job that waits for its review queue (docs/design.md, "Review"): the setting, the WaitForReview task's
durable token and queue, the decision that completes the queue, and the decisions in the report; against
moto's S3 and a botocore Stubber for Step Functions (SendTaskSuccess)."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.stub import ANY, Stubber

from docagent.operations.context import OperatorContext
from docagent.operations.records import JobRecords
from docagent.operations.review import decide
from docagent.operations.sessions import new_session
from functions import aws, s3_json, storage
from functions.definition.job_spec import DefinitionBundle
from functions.handlers import build_report
from functions.logic.build_report import build_report as build
from functions.logic.verify_job import expected_row
from functions.payloads.job import JobRequest, PreparedJob
from functions.payloads.report import BuildReportEvent, MapRunInfo, Report
from functions.reviews import ReviewWaitRecord
from tests.fakes import FakeLambdaContext
from tests.moto_state import build_once
from tests.support import (
    BUCKET,
    example_bundle,
    get_json,
    prepare,
    process_all,
    seed_documents,
    write_result_files,
)

JOB = "job-wait"
ARN = f"arn:aws:states:us-east-1:123456789012:execution:DocAgent-DocumentReview:{JOB}"
STATE_MACHINE = "arn:aws:states:us-east-1:123456789012:stateMachine:DocAgent-DocumentReview"
# The seeded invoices over 13000 go to review: documents 1, 2 and 4 of six.
QUEUE = ["doc-00001.txt", "doc-00002.txt", "doc-00004.txt"]


def bundle(*, wait: bool | None, review_rule: bool = True) -> DefinitionBundle:
    """The invoice example, its amounts over 13000 sent to review; ``review.wait`` as given (None: unset)."""
    data = example_bundle().model_dump(mode="json", by_alias=True)
    if wait is not None:
        data["definition"]["review"] = {"wait": wait}
    if review_rule:
        rule = {"type": "rule", "name": "small", "field": "amount", "maximum": 13000, "on_fail": "review"}
        data["classes"]["invoice"]["spec"]["checks"].append(rule)
    return DefinitionBundle.model_validate(data)


@pytest.fixture
def states(monkeypatch: pytest.MonkeyPatch) -> Iterator[Stubber]:
    """Step Functions for the functions and the operator: any call not queued on the stub fails the test."""
    client = boto3.client("stepfunctions", region_name="us-east-1")
    stub = Stubber(client)
    stub.activate()
    monkeypatch.setattr(aws, "stepfunctions_client", functools.cache(lambda: client))
    yield stub
    stub.assert_no_pending_responses()


@pytest.fixture
def job(cloud: None) -> tuple[PreparedJob, MapRunInfo]:
    def build() -> tuple[PreparedJob, MapRunInfo]:
        seed_documents(6)
        prepared = prepare(JOB, definition=bundle(wait=True))
        return prepared, write_result_files(prepared, process_all(prepared))

    return build_once("review_wait.job", build)


@pytest.fixture
def records(job: Any, states: Stubber) -> JobRecords:
    context = OperatorContext(
        endpoint=None,
        stack_name="DocAgent",
        outputs={"BucketName": BUCKET, "StateMachineArn": STATE_MACHINE},
        session=new_session(),
    )
    context._clients["stepfunctions"] = states.client
    return JobRecords(context, JOB)


def wait(map_run: MapRunInfo, token: str) -> dict[str, Any]:
    event = {
        "action": "wait_review",
        "job_id": JOB,
        "map_run": map_run.model_dump(mode="json"),
        "task_token": token,
        "execution_arn": ARN,
    }
    return build_report.handler(event, FakeLambdaContext())


def record() -> ReviewWaitRecord:
    return ReviewWaitRecord.model_validate(get_json(storage.review_wait_key(JOB)))


def expect_success(states: Stubber, token: str) -> None:
    states.add_response("send_task_success", {}, {"taskToken": token, "output": ANY})


# ------------------------------------------------------------------------------------------ the setting


def test_the_request_or_else_the_definition_decides_the_wait(cloud: None) -> None:
    seed_documents(2)
    assert prepare("by-definition", definition=bundle(wait=True)).options.wait_for_review is True
    overridden = prepare("by-request", definition=bundle(wait=True), options={"wait_for_review": False})
    assert overridden.options.wait_for_review is False
    assert prepare("unset", definition=bundle(wait=None)).options.wait_for_review is False
    # Unset, neither the definition nor the request dumps the key: their versions and hashes stay.
    assert "review" not in bundle(wait=None).definition.model_dump(mode="json")
    assert "wait_for_review" not in JobRequest(job_id="j", prefix="a/").options.model_dump(mode="json")


# ------------------------------------------------------------------------------------- WaitForReview


def test_the_wait_stores_its_queue_and_token_and_completes_nothing(job: Any, states: Stubber) -> None:
    _, map_run = job
    assert wait(map_run, "token-1") == {
        "job_id": JOB,
        "status": "waiting",
        "documents": 3,
        "decided": 0,
        "released_by": None,
    }
    first = record()
    assert (first.documents, first.task_token, first.status, first.requests) == (
        QUEUE,
        "token-1",
        "waiting",
        1,
    )
    assert first.execution_arn == ARN
    wait(map_run, "token-1")  # the same invocation again
    assert record() == first
    wait(map_run, "token-2")  # a retried attempt: only the newest token is valid
    second = record()
    assert (second.task_token, second.requests, second.requested_at) == ("token-2", 2, first.requested_at)


def test_a_queue_already_decided_is_released_by_the_wait_itself(
    records: JobRecords, job: Any, states: Stubber
) -> None:
    _, map_run = job
    for document_id in QUEUE:
        decide(records, document_id, "accepted", typed={}, by="rita", reason=None)  # no wait yet: no call
    expect_success(states, "token-1")
    released = wait(map_run, "token-1")
    assert (released["status"], released["decided"], released["released_by"]) == (
        "released",
        3,
        "WaitForReview",
    )
    assert record().status == "released"
    # A redrive after the wait timed out asks again with a new token: released at once as well.
    expect_success(states, "token-2")
    assert wait(map_run, "token-2")["status"] == "released"


def test_a_token_settled_already_is_reported_not_raised(
    records: JobRecords, job: Any, states: Stubber
) -> None:
    _, map_run = job
    for document_id in QUEUE:
        decide(records, document_id, "rejected", typed={}, by="rita", reason="not ours")
    states.add_client_error("send_task_success", service_error_code="TaskTimedOut", http_status_code=400)
    assert wait(map_run, "token-1")["status"] == "released"


def test_an_empty_queue_is_released_at_once(cloud: None, states: Stubber) -> None:
    seed_documents(3)
    prepared = prepare(JOB, definition=bundle(wait=True, review_rule=False))
    map_run = write_result_files(prepared, process_all(prepared))
    expect_success(states, "token-1")
    assert wait(map_run, "token-1")["documents"] == 0
    assert record().status == "released"


# -------------------------------------------------------------------------------- the last decision


def test_the_decision_that_completes_the_queue_releases_the_job_once(
    records: JobRecords, job: Any, states: Stubber
) -> None:
    _, map_run = job
    wait(map_run, "token-1")
    first = decide(records, QUEUE[0], "accepted", typed={"amount": "999.00"}, by="rita", reason=None)
    assert first.queue is not None and first.queue.wait.status == "waiting" and not first.queue.sent
    assert first.queue.as_json()["decided"] == 1
    decide(records, QUEUE[1], "rejected", typed={}, by="rita", reason="a duplicate")
    expect_success(states, "token-1")
    last = decide(records, QUEUE[2], "accepted", typed={}, by="sam", reason=None)
    assert last.queue is not None and last.queue.sent and last.queue.settled is None
    assert (record().status, record().released_by) == ("released", "reviewer sam")
    again = decide(records, QUEUE[2], "accepted", typed={}, by="sam", reason=None)  # nothing is sent again
    assert not again.written and again.queue is not None and not again.queue.sent
    assert again.queue.wait.status == "released"


def test_a_job_that_does_not_wait_is_not_released_by_a_decision(records: JobRecords, states: Stubber) -> None:
    decided = decide(records, QUEUE[0], "accepted", typed={}, by="rita", reason=None)
    assert decided.written and decided.queue is None


# ------------------------------------------------------------------------------------------ the report


def test_the_report_applies_the_decisions_only_when_the_job_waited(records: JobRecords, job: Any) -> None:
    prepared, map_run = job
    decide(records, QUEUE[0], "accepted", typed={"amount": "999.00"}, by="rita", reason="typo")
    decide(records, QUEUE[1], "rejected", typed={}, by="rita", reason="a duplicate")

    build(BuildReportEvent(job_id=JOB, map_run=map_run, options=prepared.options))
    report = Report.model_validate(get_json(storage.report_key(JOB)))
    rows = {row.document_id: row for row in report.rows}
    assert (rows[QUEUE[0]].status, rows[QUEUE[0]].fields["amount"], rows[QUEUE[0]].error) == (
        "extracted",
        "999.00",
        None,
    )
    assert (rows[QUEUE[1]].status, rows[QUEUE[1]].error) == ("rejected", "ReviewRejected")
    assert "a duplicate" in str(rows[QUEUE[1]].reason)
    assert rows[QUEUE[2]].status == "review"  # no decision yet
    assert (report.extracted, report.review, report.rejected) == (4, 1, 1)
    assert report.rejection_reasons == {"ReviewRejected": 1}
    totals = report.totals["amount-by-currency"]
    assert totals["GBP"] == "999.00"  # the corrected amount, not the 16517.98 the model read
    assert totals["USD"] == "3631.34"  # an extracted invoice's; the rejected 19002.52 is left out
    # verify_job's sample check expects the decided row for a decided review result.
    for document_id in QUEUE:
        result = s3_json.get_result(JOB, document_id)
        assert result is not None and expected_row(result, rows[document_id]) == rows[document_id]

    unwaited = prepared.options.model_copy(update={"wait_for_review": False})
    build(BuildReportEvent(job_id=JOB, map_run=map_run, options=unwaited))
    plain = Report.model_validate(get_json(storage.report_key(JOB)))
    assert (plain.extracted, plain.review, plain.rejected) == (3, 3, 0)
