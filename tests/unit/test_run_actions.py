"""run_actions: each action of the pinned definition exactly once, through crashes, lost answers, a target
without idempotency keys and a target that is down; the report records them. The HTTP client against a real
server on 127.0.0.1 is tested in tests/integration/test_actions_local.py."""

from __future__ import annotations

import time
from typing import Any

import boto3
import pytest

from functions import s3_json, storage
from functions.actions import export
from functions.actions.payloads import ActionsResult, RunActionsEvent
from functions.definition.action_specs import Action, EventBridgeAction, ExportAction, HttpAction
from functions.definition.job_spec import DefinitionBundle
from functions.durability import durable
from functions.errors import (
    ActionInvalidResponse,
    ActionNotAllowed,
    ActionOutcomeUnknown,
    ActionTargetUnavailable,
)
from functions.handlers.run_actions import handler
from functions.logic.run_actions import action_attempt, action_done, run_actions
from functions.payloads.job import PreparedJob
from functions.payloads.report import Report, ReportSummary
from functions.settings import get_settings
from tests.fakes import FakeLambdaContext, InMemoryRecipient, SimulatedCrash
from tests.moto_state import build_once
from tests.support import (
    BUCKET,
    IDEMPOTENCY_TABLE,
    example_bundle,
    get_json,
    list_keys,
    pin,
    prepare,
    process_all,
    report,
    s3,
    seed_documents,
)

JOB = "job-actions"
KEY = f"docagent-{JOB}-ticket"


def http(name: str = "ticket", **fields: Any) -> HttpAction:
    return HttpAction.model_validate({"type": "http", "name": name, "url": "destination:tickets", **fields})


def with_actions(*actions: Action) -> DefinitionBundle:
    invoices = example_bundle()
    definition = invoices.definition.model_copy(update={"actions": list(actions)})
    return DefinitionBundle(definition=definition, classes=invoices.classes)


@pytest.fixture
def job(cloud) -> tuple[PreparedJob, ReportSummary]:
    def build() -> tuple[PreparedJob, ReportSummary]:
        seed_documents(3)
        prepared = prepare(JOB)
        summary = report(prepared, process_all(prepared))
        pin(JOB, with_actions(http()))
        return prepared, summary

    return build_once("run_actions.job", build)


@pytest.fixture
def faults_enabled(env, fake_exit):
    env.setenv("FAULT_INJECTION_ENABLED", "true")
    get_settings.cache_clear()


def run(
    job: tuple[PreparedJob, ReportSummary],
    target: InMemoryRecipient | None = None,
    *,
    timeout_ms: int = 60_000,
    **event: Any,
) -> ActionsResult:
    parsed = RunActionsEvent(job_id=JOB, report=job[1], **event)
    context = FakeLambdaContext(timeout_ms=timeout_ms)
    if target is None:
        return run_actions(parsed, context)
    return run_actions(parsed, context, make=target.factory())


def body(key: str) -> bytes:
    return bytes(s3().get_object(Bucket=BUCKET, Key=key)["Body"].read())


def fault(point: str, **spec: Any) -> dict[str, Any]:
    return {"fault": {"point": point, **spec}}


# ------------------------------------------------------------------------------------ the built-in ledger


def test_running_the_actions_twice_performs_each_once(job):
    first = handler({"job_id": JOB, "report": job[1].model_dump()}, FakeLambdaContext())
    second = handler({"job_id": JOB, "report": job[1].model_dump()}, FakeLambdaContext())

    assert second == first
    [outcome] = first["actions"]
    assert (outcome["name"], outcome["type"], outcome["outcome"]) == ("ticket", "http", "performed")
    assert outcome["idempotency_key"] == KEY
    assert list_keys(storage.LEDGER_PREFIX) == [storage.ledger_key(KEY)]
    ledger = get_json(storage.ledger_key(KEY))
    assert ledger["id"] == outcome["reference"] and ledger["reference"] == JOB
    assert ledger["payload"]["idempotency_key"] == KEY and ledger["payload"]["documents"] == 3
    done = action_done(JOB, "ticket")
    assert done is not None and done.target == "ledger" and done.attempts == 1
    assert Report.model_validate(get_json(job[1].report_key)).actions == [done.outcome]


