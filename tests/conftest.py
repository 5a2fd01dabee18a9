"""Shared test helpers for every test suite: the JSON events under tests/events/, a fake ``os._exit``, and
the jsii runtime told not to print its Node end-of-life banner (docs/contributing.md "Tests")."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import stacks  # noqa: F401 (quiets jsii's Node banner before any test imports aws_cdk: stacks/__init__.py)
from tests.fakes import SimulatedCrash

EVENTS_DIR = Path(__file__).resolve().parent / "events"
TESTS_DIR = Path(__file__).resolve().parent

# Each test folder is one layer, marked here (a `pytestmark` in a conftest.py marks nothing): `-m unit`,
# `-m infra`, and `-m "not integration"` (the fast lane, `make unit`) select by layer.
LAYER_MARKS = {
    "unit": "unit",
    "infra": "infra",
    "integration": "integration",
    "localcloud": "integration",
    "chaos": "integration",
    "experiment": "integration",
    "browser": "integration",
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        folder = Path(item.path).resolve().relative_to(TESTS_DIR).parts[0]
        if (mark := LAYER_MARKS.get(folder)) is not None:
            item.add_marker(mark)
        if mark == "integration" and getattr(getattr(item, "module", None), "mock_aws", None) is not None:
            # moto's backends are one per process: mock_aws resets them, and with them the session cloud that
            # the integration tests share in the same worker (its role, bucket and state machine gone).
            item.add_marker(pytest.mark.own_cloud)


def read_event(name: str) -> Any:
    """A fresh copy of tests/events/{name}.json."""
    return json.loads((EVENTS_DIR / f"{name}.json").read_text())


@pytest.fixture
def load_event() -> Callable[[str], Any]:
    return read_event


@pytest.fixture
def fake_exit(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """``os._exit`` raises SimulatedCrash instead of ending the test run; the list collects the exit codes."""
    codes: list[int] = []

    def exit_(code: int) -> None:
        codes.append(code)
        raise SimulatedCrash(f"os._exit({code})")

    monkeypatch.setattr(os, "_exit", exit_)
    return codes
