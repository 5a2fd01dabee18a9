"""The operator CLI's record reading and recovery rules, without a cloud (docagent inspect/redrive/start)."""

from __future__ import annotations

import datetime as dt
import json
from types import SimpleNamespace
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from docagent import cli
from docagent.kit.loader import read_bundle
from docagent.operations import progress
from docagent.operations.context import OperatorError, RefusedError, command
from docagent.operations.display import error_message
from docagent.operations.inspect_documents import last_boundary
from docagent.operations.inspect_job import Inspector
from docagent.operations.inspect_print import short_cause
from docagent.operations.map_run_children import documents_of_input
from docagent.operations.progress import progress_detail, snapshot
from docagent.operations.records import check_job_id, execution_arn_for
from docagent.operations.redrive_plan import _estimated_events, armed_fault
from docagent.operations.sources import Document, Problems, Source, parse_s3_location
from docagent.operations.start_job import _check_upload_conflict
from docagent.operations.step_records import IdempotencyRecord, document_steps
from docagent.operations.workflow_definition import (
    conditional_states,
    error_matches,
    retry_policy,
    states_from,
)
from functions.durability import durable
from functions.payloads.document import DocumentResult, WindowCall
from functions.payloads.job import FaultSpec
from functions.payloads.model_calls import LookupRecord
from tests.fakes import FakeLambdaContext
from tests.support import EXAMPLES, IDEMPOTENCY_TABLE, without_models

DEFINITION: dict[str, Any] = {
    "StartAt": "Prepare",
    "States": {
        "Prepare": {"Type": "Task", "Next": "Review"},
        "Review": {
            "Type": "Map",
            "ItemReader": {},
            "ItemProcessor": {
                "StartAt": "Process",
                "States": {
                    "Process": {
                        "Type": "Task",
                        "Retry": [{"ErrorEquals": ["Runtime.ExitError"], "MaxAttempts": 3}],
                        "End": True,
                    }
                },
            },
            "Next": "Report",
        },
        "Report": {"Type": "Task", "Next": "Approval?"},
        "Approval?": {"Type": "Choice", "Choices": [{"Next": "Approve"}], "Default": "Ticket"},
        "Approve": {"Type": "Task", "Next": "Record"},
        "Record": {"Type": "Task", "Next": "Ticket"},
        "Ticket": {"Type": "Task", "Retry": [{"ErrorEquals": ["States.ALL"], "MaxAttempts": 4}], "End": True},
    },
}


def test_record_keys_are_the_keys_run_step_writes(cloud):
    ids = {"job_id": "job-1", "document_id": "doc-1"}
    lookup = LookupRecord(table="customers", key="CUST-00001", found=False)
    durable.run_step(
        "lookup-known-customer",
        ids=ids,
        fn=lambda: lookup,
        result_model=LookupRecord,
        context=FakeLambdaContext(),
    )
    durable.run_step(
        "prepare",
        ids={"job_id": "job-1"},
        key_field="job_id",
        validate={"request_sha256": "abc"},
        fn=lambda: lookup,
        result_model=LookupRecord,
        context=FakeLambdaContext(),
    )
    stored = {item["id"]["S"] for item in boto3.client("dynamodb").scan(TableName=IDEMPOTENCY_TABLE)["Items"]}
    assert stored == {
        durable.record_key("lookup-known-customer", ids),
        durable.record_key("prepare", {"job_id": "job-1"}, key_field="job_id"),
    }


def test_states_after_a_failure_follow_the_flow_and_mark_choice_branches():
    assert states_from(DEFINITION, "Review") == [
        "Review",
        "Report",
        "Approval?",
        "Approve",
        "Ticket",
        "Record",
    ]
    assert conditional_states(DEFINITION, "Review") == {"Approve", "Record"}
    assert states_from(DEFINITION, "Ticket") == ["Ticket"]
    assert retry_policy(DEFINITION, "Process", "Runtime.ExitError")["max_attempts"] == 3
    assert retry_policy(DEFINITION, "Process", "States.Timeout") is None
    assert retry_policy(DEFINITION, "Ticket", "anything")["max_attempts"] == 4
    assert _estimated_events(DEFINITION, ["Ticket"]) == 2 + 2 + 3 * 5