def test_the_reports_actions_section_is_rewritten_byte_for_byte(job):
    """A rerun after the durable record is gone (e.g. expired) takes the outcomes from done.json and writes
    the same report bytes."""
    run(job)
    written = body(job[1].report_key)
    s3_json.put_json(
        job[1].report_key,
        Report.model_validate(get_json(job[1].report_key)).model_copy(update={"actions": None}),
    )
    durable.clear_caches()
    s3().delete_object(Bucket=BUCKET, Key=storage.action_attempt_key(JOB, "ticket"))
    for item in boto3.resource("dynamodb").Table(IDEMPOTENCY_TABLE).scan()["Items"]:
        boto3.resource("dynamodb").Table(IDEMPOTENCY_TABLE).delete_item(Key={"id": item["id"]})
    run(job)
    assert body(job[1].report_key) == written
    assert list_keys(storage.LEDGER_PREFIX) == [storage.ledger_key(KEY)], "done.json: not sent again"


# ------------------------------------------------------------------------------ intent and reconciliation


def test_the_intent_is_recorded_before_the_request(job):
    seen: list[Any] = []

    class Watching(InMemoryRecipient):
        def create(self, idempotency_key: str, payload: dict[str, Any], *, on_sent=None):  # type: ignore[no-untyped-def]
            seen.append(s3_json.get_json_or_none(storage.action_attempt_key(JOB, "ticket")))
            return super().create(idempotency_key, payload, on_sent=on_sent)

    target = Watching()
    run(job, target)
    [attempt] = seen
    assert attempt["idempotency_key"] == KEY and attempt["type"] == "http"
    assert len(attempt["payload_sha256"]) == 64 and attempt["attempts"] == 1
    assert target.find_calls == [], "no earlier attempt, nothing to reconcile"
    assert target.payloads[0]["title"] == f"docagent job {JOB}", "the title's {job_id} filled in"


def test_a_lost_answer_is_settled_by_reference_at_once(job):
    target = InMemoryRecipient(lose_answers=1)
    [outcome] = run(job, target).actions
    assert [record.id for record in target.records] == [outcome.reference]
    assert target.create_calls == [KEY] and target.find_calls == [JOB]
    assert outcome.outcome == "reconciled"
    attempt = action_attempt(JOB, "ticket")
    assert attempt is not None and [error.error for error in attempt.errors] == ["ActionOutcomeUnknown"]


def test_without_idempotency_keys_a_crash_after_the_request_is_reconciled_not_repeated(job, faults_enabled):
    """The request reached the target (which ignores idempotency keys), then the worker died before done.json:
    the retry finds the record by reference instead of posting again."""
    target = InMemoryRecipient(honour_keys=False)
    options = fault("after_action_request", mode="exit", times=1)
    with pytest.raises(SimulatedCrash):
        run(job, target, timeout_ms=400, options=options)
    assert len(target.records) == 1 and action_done(JOB, "ticket") is None

    time.sleep(0.5)  # the dead invocation's in-progress record expires at its deadline
    [outcome] = run(job, target, options=options, retry_count=1).actions

    assert [record.id for record in target.records] == [outcome.reference]
    assert len(target.create_calls) == 1, "the retry reconciled instead of posting"
    assert outcome.outcome == "reconciled"


def test_a_crash_before_the_request_sends_on_the_retry(job, faults_enabled):
    target = InMemoryRecipient(honour_keys=False)
    options = fault("before_action", mode="raise", times=1)
    with pytest.raises(Exception, match="before_action"):
        run(job, target, options=options)
    assert target.records == [] and action_attempt(JOB, "ticket") is not None

    [outcome] = run(job, target, options=options, retry_count=1).actions
    assert [record.id for record in target.records] == [outcome.reference]
    assert target.find_calls == [JOB], "the unknown attempt was reconciled (nothing found) before posting"
    assert outcome.outcome == "performed"


def test_an_unsettled_outcome_fails_clearly_and_a_rerun_settles_it(job):
    searches_down = [1]

    class SearchDown(InMemoryRecipient):
        def find_by_reference(self, reference: str):  # type: ignore[no-untyped-def]
            if searches_down[0]:
                searches_down[0] -= 1
                raise ActionTargetUnavailable("search is down")
            return super().find_by_reference(reference)

    target = SearchDown(lose_answers=1)
    with pytest.raises(ActionOutcomeUnknown):
        run(job, target)
    attempt = action_attempt(JOB, "ticket")
    assert attempt is not None and [error.error for error in attempt.errors] == ["ActionOutcomeUnknown"]
    assert action_done(JOB, "ticket") is None

    [outcome] = run(job, target, redrive_count=1).actions
    assert [record.id for record in target.records] == [outcome.reference]
    assert len(target.create_calls) == 1


