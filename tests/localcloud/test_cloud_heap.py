"""A serving local cloud keeps what it started with out of the collector's way (gc.freeze), collects what
comes after as usual (its youngest generation less often), and gives the rest back to the collector, with its
thresholds, when it stops (localcloud/server.py). What the process held is frozen as the start begins, so the
start's own requests walk none of it; a previous cloud's state is collected first, never frozen."""

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


def test_the_start_s_own_requests_find_what_the_process_held_frozen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The start's first requests (its first boto3 client reads the SDK's models) walk none of moto's heap."""
    frozen_then: list[int] = []
    prepare = LocalCloud.prepare_action_targets

    def recording(self: LocalCloud) -> None:
        frozen_then.append(gc.get_freeze_count())
        prepare(self)

    monkeypatch.setattr(LocalCloud, "prepare_action_targets", recording)
    with LocalCloud(tmp_path / "state", persist=False):
        pass
    assert frozen_then and frozen_then[0] > 10_000
    assert gc.get_freeze_count() == 0


def test_a_previous_cloud_s_garbage_is_collected_not_frozen(tmp_path: Path) -> None:
    was_enabled = gc.isenabled()
    gc.disable()  # only the start's own collection may free it
    try:
        with LocalCloud(tmp_path / "first", persist=False):
            garbage = Node()
            gone = weakref.ref(garbage)
            del garbage
        assert gone() is not None
        with LocalCloud(tmp_path / "second", persist=False):
            assert gone() is None, "collected as the second cloud started, not frozen with what it held"
    finally:
        if was_enabled:
            gc.enable()


def test_a_start_that_fails_leaves_nothing_frozen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def taken(self: LocalCloud) -> None:
        raise OSError("the port is taken")

    monkeypatch.setattr(LocalCloud, "prepare_action_targets", taken)
    cloud = LocalCloud(tmp_path / "state", persist=False)
    try:
        with pytest.raises(OSError, match="taken"):
            cloud.start()
        assert gc.get_freeze_count() == 0
    finally:
        cloud.stop()
