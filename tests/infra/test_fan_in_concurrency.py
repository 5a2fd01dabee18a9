"""M4: the fan-in Maps' MaxConcurrency comes from the config (fan_in_max_concurrency), not the ASL."""

from __future__ import annotations

from typing import Any

from stacks.config import load_config
from stacks.workflow import render_definition


def _states(node: Any) -> dict[str, Any]:
    """Every state of the definition, nested ones included, by name."""
    found: dict[str, Any] = {}
    if isinstance(node, dict):
        for name, state in node.get("States", {}).items():
            found[name] = state
        for value in node.values():
            found |= _states(value)
    elif isinstance(node, list):
        for item in node:
            found |= _states(item)
    return found


def test_the_fan_in_maps_take_their_concurrency_from_the_config() -> None:
    states = _states(render_definition(load_config({"fan_in_max_concurrency": 7, "max_concurrency": 3})))
    assert states["ReportPartitions"]["MaxConcurrency"] == 7
    assert states["VerifyPartitions"]["MaxConcurrency"] == 7
    assert states["ReviewDocuments"]["MaxConcurrency"] == 3
    assert load_config({}).fan_in_max_concurrency == 40, "the value the ASL hard-coded until 2026-12-07"
