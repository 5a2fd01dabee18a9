"""The local account's Lambda concurrency (docagent/localcloud/lambdas/runtime.py): derived from the CPUs the
process may use, overridden by DOCAGENT_LAMBDA_CONCURRENCY; a bad override is refused in one line."""

from __future__ import annotations

import os

import pytest

from docagent.localcloud.lambdas.runtime import (
    CONCURRENCY_ENV,
    INVOCATIONS_PER_CPU,
    MIN_CONCURRENCY,
    default_concurrency_limit,
)


def test_the_default_is_four_invocations_per_usable_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1, 2}, raising=False)
    assert default_concurrency_limit({}) == 3 * INVOCATIONS_PER_CPU
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0}, raising=False)
    assert default_concurrency_limit({}) == max(MIN_CONCURRENCY, INVOCATIONS_PER_CPU)


def test_the_environment_overrides_it() -> None:
    assert default_concurrency_limit({CONCURRENCY_ENV: "40"}) == 40
    assert default_concurrency_limit({CONCURRENCY_ENV: " "}) >= MIN_CONCURRENCY


@pytest.mark.parametrize("given", ["0", "-2", "many", "2.5"])
def test_a_bad_override_is_refused_with_its_name(given: str) -> None:
    with pytest.raises(
        ValueError, match=f"^{CONCURRENCY_ENV} must be a positive whole number, not '{given}'$"
    ):
        default_concurrency_limit({CONCURRENCY_ENV: given})
