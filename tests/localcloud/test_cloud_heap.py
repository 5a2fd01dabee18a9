"""A serving local cloud keeps what it started with out of the collector's way (gc.freeze), collects what
comes after as usual (its youngest generation less often), and gives the rest back to the collector, with its
thresholds, when it stops (localcloud/server.py)."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import pytest

from docagent.localcloud.server import GC_YOUNG, LocalCloud

pytestmark = pytest.mark.own_cloud


class Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only the collector frees it


def test_what_the_cloud_starts_with_is_frozen_until_it_stops(tmp_path: Path) -> None:
    before = gc.get_threshold()
    with LocalCloud(tmp_path / "state", persist=False):
        assert gc.get_freeze_count() > 10_000, "moto and its backends are in the permanent generation"
        assert gc.get_threshold() == (GC_YOUNG, *before[1:])
        garbage = Node()
        gone = weakref.ref(garbage)
        del garbage
        gc.collect()
        assert gone() is None, "what came after the start is collected as before"
    assert gc.get_freeze_count() == 0, "stopped: everything is the collector's again"
    assert gc.get_threshold() == before
