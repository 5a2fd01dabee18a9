"""The job's budget (docs/design.md, "Budget"): reserved before each model call and settled after it on one
DynamoDB ledger item; no call starts that would pass it; a retry or a reused journalled call is never charged
twice; raising the budget lets the stopped documents continue."""

from __future__ import annotations

import pytest

from functions import aws, budget, s3_json, spend, storage
from functions.errors import BudgetBusy, BudgetExceeded, ModelThrottled
from functions.logic.build_report import counts_of
from functions.logic.process_document import process_document
from functions.payloads.job import JobOptions
from functions.settings import get_settings
from tests.fakes import CountingProvider, FakeLambdaContext, SimulatedCrash
from tests.moto_state import build_once
from tests.support import SEEDED_REPLIES, document_event, items, prepare, seed_documents
from tests.unit.test_model_failures import RefusingProvider

MODEL = "us.anthropic.claude-haiku-4-5-20251001-v1:0"
# CountingProvider reports 100 input and 40 output tokens per call.
CALL_NANO = spend.call_cost_nano(MODEL, 100, 40)


@pytest.fixture
def job(cloud):
    def build():
        seed_documents(4)
        prepared = prepare("job-budget")
        return prepared, items(prepared)

    return build_once("budget.job", build)


def _provider(**kwargs: object) -> CountingProvider:
    return CountingProvider(SEEDED_REPLIES, model_id=MODEL, **kwargs)  # type: ignore[arg-type]


def _reservation(entry_size_chars: int = 0) -> int:
    return budget.estimate_reservation_nusd(MODEL, entry_size_chars, 800)


def test_the_price_of_a_call_is_the_dated_table_and_batch_is_half() -> None:
    # Claude Haiku 4.5 regional: $1.10 / $5.50 per million tokens
    assert spend.call_cost_usd(MODEL, 1_000_000, 0) == pytest.approx(1.10)
    assert spend.call_cost_usd(MODEL, 0, 1_000_000) == pytest.approx(5.50)
    assert spend.call_cost_nano(MODEL, 1000, 200, "batch") * 2 == spend.call_cost_nano(MODEL, 1000, 200)
    with pytest.raises(LookupError, match="no price for model"):
        spend.call_cost_usd("some-other-model", 1, 1)


def test_a_job_spends_what_its_calls_cost_and_stops_before_the_call_that_would_pass_the_budget(job) -> None:
    prepared, entries = job
    provider = _provider()
    # room for two calls' reservations but not three: the third document is refused without a call
    budget_usd = spend.to_usd(2 * _reservation(10_000) + CALL_NANO)
    options = JobOptions(max_cost_usd=budget_usd)
    for entry in entries[:2]:
        outcome = process_document(
            document_event(prepared, entry, options=options), FakeLambdaContext(), provider=provider
        )
        assert outcome.status == "extracted"
    ledger = budget.read_ledger(prepared.job_id)
    assert ledger is not None
    assert (ledger.spent_nusd, ledger.reserved_nusd, ledger.settled_calls) == (2 * CALL_NANO, 0, 2)
    assert ledger.headroom_nusd == ledger.budget_nusd - 2 * CALL_NANO
    # the next reservation does not fit: tighten the budget to just the spent amount
    budget.set_budget(prepared.job_id, spend.to_usd(2 * CALL_NANO + 1))
    with pytest.raises(BudgetExceeded, match=r"docagent budget job-budget --max-usd N"):
        process_document(
            document_event(prepared, entries[2], options=options), FakeLambdaContext(), provider=provider
        )
    assert len(provider.calls) == 2  # no call started
    stopped = budget.read_ledger(prepared.job_id)
    assert stopped is not None and stopped.stopped is not None and stopped.spent_nusd == 2 * CALL_NANO
    # raised: the stopped document continues, the done ones are not called again
    budget.set_budget(prepared.job_id, 1.0)
    for entry in entries:
        process_document(
            document_event(prepared, entry, options=options), FakeLambdaContext(), provider=provider
        )
    assert len(provider.calls) == 4
    final = budget.read_ledger(prepared.job_id)
    assert final is not None
    assert (final.spent_nusd, final.settled_calls, final.reservations, final.stopped) == (
        4 * CALL_NANO,
        4,
        {},
        None,
    )


def test_a_call_that_crashed_mid_flight_keeps_its_reservation_and_is_charged_once(job) -> None:
    prepared, entries = job
    provider = _provider(crash_on_calls=(1,))
    options = JobOptions(max_cost_usd=1.0)
    event = document_event(prepared, entries[0], options=options)
    with pytest.raises(SimulatedCrash):
        process_document(event, FakeLambdaContext(), provider=provider)
    crashed = budget.read_ledger(prepared.job_id)
    assert crashed is not None and len(crashed.reservations) == 1 and crashed.spent_nusd == 0
    held = crashed.reserved_nusd
    storage_clear_in_progress(prepared.job_id)
    process_document(
        document_event(prepared, entries[0], retry_count=1, options=options),
        FakeLambdaContext(),
        provider=provider,
    )
    done = budget.read_ledger(prepared.job_id)
    assert done is not None and held > 0
    assert (done.spent_nusd, done.reserved_nusd, done.reservations) == (CALL_NANO, 0, {})


