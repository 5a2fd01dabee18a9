"""Shared test helpers for every test suite: the JSON events under tests/events/."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

EVENTS_DIR = Path(__file__).resolve().parent / "events"


def read_event(name: str) -> Any:
    """A fresh copy of tests/events/{name}.json."""
    return json.loads((EVENTS_DIR / f"{name}.json").read_text())


@pytest.fixture
def load_event() -> Callable[[str], Any]:
    return read_event