def test_names_and_locations():
    machine = "arn:aws:states:us-east-1:123456789012:stateMachine:DocAgent-DocumentReview"
    assert execution_arn_for(machine, "job-1") == (
        "arn:aws:states:us-east-1:123456789012:execution:DocAgent-DocumentReview:job-1"
    )
    assert parse_s3_location("s3://bucket/in/batch", "job-bucket") == ("bucket", "in/batch/")
    assert parse_s3_location("in/batch/", "job-bucket") == ("job-bucket", "in/batch/")
    for bad in ("s3://bucket/", "s3:///prefix/", "/"):
        with pytest.raises(RefusedError):
            parse_s3_location(bad, "job-bucket")
    single = '{"job_id": "j", "document": {"document_id": "a.txt", "index": 0}}'
    batch = {"Items": [{"document": {"document_id": "a"}}, {"document_id": "b"}]}
    assert [doc["document_id"] for doc in documents_of_input(single)] == ["a.txt"]
    assert [doc["document_id"] for doc in documents_of_input(batch)] == ["a", "b"]
    assert documents_of_input("not json") == []
    cause = '{"errorType": "Runtime.ExitError", "errorMessage": "RequestId: 1-2 Error: Runtime exited"}'
    assert error_message(cause) == "RequestId: 1-2 Error: Runtime exited"
    assert short_cause(error_message(cause)) == "Runtime exited"


def test_a_started_from_dir_job_refuses_other_documents():
    source = Source(
        "from_dir",
        "bucket",
        prefix="incoming/j/",
        documents=[Document("a.txt", 1, md5="aa"), Document("b.txt", 1, md5="bb")],
    )
    assert [doc.name for doc in _check_upload_conflict(source, "j", {"incoming/j/a.txt": "aa"}, False)] == [
        "b.txt"
    ], "an interrupted first upload is completed"
    refusals = [
        ({"incoming/j/a.txt": "aa", "incoming/j/b.txt": "xx"}, False, "changed"),
        (
            {"incoming/j/a.txt": "aa", "incoming/j/b.txt": "bb", "incoming/j/c.txt": "cc"},
            False,
            "not_in_directory",
        ),
        ({"incoming/j/a.txt": "aa"}, True, "new"),
    ]
    for existing, started, field in refusals:
        with pytest.raises(RefusedError) as refused:
            _check_upload_conflict(source, "j", existing, started)
        assert refused.value.error_type == "JobConflict" and refused.value.details[field]


def record(status: str, *, deadline: dt.datetime | None = None, data: Any = None) -> IdempotencyRecord:
    expiry = None if deadline is None else int(deadline.timestamp() * 1000)
    return IdempotencyRecord("key", status, None, expiry, data)


def test_the_last_committed_boundary_of_a_document():
    def boundary(result: Any, calls: list[Any], *records: IdempotencyRecord | None) -> tuple[str, str | None]:
        steps = dict(zip(("extract", "customer_lookup"), records, strict=True))
        return last_boundary(result, calls, steps)

    completed = record("COMPLETED", data={"ok": True})
    assert boundary(SimpleNamespace(status="extracted"), [], completed, completed) == (
        "result_stored",
        "after store_result (returning the outcome)",
    )
    assert boundary(None, [{}], completed, completed) == ("customer_lookup", "store_result")
    assert boundary(None, [{}], completed, None) == ("extract", "customer_lookup")
    assert boundary(None, [{}], record("COMPLETED", data={"ok": False}), None) == ("extract", "store_result")
    assert boundary(None, [{}], record("INPROGRESS"), None) == ("model_call_journalled", "extract")
    assert boundary(None, [], record("INPROGRESS"), None) == ("none", "extract")
    assert boundary(None, [], None, None) == ("none", "read_document")


