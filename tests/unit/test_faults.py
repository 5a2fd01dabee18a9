from __future__ import annotations

from typing import Any

import pytest

from functions import s3_json, storage
from functions.durability.faults import fault_point
from functions.errors import InjectedFault
from functions.payloads.job import FaultSpec, JobOptions
from functions.settings import get_settings
from tests.fakes import FakeLambdaContext, SimulatedCrash

JOB = "job-faults"


def options(**spec: Any) -> JobOptions:
    return JobOptions(fault=FaultSpec(**spec))


@pytest.fixture
def enabled(env):
    env.setenv("FAULT_INJECTION_ENABLED", "true")
    get_settings.cache_clear()


def test_fault_points_are_inert_unless_enabled():
    fault_point("before_action", options(point="before_action"), 0, job_id=JOB)  # injection disabled


def test_raise_mode_raises_at_the_named_point_only(enabled):
    spec = options(point="before_store_result", mode="raise")
    fault_point("after_store_result", spec, 0, job_id=JOB, document_index=0)
    fault_point("before_store_result", JobOptions(), 0, job_id=JOB)
    with pytest.raises(InjectedFault, match="before_store_result"):
        fault_point("before_store_result", spec, 0, job_id=JOB, document_index=0)


def test_document_index_and_until_retry_narrow_the_fault(enabled):
    spec = options(point="after_model_call", document_index=7, mode="raise", until_retry=2)
    fault_point("after_model_call", spec, 0, job_id=JOB, document_index=6)
    with pytest.raises(InjectedFault):
        fault_point("after_model_call", spec, 1, job_id=JOB, document_index=7)
    fault_point("after_model_call", spec, 2, job_id=JOB, document_index=7)  # recovered after two retries


def test_exit_mode_kills_the_process_with_137(enabled, fake_exit):
    with pytest.raises(SimulatedCrash):
        fault_point("before_action", options(point="before_action", mode="exit"), 0, job_id=JOB)
    assert fake_exit == [137]


def test_hang_mode_sleeps_past_the_deadline(enabled, monkeypatch):
    slept: list[float] = []
    monkeypatch.setattr("functions.durability.faults.time.sleep", slept.append)
    fault_point("before_model_call", options(point="before_model_call", mode="hang"), 0, job_id=JOB,
                context=FakeLambdaContext(timeout_ms=3000))  # fmt: skip
    assert 4.5 < slept[0] <= 5.0


def firings(job_id: str = JOB) -> list[str]:
    return [item["Key"] for item in s3_json.list_objects(storage.faults_root(job_id))]


def test_times_fires_at_the_first_attempt_that_reaches_the_point_whatever_its_number(cloud, enabled):
    """Attempt 0 timed out before the point (it never called fault_point): attempt 1 is the first arrival,
    so it fires (``until_retry: 1`` would not: its retry count is 1); a second arrival does not fire."""
    spec = options(point="after_model_call", document_index=7, mode="raise", times=1)
    fault_point("after_model_call", spec, 1, job_id=JOB, document_index=6)  # another document: nothing
    assert firings() == []
    with pytest.raises(InjectedFault):
        fault_point("after_model_call", spec, 1, job_id=JOB, document_index=7)
    assert firings() == [storage.fault_fired_key(JOB, "after_model_call", "document-7", 0)], (
        "the firing is recorded before the fault fires"
    )
    fault_point("after_model_call", spec, 2, job_id=JOB, document_index=7)  # recovered: fired once
    fault_point("after_model_call", spec, 0, job_id=JOB, redrive_count=1, document_index=7)  # and a redrive
    assert len(firings()) == 1


def test_times_counts_each_document_action_and_part_apart_and_allows_n_firings(cloud, enabled):
    twice = options(point="after_report_partial", mode="raise", times=2)
    for part in (0, 1):
        for _ in range(2):
            with pytest.raises(InjectedFault):
                fault_point("after_report_partial", twice, 0, job_id=JOB, part=part)
        fault_point("after_report_partial", twice, 0, job_id=JOB, part=part)  # its two firings used up
    every_action = options(point="before_action", mode="raise", times=1)
    for action in ("export", "ticket"):
        with pytest.raises(InjectedFault):
            fault_point("before_action", every_action, 0, job_id=JOB, action=action)
        fault_point("before_action", every_action, 1, job_id=JOB, action=action)
    with pytest.raises(InjectedFault):  # another job has its own count
        fault_point("before_action", every_action, 0, job_id="job-other", action="export")
    assert [key.split("/", 3)[3] for key in firings()] == [
        "after_report_partial/part-0/fired-0.json",
        "after_report_partial/part-0/fired-1.json",
        "after_report_partial/part-1/fired-0.json",
        "after_report_partial/part-1/fired-1.json",
        "before_action/action-export/fired-0.json",
        "before_action/action-ticket/fired-0.json",
    ]


def test_a_marker_another_arrival_wrote_first_means_this_one_does_not_fire(cloud, enabled):
    """Two arrivals at once (a document delivered twice): the loser of the conditional write stays quiet."""
    spec = options(point="before_verify", mode="raise", times=1)
    s3_json.put_json(storage.fault_fired_key(JOB, "before_verify", "job", 0), {"firing": 0})
    fault_point("before_verify", spec, 0, job_id=JOB)


def test_times_is_left_out_of_a_spec_that_does_not_set_it():
    """Requests armed before the key existed dump (and hash) as they did."""
    assert "times" not in FaultSpec(point="before_verify", until_retry=1).model_dump()
    assert FaultSpec(point="before_verify", times=1).model_dump()["times"] == 1
    with pytest.raises(ValueError, match="greater than or equal to 1"):
        FaultSpec(point="before_verify", times=0)
