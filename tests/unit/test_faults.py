from __future__ import annotations

from typing import Any

import pytest

from functions.durability.faults import fault_point
from functions.errors import InjectedFault
from functions.payloads.job import FaultSpec, JobOptions
from functions.settings import get_settings
from tests.fakes import FakeLambdaContext, SimulatedCrash


def options(**spec: Any) -> JobOptions:
    return JobOptions(fault=FaultSpec(**spec))


@pytest.fixture
def enabled(env):
    env.setenv("FAULT_INJECTION_ENABLED", "true")
    get_settings.cache_clear()


def test_fault_points_are_inert_unless_enabled():
    fault_point("before_action", options(point="before_action"), 0)  # FAULT_INJECTION_ENABLED=false


def test_raise_mode_raises_at_the_named_point_only(enabled):
    spec = options(point="before_store_result", mode="raise")
    fault_point("after_store_result", spec, 0, document_index=0)
    fault_point("before_store_result", JobOptions(), 0)
    with pytest.raises(InjectedFault, match="before_store_result"):
        fault_point("before_store_result", spec, 0, document_index=0)


def test_document_index_and_until_retry_narrow_the_fault(enabled):
    spec = options(point="after_model_call", document_index=7, mode="raise", until_retry=2)
    fault_point("after_model_call", spec, 0, document_index=6)
    with pytest.raises(InjectedFault):
        fault_point("after_model_call", spec, 1, document_index=7)
    fault_point("after_model_call", spec, 2, document_index=7)  # recovered after two retries


def test_exit_mode_kills_the_process_with_137(enabled, fake_exit):
    with pytest.raises(SimulatedCrash):
        fault_point("before_action", options(point="before_action", mode="exit"), 0)
    assert fake_exit == [137]


def test_hang_mode_sleeps_past_the_deadline(enabled, monkeypatch):
    slept: list[float] = []
    monkeypatch.setattr("functions.durability.faults.time.sleep", slept.append)
    fault_point("before_model_call", options(point="before_model_call", mode="hang"), 0,
                context=FakeLambdaContext(timeout_ms=3000))  # fmt: skip
    assert 4.5 < slept[0] <= 5.0