def test_a_definitions_document_steps_and_their_boundaries():
    cascade = read_bundle(EXAMPLES / "invoices")  # the default's cascade: the strong model's step too
    assert document_steps(cascade) == ["extract", "escalate", "lookup-known-customer"]
    invoices = without_models(cascade)
    assert document_steps(None) == ["extract", "customer_lookup"], "a job prepared before definitions"
    assert document_steps(invoices) == ["extract", "lookup-known-customer"]
    invoice = invoices.definition.classes["invoice"]
    classes = {"invoice": invoice, "credit-note": invoice.model_copy(update={"checks": []})}
    two = invoices.model_copy(
        update={"definition": invoices.definition.model_copy(update={"classes": classes})}
    )
    assert document_steps(two) == ["classify", "extract", "lookup-known-customer"]

    # With its result, a document's own steps (#40): a credit note has no lookup, an invoice without the
    # looked-up field none either, a document of no class no extract, one refused unread no step at all.
    def result(
        class_name: str | None, fields: dict[str, Any] | None, extracted: bool = True
    ) -> DocumentResult:
        return DocumentResult.model_construct(
            class_name=class_name,
            fields=fields,
            classify_call_id="c1" if class_name != "unread" else None,
            model_call_id="m1" if extracted else None,
        )

    lookup_field = invoice.checks[0].field  # type: ignore[union-attr]
    assert document_steps(two, result("invoice", {lookup_field: "C-1"})) == [
        "classify",
        "extract",
        "lookup-known-customer",
    ]
    assert document_steps(two, result("credit-note", {lookup_field: "C-1"})) == ["classify", "extract"]
    assert document_steps(two, result("invoice", {})) == ["classify", "extract"]
    assert document_steps(two, result(None, None, extracted=False)) == ["classify"]
    assert document_steps(two, result("unread", None, extracted=False)) == []
    windowed = result("credit-note", {lookup_field: "C-1"}).model_copy(  # a long PDF: a step a window (#41)
        update={
            "windows": [
                WindowCall(pages=(1, 20), model_call_id="m1"),
                WindowCall(pages=(21, 30), model_call_id="m2"),
            ]
        }
    )
    assert document_steps(two, windowed) == ["classify", "extract-w0001", "extract-w0021"]
    done = record("COMPLETED", data={"ok": True})
    steps = {"classify": done, "extract": None, "lookup-a": None, "lookup-b": None}
    assert last_boundary(None, [{}], steps) == ("classify", "extract")
    assert last_boundary(None, [{}], {**steps, "extract": done}) == ("extract", "lookup-a")
    assert last_boundary(None, [{}], {**steps, "extract": done, "lookup-b": done}) == (
        "lookup-b",
        "store_result",
    )
    assert last_boundary(None, [{}], dict.fromkeys(steps)) == ("model_call_journalled", "classify")


def inspector(**records: Any) -> Inspector:
    fake = SimpleNamespace(
        job_id="job-1",
        read_at=dt.datetime.now(dt.UTC),
        actions=records.get("actions", {}),
    )
    return Inspector(fake)  # type: ignore[arg-type]


def test_uncertain_records_are_flagged_with_what_to_do():
    now = dt.datetime.now(dt.UTC)
    past, future = now - dt.timedelta(minutes=5), now + dt.timedelta(minutes=5)
    expired = record("INPROGRESS", deadline=past)
    assert expired.expired_in_progress(now) and expired.summary(now)["status"] == "INPROGRESS_EXPIRED"
    documents = [
        {
            "document_id": "doc-1",
            "model_calls": [{"call_id": "c1"}],
            "step_records": {"extract": expired.summary(now)},
        },
        {
            "document_id": "doc-2",
            "model_calls": [],
            "step_records": {"extract": record("INPROGRESS", deadline=future).summary(now)},
        },
    ]
    flags = inspector()._uncertain(documents, None, "FAILED")
    assert [(flag["subject"], flag["step"]) for flag in flags] == [
        ("document doc-1", "extract"),
        ("document doc-2", "extract"),
    ]
    assert "past its deadline" in flags[0]["what"] and "reuses it" in flags[0]["action"]
    assert "Redrive after" in flags[1]["action"] and "called again" in flags[1]["action"]
    assert inspector()._uncertain(documents[1:], None, "RUNNING") == [], "in flight, not uncertain"

    attempt = SimpleNamespace(
        type="http",
        attempts=2,
        idempotency_key="docagent-job-1-notify",
        errors=[SimpleNamespace(model_dump=lambda mode: {"error": "ActionOutcomeUnknown"})],
    )
    unknown = inspector(actions={"notify": (attempt, None)})
    [action] = unknown._actions()
    assert (action["name"], action["done"], action["attempts"]) == ("notify", False, 2)
    assert action["attempt_errors"] == [{"error": "ActionOutcomeUnknown"}]
    (flag,) = unknown._uncertain_actions([action], None, "FAILED")
    assert flag["step"] == "action notify" and "no recorded outcome" in flag["what"]
    assert "jobs/job-1/actions/notify/done.json" in flag["what"]
    assert "docagent-job-1-notify" in flag["action"] and "do not repeat it by hand" in flag["action"]
    assert inspector()._actions() == []
    done = SimpleNamespace(
        outcome=SimpleNamespace(type="http", outcome="performed", reference="R-1", idempotency_key="k")
    )
    [settled] = inspector(actions={"notify": (attempt, done)})._actions()
    assert settled["done"] is True and settled["reference"] == "R-1"
    assert unknown._uncertain_actions([settled], None, "FAILED") == []