def test_a_target_that_is_down_fails_with_action_target_unavailable_then_a_rerun_sends(job):
    target = InMemoryRecipient(unavailable=1)
    with pytest.raises(ActionTargetUnavailable):
        run(job, target)
    attempt = action_attempt(JOB, "ticket")
    assert attempt is not None and attempt.errors[-1].error == "ActionTargetUnavailable"

    [outcome] = run(job, target).actions
    assert [record.id for record in target.records] == [outcome.reference]
    assert outcome.outcome == "performed"
    assert action_attempt(JOB, "ticket").attempts == 2  # type: ignore[union-attr]


def test_garbage_from_the_target_is_a_specific_recorded_error(job):
    class Garbage(InMemoryRecipient):
        def create(self, idempotency_key: str, payload: dict[str, Any], *, on_sent=None):  # type: ignore[no-untyped-def]
            raise ActionInvalidResponse("POST answered non-JSON: '<html>'")

    with pytest.raises(ActionInvalidResponse):
        run(job, Garbage())
    attempt = get_json(storage.action_attempt_key(JOB, "ticket"))
    assert attempt["errors"][-1]["error"] == "ActionInvalidResponse"
    assert "non-JSON" in attempt["errors"][-1]["message"]


# ------------------------------------------------------------------------------------ several actions


def test_a_crash_between_two_actions_repeats_neither(job, faults_enabled):
    pin(JOB, with_actions(http("first"), http("second")))
    target = InMemoryRecipient(honour_keys=False)
    options = fault("after_action", mode="exit", times=1, action="second")
    with pytest.raises(SimulatedCrash):
        run(job, target, timeout_ms=400, options=options)
    assert action_done(JOB, "first") is not None and action_done(JOB, "second") is None

    time.sleep(0.5)
    outcomes = run(job, target, options=options, retry_count=1).actions
    assert [outcome.name for outcome in outcomes] == ["first", "second"]
    assert len(target.records) == 2 and len(target.create_calls) == 2, "none sent twice"
    assert [outcome.outcome for outcome in outcomes] == ["performed", "reconciled"]
    assert {outcome.reference for outcome in outcomes} == {record.id for record in target.records}


def test_an_action_whose_when_does_not_hold_is_skipped_and_recorded(job):
    pin(JOB, with_actions(http("if-rejected", when="any_rejected"), http("always")))
    summary_report = Report.model_validate(get_json(job[1].report_key))
    target = InMemoryRecipient()
    outcomes = run(job, target).actions
    rejected = any(row.status == "rejected" for row in summary_report.rows)
    assert [outcome.outcome for outcome in outcomes] == ["performed" if rejected else "skipped", "performed"]
    assert len(target.records) == (2 if rejected else 1)


def test_a_target_the_deployment_does_not_allow_is_refused_before_anything_is_sent(job):
    pin(JOB, with_actions(http("elsewhere", url="https://collector.example.net/hook")))
    target = InMemoryRecipient()
    with pytest.raises(ActionNotAllowed, match=r"host collector\.example\.net is not allowed"):
        run(job, target)
    assert target.create_calls == [] and action_attempt(JOB, "elsewhere") is None


# ------------------------------------------------------------------------------------ export, eventbridge


def test_an_export_writes_deterministic_files_and_a_rerun_the_same_bytes(job):
    pin(JOB, with_actions(ExportAction(type="export", name="results")))
    [outcome] = run(job).actions
    prefix = storage.export_prefix(JOB, "results")
    assert outcome.reference == prefix
    assert list_keys(prefix) == [f"{prefix}results.csv", f"{prefix}results.jsonl"]
    csv_text = body(f"{prefix}results.csv").decode()
    header, *rows = csv_text.splitlines()
    assert header.startswith("document_id,index,key,status") and len(rows) == 3
    lines = body(f"{prefix}results.jsonl").decode().splitlines()
    assert [line.count('"job_id":"job-actions"') for line in lines] == [1, 1, 1]

    before = {key: body(key) for key in list_keys(prefix)}
    for key in before:
        s3().delete_object(Bucket=BUCKET, Key=key)
    report_now = Report.model_validate(get_json(job[1].report_key))
    export.export(JOB, ExportAction(type="export", name="results"), report_now)
    assert {key: body(key) for key in list_keys(prefix)} == before


def test_an_event_bus_not_allowed_is_refused(job):
    pin(JOB, with_actions(EventBridgeAction(type="eventbridge", name="notify", bus="other-bus")))
    with pytest.raises(ActionNotAllowed, match="event bus other-bus is not allowed"):
        run(job)
