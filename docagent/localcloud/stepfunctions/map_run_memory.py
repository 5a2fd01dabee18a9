"""What a Distributed Map's Map Run remembers (docs/semantics.md M1-M6): its ARN, items and every child's
outcome.

A redriven Map Run keeps its ARN, reuses its items and re-runs only the children that did not succeed; a
restarted local cloud continues it (resume.py, told of every change through an ``Observer``). The
registry finds a Map Run by (execution ARN, Map state name) and by its ARN.
"""

from __future__ import annotations

import datetime
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from moto.stepfunctions.parser.asl.component.state.exec.state_map.iteration.itemprocessor.map_run_record import (  # noqa: E501
    MapRunRecord,
)
from moto.stepfunctions.parser.asl.eval.environment import Environment
from moto.stepfunctions.parser.asl.eval.event.event_detail import EventDetails
from moto.stepfunctions.parser.asl.eval.event.event_manager import EventManager

NOT_SUCCEEDED = ("FAILED", "TIMED_OUT", "ABORTED")


def event_details(**details: Any) -> EventDetails:
    """moto types EventDetails as a closed TypedDict that lacks the redrive events; build it loosely."""
    return cast(EventDetails, details)


def now() -> datetime.datetime:
    return datetime.datetime.now(tz=datetime.UTC)


@dataclass
class ChildOutcome:
    """What one child execution did, in the shape ResultWriter reports it."""

    index: int
    status: str
    input: Any
    output: Any = None
    error: str | None = None
    cause: str | None = None
    started: datetime.datetime = field(default_factory=now)
    stopped: datetime.datetime | None = None
    redrive_count: int = 0
    # A STANDARD child that did not succeed is redriven from this state, with this input (M2).
    resume_from: tuple[str, Any] | None = None
    # The child's own history (map_children.py): its attempts that ended, compressed, and the running one.
    ended_attempts: list[bytes] = field(default_factory=list, repr=False, compare=False)
    running_events: list[dict[str, Any]] | None = field(default=None, repr=False, compare=False)


@dataclass
class MapRunMemory:
    """Everything a Map Run must remember to be redriven: its ARN, items and children's outcomes."""

    map_run_arn: str
    state_machine_arn: str
    items: list[Any]
    outcomes: dict[int, ChildOutcome] = field(default_factory=dict)
    redrive_count: int = 0
    redrive_date: datetime.datetime | None = None
    tolerated_failure_count: int = 0
    tolerated_failure_percentage: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)
    # Set by a restart of the local cloud (resume.py): the Map state runs again to continue this run,
    # not to redrive it: children that ended keep their outcome, the others run (again).
    resuming: bool = False
    # The execution's attempt (its redrive count) that started this run: entering the Map state again in the
    # same attempt (a loop) starts a new Map Run; in a later attempt it redrives this one.
    attempt: int = 0

    def failures(self, weights: list[int] | None = None) -> int:
        return sum(
            weights[index] if weights else 1
            for index, outcome in self.outcomes.items()
            if outcome.status in ("FAILED", "TIMED_OUT")
        )

    def threshold_exceeded(self, weights: list[int] | None = None) -> bool:
        """Either declared threshold breached (an unset one does not count; both unset tolerate none).
        ``weights``: items per child (ItemBatcher): AWS counts failed items, a failed batch all of its
        items."""
        failed, total = self.failures(weights), max(sum(weights) if weights else len(self.items), 1)
        count, percentage = self.tolerated_failure_count, self.tolerated_failure_percentage
        if not count and not percentage:
            return failed > 0
        over_count = bool(count) and failed > count
        over_percentage = bool(percentage) and failed * 100 / total > percentage
        return over_count or over_percentage

    def child_execution_arn(self, index: int) -> str:
        return f"{self.state_machine_arn.replace(':stateMachine:', ':execution:')}:{self.child_name(index)}"

    def child_name(self, index: int) -> str:
        # Stable across redrives: a redriven child keeps its ARN (docs/semantics.md M2).
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{self.map_run_arn}#{index}"))

    def child_index(self, name: str) -> int | None:
        """The index of the child named ``name`` (the last part of its ARN), if this run has it."""
        names: dict[str, int] | None = vars(self).get("_names")
        if names is None:
            names = {self.child_name(index): index for index in range(len(self.items))}
            vars(self)["_names"] = names
        return names.get(name)


class Observer:
    """Told of every Map Run change worth keeping (resume.py records them on disk); does nothing here."""

    def map_run_started(self, key: tuple[str, str], memory: MapRunMemory, record: MapRunRecord) -> None:
        """A new Map Run, or one that runs again (redrive or resume)."""

    def outcomes_changed(self, memory: MapRunMemory, outcomes: list[ChildOutcome], durable: bool) -> None:
        """Children that are now pending, or ended."""

    def child_started(self, memory: MapRunMemory, outcome: ChildOutcome, events: EventManager) -> None:
        """A child execution starts: ``events`` is its own history."""


class _Observers:
    current = Observer()


def observe(observer: Observer | None) -> None:
    _Observers.current = observer or Observer()


def register(key: tuple[str, str], memory: MapRunMemory) -> None:
    """Put a Map Run restored from disk back where the Map state finds it."""
    with _Registry.lock:
        _Registry.by_state[key] = _Registry.by_arn[memory.map_run_arn] = memory


class _Registry:
    lock = threading.Lock()
    by_state: dict[tuple[str, str], MapRunMemory] = {}
    by_arn: dict[str, MapRunMemory] = {}


def reset() -> None:
    """Forget every Map Run (a new local cloud starts empty)."""
    with _Registry.lock:
        _Registry.by_state.clear()
        _Registry.by_arn.clear()


def memory_for_map_run(map_run_arn: str) -> MapRunMemory | None:
    return _Registry.by_arn.get(map_run_arn)


def memories_of(state_machine_arn: str) -> list[MapRunMemory]:
    """The Map Runs whose children run as ``state_machine_arn`` (``arn...:stateMachine:NAME/LABEL``)."""
    with _Registry.lock:
        return [
            memory for memory in _Registry.by_arn.values() if memory.state_machine_arn == state_machine_arn
        ]


def execution_arn(env: Environment) -> str:
    return str(env.states.context_object.context_object_data["Execution"]["Id"])


def current_observer() -> Observer:
    return _Observers.current


def memory_for_state(key: tuple[str, str]) -> MapRunMemory | None:
    """The Map Run an execution's Map state ran before (a redrive or a resume runs it again)."""
    return _Registry.by_state.get(key)


def forget_state(key: tuple[str, str]) -> None:
    """The Map state starts a new Map Run: the one it ran before stays known by its ARN."""
    with _Registry.lock:
        _Registry.by_state.pop(key, None)


def remember(key: tuple[str, str], new: Callable[[], MapRunMemory]) -> MapRunMemory:
    """The Map state's Map Run: the one it ran before, else ``new()``, registered."""
    with _Registry.lock:
        memory = _Registry.by_state.get(key)
        if memory is None:
            memory = new()
            _Registry.by_state[key] = _Registry.by_arn[memory.map_run_arn] = memory
    return memory
