"""Durable steps (docs/semantics.md P1-P5) over the real Powertools idempotency code and moto DynamoDB."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import boto3
import pytest
from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyAlreadyInProgressError,
    IdempotencyValidationError,
)

from functions.durability import durable
from functions.payloads.model_calls import LookupRecord
from tests.fakes import FakeLambdaContext, SimulatedCrash
from tests.support import IDEMPOTENCY_TABLE

IDS = {"job_id": "job-1", "document_id": "doc-1"}


class Counter:
    def __init__(self, fail_first: BaseException | None = None) -> None:
        self.calls = 0
        self.fail_first = fail_first

    def __call__(self) -> LookupRecord:
        self.calls += 1
        if self.fail_first is not None and self.calls == 1:
            raise self.fail_first
        return LookupRecord(table="t", key=f"K-{self.calls:05d}", found=False)


def run(
    counter: Counter, context: FakeLambdaContext | None = None, ids: dict[str, str] = IDS
) -> LookupRecord:
    return durable.run_step(
        "lookup-known",
        ids=ids,
        fn=counter,
        result_model=LookupRecord,
        context=context or FakeLambdaContext(),
    )


def records() -> list[dict[str, Any]]:
    return boto3.client("dynamodb").scan(TableName=IDEMPOTENCY_TABLE)["Items"]


def test_p2_a_completed_step_returns_its_stored_result_without_running_again(cloud):
    counter = Counter()
    first = run(counter)
    second = run(counter)
    assert counter.calls == 1
    assert second == first
    assert isinstance(second, LookupRecord)
    assert [item["status"]["S"] for item in records()] == ["COMPLETED"]


def test_p1_key_is_the_step_name_and_business_ids_only(cloud):
    run(Counter())
    digest = hashlib.md5(json.dumps(IDS, sort_keys=True).encode()).hexdigest()
    assert [item["id"]["S"] for item in records()] == [f"docagent.lookup-known#{digest}"]


def test_p1_other_ids_are_another_step_instance(cloud):
    counter = Counter()
    run(counter)
    run(counter, ids={"job_id": "job-1", "document_id": "doc-2"})
    assert counter.calls == 2


def test_p3_an_exception_deletes_the_record_so_the_retry_runs_again(cloud):
    counter = Counter(fail_first=RuntimeError("model throttled"))
    with pytest.raises(RuntimeError):
        run(counter)
    assert records() == []
    assert run(counter).key == "K-00002"
    assert counter.calls == 2


def test_p4_a_dead_invocation_blocks_retries_until_its_deadline(cloud):
    counter = Counter(fail_first=SimulatedCrash())
    with pytest.raises(SimulatedCrash):
        run(counter, FakeLambdaContext(timeout_ms=30_000))
    [record] = records()
    assert record["status"]["S"] == "INPROGRESS"
    with pytest.raises(IdempotencyAlreadyInProgressError):
        run(counter)
    assert counter.calls == 1


def test_payload_validation_refuses_the_same_key_with_other_data(cloud):
    def step(sha: str) -> LookupRecord:
        return durable.run_step(
            "prepare", ids={"job_id": "job-1"}, key_field="job_id", validate={"request_sha256": sha},
            fn=Counter(), result_model=LookupRecord, context=FakeLambdaContext(),
        )  # fmt: skip

    assert step("a" * 64) == step("a" * 64)
    with pytest.raises(IdempotencyValidationError):
        step("b" * 64)


def test_validate_without_a_key_field_is_refused(cloud):
    with pytest.raises(ValueError, match="key_field"):
        durable.run_step(
            "prepare", ids={"job_id": "j"}, validate={"sha": "x"}, fn=Counter(), result_model=LookupRecord,
            context=FakeLambdaContext(),
        )  # fmt: skip


def read(counter: Counter, ids: dict[str, str] = IDS) -> tuple[LookupRecord, bool]:
    return durable.run_read_step("lookup-known", ids=ids, fn=counter, result_model=LookupRecord)


def test_a_read_step_stores_its_first_answer_once_and_keeps_it(cloud):
    counter = Counter()
    first, reused = read(counter)
    assert (first.key, reused) == ("K-00001", False)
    [record] = records()
    assert record["status"]["S"] == "COMPLETED" and "in_progress_expiration" not in record
    again, reused = read(counter)
    assert (again, reused) == (first, True)  # read again (K-00002), the stored answer kept
    assert counter.calls == 2


def test_a_read_step_s_record_is_the_one_run_step_writes(cloud):
    """The same key and item: a record of either is the other's answer (a deploy between two attempts)."""
    counter = Counter()
    stored, _ = read(counter)
    assert run(counter) == stored and counter.calls == 1  # run_step replays it without running
    run(written := Counter(), ids={"job_id": "job-1", "document_id": "doc-2"})
    replayed, reused = read(Counter(), ids={"job_id": "job-1", "document_id": "doc-2"})
    assert reused and replayed.key == "K-00001" and written.calls == 1


def test_a_read_step_waits_for_a_live_in_progress_record_and_takes_over_a_dead_one(cloud):
    with pytest.raises(SimulatedCrash):
        run(Counter(fail_first=SimulatedCrash()), FakeLambdaContext(timeout_ms=30_000))
    with pytest.raises(IdempotencyAlreadyInProgressError):
        read(Counter())
    with pytest.raises(SimulatedCrash):
        run(Counter(fail_first=SimulatedCrash()), FakeLambdaContext(timeout_ms=0), ids={"job_id": "j2"})
    answer, reused = read(Counter(), ids={"job_id": "j2"})
    assert (answer.key, reused) == ("K-00001", False)
