"""The in-progress retry polls: a kill after a side effect costs the killed invocation's time, not more.

Every state whose function uses durable steps retries ``IdempotencyAlreadyInProgressError`` every few seconds
(BackoffRate 1) for as long as the dead invocations' records can hold (stacks/in_progress_polling.py). The
retry schedule is played out from the rendered definition's own Retry fields, as Step Functions runs them
(the first retrier that names the error handles it; each retrier counts its own attempts across the state's
run: docs/semantics.md), for several function timeouts.
"""

from __future__ import annotations

from typing import Any

import pytest

from stacks.config import DocAgentConfig
from stacks.function_specs import FUNCTION_SPECS
from stacks.in_progress_polling import (
    CRASH_RETRIES_COVERED,
    MIN_POLL_SECONDS,
    in_progress_polling,
    record_lifetime_seconds,
)
from tests.infra.test_asl import CRASH_ERRORS, PLAUSIBLE_VALUES, substituted, walk_states

IN_PROGRESS = "IdempotencyAlreadyInProgressError"
KILL = "Runtime.ExitError"
TIMEOUTS = [3, 60, 120, 300, 900]


def durable_states(config: DocAgentConfig) -> dict[str, dict[str, Any]]:
    """The Lambda task states that invoke a function with durable steps, by state name."""
    durable = {spec.construct_id for spec in FUNCTION_SPECS if spec.uses_idempotency}
    found = {}
    for name, state, _ in walk_states(substituted(PLAUSIBLE_VALUES, config)["States"]):
        function = str(state.get("Parameters", {}).get("FunctionName", "")).rsplit("DocAgent-", 1)[-1]
        if function in durable:
            found[name] = state
    return found


def handler(state: dict[str, Any], error: str) -> int | None:
    """The index of the retrier that handles ``error``: the first that names it (or States.ALL)."""
    for index, retrier in enumerate(state.get("Retry", [])):
        if error in retrier["ErrorEquals"] or "States.ALL" in retrier["ErrorEquals"]:
            return index
    return None


def play(state: dict[str, Any], timeout: float, kills: int, run_seconds: float = 0.0) -> tuple[float, bool]:
    """Seconds from the first kill to the state's end, and whether it succeeded.

    Worst case for the wait: each killed attempt dies right after its durable step began, so its INPROGRESS
    record holds a whole function timeout (Powertools: the invocation's remaining time). The first ``kills``
    attempts that get past the record die; the next one succeeds after ``run_seconds``.
    """
    retriers = state["Retry"]
    counts = [0] * len(retriers)
    now, record_expiry, left = 0.0, timeout, kills - 1  # the first kill happens at 0

    def retry(error: str) -> bool:
        nonlocal now
        index = handler(state, error)
        if index is None or counts[index] >= retriers[index].get("MaxAttempts", 3):
            return False
        retrier = retriers[index]
        now += retrier.get("IntervalSeconds", 1) * retrier.get("BackoffRate", 2.0) ** counts[index]
        counts[index] += 1
        return True

    error = KILL
    while retry(error):
        if now < record_expiry:
            error = IN_PROGRESS
        elif left > 0:
            left -= 1
            record_expiry, error = now + timeout, KILL
        else:
            return now + run_seconds, True
    return now, False


@pytest.mark.parametrize("timeout", TIMEOUTS)
def test_every_durable_state_polls_the_in_progress_record(timeout: int) -> None:
    config = DocAgentConfig(function_timeout_seconds=timeout)
    polling = in_progress_polling(timeout)
    states = durable_states(config)
    assert {"PrepareJob", "ListDocuments", "SealJob", "ProcessDocument", "RunActions"} <= set(states)
    for name, state in states.items():
        index = handler(state, IN_PROGRESS)
        assert index is not None, f"{name} does not retry {IN_PROGRESS}"
        retrier = state["Retry"][index]
        assert retrier["ErrorEquals"] == [IN_PROGRESS], name  # no other error polls
        assert retrier["BackoffRate"] == 1, name
        assert (retrier["IntervalSeconds"], retrier["MaxAttempts"]) == (
            polling.interval_seconds,
            polling.max_attempts,
        ), name
        # The polls outlast one record per crash the state retries: a kill on every attempt never runs the
        # in-progress retrier out before the crash retrier.
        crashes = state["Retry"][handler(state, KILL)]
        assert set(crashes["ErrorEquals"]) >= CRASH_ERRORS, name
        assert crashes["MaxAttempts"] <= CRASH_RETRIES_COVERED, name
        assert polling.seconds_covered >= crashes["MaxAttempts"] * record_lifetime_seconds(timeout), name


@pytest.mark.parametrize("timeout", TIMEOUTS)
def test_one_kill_after_a_side_effect_ends_within_the_timeout_and_the_backoffs(timeout: int) -> None:
    """Kill to end: the dead invocation's time, the crash retry's first interval, at most one poll interval
    (and the step's own run). Before the polls (one interval of function timeout + 5 s) a kill at the
    invocation's start cost 2 s + timeout + 5 s."""
    polling = in_progress_polling(timeout)
    for name, state in durable_states(DocAgentConfig(function_timeout_seconds=timeout)).items():
        crash_interval = state["Retry"][handler(state, KILL)]["IntervalSeconds"]
        seconds, succeeded = play(state, timeout, kills=1, run_seconds=1.0)
        assert succeeded, name
        assert seconds <= timeout + crash_interval + polling.interval_seconds + 1.0, name
        assert seconds > timeout, name  # the record held until the dead invocation's deadline


@pytest.mark.parametrize("timeout", TIMEOUTS)
def test_a_kill_on_every_attempt_fails_the_state_on_its_crash_retrier_then_one_wait_per_kill(
    timeout: int,
) -> None:
    polling = in_progress_polling(timeout)
    for name, state in durable_states(DocAgentConfig(function_timeout_seconds=timeout)).items():
        crashes = state["Retry"][handler(state, KILL)]
        retries = crashes["MaxAttempts"]
        backoff = sum(crashes["IntervalSeconds"] * crashes["BackoffRate"] ** n for n in range(retries))
        seconds, succeeded = play(state, timeout, kills=retries + 1)
        assert not succeeded, name  # every attempt died: the job fails, to be redriven
        # Each retried kill waits out its own record, never longer (the old BackoffRate 1.5 grew the waits).
        assert seconds <= backoff + retries * (timeout + polling.interval_seconds), name
        # One kill fewer: the last retry succeeds.
        assert play(state, timeout, kills=retries)[1], name


@pytest.mark.parametrize("timeout", TIMEOUTS)
def test_polls_are_short_and_few(timeout: int) -> None:
    polling = in_progress_polling(timeout)
    assert MIN_POLL_SECONDS <= polling.interval_seconds <= max(MIN_POLL_SECONDS, timeout // 50)
    assert polling.max_attempts <= 99_999_999  # Step Functions' limit (docagent/localcloud/.../validation.py)
