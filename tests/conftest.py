"""Shared test helpers for every test suite: the JSON events under tests/events/, a fake ``os._exit``, the
jsii runtime told not to print its Node end-of-life banner (docs/contributing.md "Tests"), and one OCR cache
for the whole run (below)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
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


# The local OCR engine's disk cache (docagent/localcloud/textract/ocr_cache.py): set by the controller before
# its xdist workers start, so every worker, each local cloud and each `docagent` subprocess of the run shares
# it: a page (the claims example's scan, photo and fax, `docagent init`'s scan) is read by the engine once a
# run, by its first reader, and never across runs (the folder is new each run and removed at its end).
OCR_CACHE = "DOCAGENT_OCR_CACHE"
_OCR_CACHE_MADE: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput") or os.environ.get(OCR_CACHE):
        return  # a worker inherits the controller's; a folder the user named is kept
    folder = tempfile.mkdtemp(prefix="docagent-ocr-cache-")
    os.environ[OCR_CACHE] = folder
    _OCR_CACHE_MADE.append(folder)


def pytest_unconfigure(config: pytest.Config) -> None:
    while _OCR_CACHE_MADE:
        folder = _OCR_CACHE_MADE.pop()
        shutil.rmtree(folder, ignore_errors=True)
        if os.environ.get(OCR_CACHE) == folder:
            del os.environ[OCR_CACHE]


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