def test_commands_turn_refusals_and_aws_errors_into_exit_codes(capsys):
    def failing(error: Exception):
        def run(args: Any) -> int:
            raise error

        return command(run)

    args = SimpleNamespace(json=True)
    denied = ClientError({"Error": {"Code": "AccessDenied", "Message": "no"}}, "GetObject")
    missing = ClientError({"Error": {"Code": "ResourceNotFoundException", "Message": "gone"}}, "GetFunction")
    cases = [
        (RefusedError("NoDocuments", "nothing", details={"documents": []}), 2, "NoDocuments"),
        (OperatorError("no stack", 3), 3, "NotFound"),
        (denied, 2, "AccessDenied"),
        (missing, 3, "ResourceNotFoundException"),
    ]
    for error, code, error_type in cases:
        assert failing(error)(args) == code
        printed = json.loads(capsys.readouterr().out)
        assert (printed["exit_code"], printed["error_type"]) == (code, error_type) and printed["error"]


def test_retry_rules_match_errors_as_step_functions_does():
    """ASL: States.ALL matches any error but the terminal ones; States.TaskFailed any but States.Timeout."""
    assert error_matches(["Runtime.ExitError"], "Runtime.ExitError")
    assert not error_matches(["Runtime.ExitError"], "Sandbox.Timedout")
    assert error_matches(["States.ALL"], "Sandbox.Timedout")
    assert error_matches(["States.TaskFailed"], "Runtime.ExitError")
    assert error_matches(["States.TaskFailed"], "InjectedFault")
    assert not error_matches(["States.TaskFailed"], "States.Timeout")
    assert error_matches(["States.ALL"], "States.Timeout")
    assert error_matches(["States.Timeout"], "States.Timeout")
    assert not error_matches(["States.ALL"], "States.Runtime")
    assert not error_matches(["States.TaskFailed"], "States.DataLimitExceeded")
    assert not error_matches(["States.ALL"], None)
    definition = {
        "StartAt": "T",
        "States": {"T": {"Type": "Task", "Retry": [{"ErrorEquals": ["States.TaskFailed"]}], "End": True}},
    }
    assert retry_policy(definition, "T", "InjectedFault") == {
        "error_equals": ["States.TaskFailed"],
        "max_attempts": 3,
        "interval_seconds": 1,
        "backoff_rate": 2.0,
    }
    assert retry_policy(definition, "T", "States.Timeout") is None


def test_a_job_id_may_not_look_like_an_option():
    assert check_job_id("job-1") == "job-1" and check_job_id("_x") == "_x"
    for bad in ("-job", "--json", "", "a/b", "x" * 81):
        with pytest.raises(RefusedError) as refused:
            check_job_id(bad)
        assert refused.value.error_type == "InvalidJobId" and refused.value.exit_code == 2


