"""Queries on a workflow definition (the deployed ASL): the flow after a state, the Retry rule that catches an
error, the Distributed Map state and its ResultWriter prefix. Pure functions of the parsed definition."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from functions import storage

# Error names per the Amazon States Language (as of 2026-11, AWS docs: "Handling errors in Step Functions
# workflows", https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html):
# States.ALL matches any known error except the terminal States.DataLimitExceeded and States.Runtime;
# States.TaskFailed, in a Retry or Catch, matches any known error except States.Timeout (and those two).
ALL = "States.ALL"
TASK_FAILED = "States.TaskFailed"
TIMEOUT = "States.Timeout"
UNCATCHABLE = frozenset({"States.DataLimitExceeded", "States.Runtime"})
DEFAULT_MAX_ATTEMPTS = 3
DEFAULT_INTERVAL_SECONDS = 1
DEFAULT_BACKOFF_RATE = 2.0


def states_from(definition: dict[str, Any], start: str, *, through_choices: bool = True) -> list[str]:
    """``start`` and every top-level state reachable after it (Next, Default and, unless
    ``through_choices`` is False, the Choice rules' Next), in flow order."""
    states = definition.get("States", {})
    order: list[str] = []
    queue = [start]
    while queue:
        name = queue.pop(0)
        if name in order or name not in states:
            continue
        order.append(name)
        state = states[name]
        following = [choice.get("Next") for choice in state.get("Choices", [])] if through_choices else []
        following += [state.get("Default"), state.get("Next")]
        queue += [name for name in following if name]
    return order


def conditional_states(definition: dict[str, Any], start: str) -> set[str]:
    """The states after ``start`` that run only when a Choice rule picks them (not on the default path)."""
    return set(states_from(definition, start)) - set(states_from(definition, start, through_choices=False))


def error_matches(error_equals: Iterable[str], error: str | None) -> bool:
    """Whether a Retry or Catch rule's ErrorEquals catches ``error``, as Step Functions matches them."""
    names = set(error_equals)
    if error is None:
        return False
    if error in names:
        return True
    if error in UNCATCHABLE:
        return False
    return ALL in names or (TASK_FAILED in names and error != TIMEOUT)


def retry_rule(definition: dict[str, Any], state_name: str, error: str | None) -> dict[str, Any] | None:
    """The first Retry rule of a state (top level or inside a Map's ItemProcessor) that catches ``error``."""
    for name, state in _all_states(definition):
        if name != state_name:
            continue
        for rule in state.get("Retry", []):
            if error_matches(rule.get("ErrorEquals", []), error):
                return dict(rule)
    return None


def retry_policy(definition: dict[str, Any], state_name: str, error: str | None) -> dict[str, Any] | None:
    """The Retry rule that catches ``error`` at ``state_name``, with the ASL defaults filled in."""
    rule = retry_rule(definition, state_name, error)
    if rule is None:
        return None
    return {
        "error_equals": list(rule.get("ErrorEquals", [])),
        "max_attempts": int(rule.get("MaxAttempts", DEFAULT_MAX_ATTEMPTS)),
        "interval_seconds": rule.get("IntervalSeconds", DEFAULT_INTERVAL_SECONDS),
        "backoff_rate": rule.get("BackoffRate", DEFAULT_BACKOFF_RATE),
    }


def _all_states(definition: dict[str, Any]) -> Iterable[tuple[str, dict[str, Any]]]:
    for name, state in definition.get("States", {}).items():
        yield name, state
        processor = state.get("ItemProcessor") or state.get("Iterator")
        if processor:
            yield from _all_states(processor)


def map_state_name(definition: dict[str, Any]) -> str | None:
    """The Distributed Map that processes the documents (its children start at ProcessDocument), or the first
    Distributed Map of a definition without one; None when there is none."""
    maps = [
        (name, state)
        for name, state in definition.get("States", {}).items()
        if state.get("Type") == "Map" and "ItemReader" in state
    ]
    for name, state in maps:
        if (state.get("ItemProcessor") or {}).get("StartAt") == "ProcessDocument":
            return str(name)
    return str(maps[0][0]) if maps else None


def result_writer_prefix(definition: dict[str, Any]) -> str:
    """The Distributed Map's ResultWriter prefix (storage.MAP_RUNS_PREFIX unless the definition says so)."""
    state = definition.get("States", {}).get(map_state_name(definition) or "", {})
    prefix = ((state.get("ResultWriter") or {}).get("Parameters") or {}).get("Prefix")
    return str(prefix or storage.MAP_RUNS_PREFIX).rstrip("/")