def test_a_journalled_call_reused_after_a_crash_is_settled_once(job) -> None:
    prepared, entries = job
    options = JobOptions(max_cost_usd=1.0)
    entry = entries[0]
    name = budget.reservation_name(entry.document_id, "extract")
    budget.reserve(
        prepared.job_id, name, 5_000_000, 1.0
    )  # reserved, then the call finished and was journalled
    provider = _provider()
    process_document(document_event(prepared, entry, options=options), FakeLambdaContext(), provider=provider)
    [call] = s3_json.list_model_calls(prepared.job_id, entry.document_id)
    assert not budget.settle(prepared.job_id, name, 123)  # settled already: nothing charged twice
    ledger = budget.read_ledger(prepared.job_id)
    assert ledger is not None and ledger.spent_nusd == spend.call_cost_nano(
        MODEL, call.input_tokens, call.output_tokens
    )


def test_a_call_that_did_not_finish_gives_its_reservation_back(job) -> None:
    prepared, entries = job
    options = JobOptions(max_cost_usd=1.0)
    provider = RefusingProvider(ModelThrottled("slow down"))
    with pytest.raises(ModelThrottled):
        process_document(
            document_event(prepared, entries[0], options=options), FakeLambdaContext(), provider=provider
        )
    ledger = budget.read_ledger(prepared.job_id)
    assert ledger is not None
    assert (ledger.spent_nusd, ledger.reserved_nusd, ledger.headroom_nusd) == (0, 0, ledger.budget_nusd)


def test_the_warning_goes_out_once_at_its_share(job) -> None:
    prepared, _ = job
    budget.reserve(prepared.job_id, "a#extract", 100, spend.to_usd(1000))
    budget.settle(prepared.job_id, "a#extract", 700)
    assert not budget.read_ledger(prepared.job_id).warned  # type: ignore[union-attr]
    budget.reserve(prepared.job_id, "b#extract", 200, spend.to_usd(1000))
    budget.settle(prepared.job_id, "b#extract", 150)
    assert budget.read_ledger(prepared.job_id).warned  # type: ignore[union-attr]


def storage_clear_in_progress(job_id: str) -> None:
    """The dead invocation's INPROGRESS idempotency record would block the retry until its deadline."""
    table = get_settings().idempotency_table_name
    for item in aws.dynamodb_client().scan(TableName=table)["Items"]:
        if item.get("status", {}).get("S") == "INPROGRESS":
            aws.dynamodb_client().delete_item(TableName=table, Key={"id": item["id"]})


def test_a_call_waits_while_calls_in_flight_hold_the_headroom_then_fits_once_they_settle(job) -> None:
    prepared, entries = job
    provider = _provider()
    options = JobOptions(max_cost_usd=spend.to_usd(_reservation(10_000)))
    # another document's call in flight holds most of the budget
    budget.reserve(prepared.job_id, "other#extract", _reservation(6_000), spend.to_usd(_reservation(10_000)))
    event = document_event(prepared, entries[0], options=options)
    with pytest.raises(BudgetBusy, match="waits for the 1 call"):
        process_document(event, FakeLambdaContext(), provider=provider)
    assert provider.calls == []
    budget.settle(prepared.job_id, "other#extract", CALL_NANO)  # it cost far less than reserved
    outcome = process_document(event, FakeLambdaContext(), provider=provider)
    assert outcome.status == "extracted" and len(provider.calls) == 1


def test_each_result_carries_its_model_cost_and_the_report_sums_them(job) -> None:
    prepared, entries = job
    provider = _provider()
    rows = []
    for entry in entries[:3]:
        outcome = process_document(document_event(prepared, entry), FakeLambdaContext(), provider=provider)
        result = s3_json.get_result(prepared.job_id, entry.document_id)
        assert result is not None and result.model_cost_usd == spend.to_usd(CALL_NANO)
        assert outcome.row is not None and outcome.row.model_cost_usd == result.model_cost_usd
        rows.append(outcome.row)
    assert counts_of(rows, [], None).cost_nano == 3 * CALL_NANO  # the report sums them exactly
    assert (
        counts_of([row.model_copy(update={"model_cost_usd": None}) for row in rows], [], None).cost_nano
        is None
    )


def test_a_job_without_a_budget_gets_the_deployments_default(cloud, env) -> None:
    env.setenv("DEFAULT_MAX_COST_USD", "0.5")
    get_settings.cache_clear()
    seed_documents(2)
    assert prepare("job-default").options.max_cost_usd == 0.5
    assert prepare("job-own", options={"max_cost_usd": 2.0}).options.max_cost_usd == 2.0
    stored = s3_json.get_json(storage.request_key("job-default"))
    assert stored["request"]["options"]["max_cost_usd"] is None  # the request is kept as sent