def test_every_kind_of_bad_document_is_refused_at_once():
    problems = Problems()
    problems.add("DocumentMissing", "do not exist", ["a.txt"], "Upload them.")
    problems.add("DocumentTooLarge", "over the limit", ["b.txt (9 bytes)"], "Shrink them.")
    with pytest.raises(RefusedError) as refused:
        problems.refuse()
    assert refused.value.error_type == "InvalidDocuments"
    assert refused.value.details["problems"] == {
        "DocumentMissing": ["a.txt"],
        "DocumentTooLarge": ["b.txt (9 bytes)"],
    }
    assert "a.txt" in str(refused.value) and "b.txt" in str(refused.value)
    one = Problems()
    one.add("DocumentMissing", "do not exist", ["a.txt"], "Upload them.")
    with pytest.raises(RefusedError) as refused:
        one.refuse()
    assert refused.value.error_type == "DocumentMissing"
    Problems().refuse()  # nothing found: no refusal


def fake_job(**fields: Any) -> Any:
    """A JobRecords stand-in with just what a test reads."""
    base: dict[str, Any] = {"job_id": "job-1", "execution_arn": "arn:job-1", "refresh": lambda: None}
    return SimpleNamespace(**{**base, **fields})


def test_status_counts_rejected_documents_apart_from_ok():
    results = {
        "a": SimpleNamespace(status="extracted"),
        "b": SimpleNamespace(status="rejected"),
        "c": SimpleNamespace(status="extracted"),
    }
    records = fake_job(
        require_execution=lambda: {"status": "SUCCEEDED"},
        document_counts=lambda: {
            "total": 3,
            "succeeded": 3,
            "failed": 0,
            "running": 0,
            "pending": 0,
            "results_stored": 3,
        },
        result_ids=set(results),
        results=results,
        map_run=None,
        approval=None,
        review_wait=lambda: None,
        current_state=lambda: "VerifyJob",
    )
    current = snapshot(records)
    assert current.documents["succeeded"] == 3 and current.documents["rejected"] == 1
    detail = progress_detail(current)
    assert detail.plain.startswith("2 ok · 1 rejected")
    assert [str(span.style) for span in detail.spans][:2] == ["green", "yellow"]
    assert snapshot(records, count_rejected=False).documents["rejected"] == 0


def test_ctrl_c_while_following_says_how_to_follow_again(monkeypatch, capsys):
    def interrupted(records: Any, **_: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(progress, "snapshot", interrupted)

    @command
    def follow_job(args: Any) -> int:
        progress.follow(fake_job(), show=False)
        return 0

    assert follow_job(SimpleNamespace(json=True)) == 130
    printed = json.loads(capsys.readouterr().out)
    assert (
        printed["error_type"] == "StoppedFollowing"
        and printed["follow_again"] == "docagent status job-1 --watch"
    )
    assert "keeps running" in printed["error"]


def test_a_fault_still_armed_for_the_next_redrive_is_reported():
    def records(fault: FaultSpec | None, redrives: int = 0, enabled: str = "true") -> Any:
        return fake_job(
            request=SimpleNamespace(request=SimpleNamespace(options=SimpleNamespace(fault=fault))),
            description={"redriveCount": redrives},
            function_configuration=lambda name: {
                "Environment": {"Variables": {"FAULT_INJECTION_ENABLED": enabled}}
            },
        )

    every_time = FaultSpec(point="before_store_result", document_index=3, mode="exit")
    armed = armed_fault(records(every_time))
    assert armed is not None and armed["next_redrive"] == 1 and "on every redrive" in armed["warning"]
    until_two = FaultSpec(point="before_action", mode="raise", until_redrive=2)
    assert armed_fault(records(until_two)) is not None, "redrive 1 is below until_redrive 2"
    assert armed_fault(records(until_two, redrives=1)) is None, "redrive 2 is not"
    assert armed_fault(records(FaultSpec(point="before_action", until_redrive=1))) is None
    assert armed_fault(records(every_time, enabled="false")) is None, "fault injection is off"
    assert armed_fault(records(None)) is None
    assert armed_fault(fake_job(request=None)) is None


def test_a_command_whose_extra_is_not_installed_says_which(monkeypatch, capsys):
    def needs_moto(args: Any) -> int:
        raise ModuleNotFoundError("No module named 'moto'", name="moto")

    parser = cli.build_parser()
    monkeypatch.setattr(cli, "build_parser", lambda: parser)
    monkeypatch.setattr(parser, "parse_args", lambda argv: SimpleNamespace(handler=needs_moto, json=False))
    assert cli.main([]) == 2
    assert "pip install 'docagent[local]'" in capsys.readouterr().err
