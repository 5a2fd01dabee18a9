"""Step Functions executions that outlive the local cloud: recorded as they run, restored, resumed.

What is recorded, in the journal (journal.py) next to the API requests (persistence.py):
- ``exec``: an execution starts (ARN, name, state machine, the definition it runs, input, start date);
- ``event``: each history event of an execution (its status, output, error and redrives follow from them);
- ``map_run``: a Map Run starts or runs again (ARN, items, thresholds, redrive count);
- ``children``: children of a Map Run become pending or end (the outcome ResultWriter reports);
- ``child_state``: a child enters a state (where a child cut off by a crash continues);
- ``token``: a task token handed out (``waitForTaskToken``), so the token stays valid after a restart.

At start every execution is rebuilt with its history. One that was RUNNING continues from its last
recorded state transition: the state that was entered and had not exited runs again with the input it
had (its task in flight runs again, which the durable steps make safe, as after a worker crash); a state
that had exited hands its output to the next state. A Distributed Map continues its Map Run (same ARN):
children that ended keep their outcome, the others run; a task token that was waiting is handed out
again, so ``SendTaskSuccess`` with it still works.
"""

from __future__ import annotations

import copy
import datetime
import json
import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from moto.stepfunctions.parser.api import ExecutionStatus, MapRunStatus
from moto.stepfunctions.parser.asl.component.state.exec.state_map.iteration.itemprocessor.map_run_record import (  # noqa: E501
    MapRunRecord,
)
from moto.stepfunctions.parser.asl.eval.callback.callback import CallbackEndpoint, CallbackPoolManager
from moto.stepfunctions.parser.asl.eval.environment import Environment
from moto.stepfunctions.parser.asl.eval.event.event_manager import EventManager
from moto.stepfunctions.parser.asl.eval.states import ContextObject, TaskData
from moto.stepfunctions.parser.backend.execution import Execution
from moto.stepfunctions.parser.backend.execution_worker import ExecutionWorker
from moto.stepfunctions.parser.models import stepfunctions_parser_backends

from docagent.localcloud.state.journal import Journal
from docagent.localcloud.stepfunctions import distributed_map
from docagent.localcloud.stepfunctions import redrive_execution as redrive
from docagent.localcloud.stepfunctions.distributed_map import ChildOutcome, MapRunMemory

_TAG = "docagent_execution_arn"
_REUSE = "docagent_reuse_tokens"
_CLOSING = {
    "ExecutionSucceeded": ExecutionStatus.SUCCEEDED,
    "ExecutionFailed": ExecutionStatus.FAILED,
    "ExecutionAborted": ExecutionStatus.ABORTED,
    "ExecutionTimedOut": ExecutionStatus.TIMED_OUT,
}


_MAP_RUN_CLOSING = ("MapRunSucceeded", "MapRunFailed", "MapRunAborted")


class _Recording:
    journal: Journal | None = None
    # Per resumed execution: the callback pool that holds its waiting task tokens (handed to its new run)
    # and the tokens its resumed states hand out again, in order.
    callback_pools: dict[str, CallbackPoolManager] = {}
    reuse_tokens: dict[str, deque[str]] = {}
    lock = threading.Lock()


def _record(record: dict[str, Any], *, durable: bool = True) -> None:
    journal = _Recording.journal
    if journal is not None:
        journal.append(record, durable=durable)


# -- recording ------------------------------------------------------------------------------------------


def _start(self: Execution) -> None:
    _record(
        {
            "t": "exec",
            "arn": self.exec_arn,
            "name": self.name,
            "state_machine_arn": self.state_machine.arn,
            "definition": self.state_machine.definition,
            "type": str(self.sm_type),
            "role_arn": self.role_arn,
            "input": json.dumps(self.input_data),
            "start_date": self.start_date,
        }
    )
    _original_start(self)


def _environment(self: ExecutionWorker) -> Environment:
    env = _installed_environment(self)
    arn = self._evaluation_details.execution_details.arn
    vars(env.event_manager)[_TAG] = arn
    with _Recording.lock:
        pool = _Recording.callback_pools.pop(arn, None)
    if pool is not None:
        env.callback_pool_manager = pool
    return env


def _add_event(self: EventManager, *args: Any, **kwargs: Any) -> int:
    event_id = _original_add_event(self, *args, **kwargs)
    arn = vars(self).get(_TAG)
    if arn is not None and _Recording.journal is not None:
        for event in reversed(self._history_event_list):
            if event["id"] == event_id:
                _record({"t": "event", "arn": arn, "event": event})
                break
    return event_id


def _update_task_token(self: ContextObject) -> str:
    """A waitForTaskToken state's token: the one it handed out before a restart, else a new one."""
    arn = str(self.context_object_data["Execution"]["Id"])
    with _Recording.lock:
        reuse = _Recording.reuse_tokens.get(arn)
        token = reuse.popleft() if reuse else None
    if token is None:
        token = _original_update_task_token(self)
    else:
        self.context_object_data["Task"] = TaskData(Token=token)
    _record({"t": "token", "arn": arn, "token": token})
    return token


def _add_callback(self: CallbackPoolManager, callback_id: str) -> CallbackEndpoint:
    """A token registered at restart (resume) is already there, possibly with its outcome: keep it."""
    waiting = self._pool.get(callback_id)
    if waiting is not None and callback_id in vars(self).get(_REUSE, ()):
        return waiting
    return _original_add_callback(self, callback_id)


def _outcome_record(outcome: ChildOutcome) -> dict[str, Any]:
    return {
        "index": outcome.index,
        "status": outcome.status,
        "input": outcome.input,
        "output": outcome.output,
        "error": outcome.error,
        "cause": outcome.cause,
        "started": outcome.started,
        "stopped": outcome.stopped,
        "redrive_count": outcome.redrive_count,
        "resume_from": outcome.resume_from,
    }


class _MapRunRecorder(distributed_map.Observer):
    def map_run_started(self, key: tuple[str, str], memory: MapRunMemory, record: MapRunRecord) -> None:
        _record(
            {
                "t": "map_run",
                "key": key,
                "arn": memory.map_run_arn,
                "state_machine_arn": memory.state_machine_arn,
                "map_state_machine_arn": record.map_state_machine_arn,
                "items": memory.items,
                "max_concurrency": record.max_concurrency,
                "tolerated_failure_count": memory.tolerated_failure_count,
                "tolerated_failure_percentage": memory.tolerated_failure_percentage,
                "redrive_count": memory.redrive_count,
                "redrive_date": memory.redrive_date,
                "start_date": record.start_date,
            }
        )

    def outcomes_changed(self, memory: MapRunMemory, outcomes: list[ChildOutcome], durable: bool) -> None:
        if outcomes:
            children = [_outcome_record(outcome) for outcome in outcomes]
            _record({"t": "children", "arn": memory.map_run_arn, "children": children}, durable=durable)

    def child_started(self, memory: MapRunMemory, outcome: ChildOutcome, events: EventManager) -> None:
        vars(events)["docagent_child"] = (memory.map_run_arn, outcome.index)


def _add_child_event(self: EventManager, *args: Any, **kwargs: Any) -> int:
    event_id = _add_event(self, *args, **kwargs)
    child = vars(self).get("docagent_child")
    if child is not None and _Recording.journal is not None:
        for event in reversed(self._history_event_list):
            if event["id"] == event_id:
                details = event.get("stateEnteredEventDetails")
                if details:
                    entered = {"name": details["name"], "input": details.get("input")}
                    record = {"t": "child_state", "arn": child[0], "index": child[1], **entered}
                    _record(record, durable=False)
                break
    return event_id


# -- restoring ------------------------------------------------------------------------------------------


@dataclass
class _ExecutionRecord:
    start: dict[str, Any]
    events: list[dict[str, Any]] = field(default_factory=list)
    tokens: list[tuple[int, str]] = field(default_factory=list)  # (events recorded before it, token)


@dataclass
class _MapRunRecord:
    start: dict[str, Any]
    children: dict[int, dict[str, Any]] = field(default_factory=dict)
    entered: dict[int, tuple[str, Any]] = field(default_factory=dict)


@dataclass
class Restored:
    executions: int = 0
    running: int = 0
    skipped: int = 0
    to_resume: list[tuple[Execution, tuple[str, Any] | None, list[str]]] = field(default_factory=list)


class EngineRecords:
    """The engine's records read back from the journal, in order."""

    def __init__(self) -> None:
        self.executions: dict[str, _ExecutionRecord] = {}
        self.map_runs: dict[str, _MapRunRecord] = {}

    def add(self, record: dict[str, Any]) -> bool:
        kind = record.get("t")
        if kind == "exec":
            self.executions[record["arn"]] = _ExecutionRecord(record)
        elif kind == "event" and record["arn"] in self.executions:
            self.executions[record["arn"]].events.append(record["event"])
        elif kind == "token" and record["arn"] in self.executions:
            execution = self.executions[record["arn"]]
            execution.tokens.append((len(execution.events), record["token"]))
        elif kind == "map_run":
            previous = self.map_runs.get(record["arn"])
            self.map_runs[record["arn"]] = _MapRunRecord(
                record, previous.children if previous else {}, previous.entered if previous else {}
            )
        elif kind == "children" and record["arn"] in self.map_runs:
            for child in record["children"]:
                self.map_runs[record["arn"]].children[int(child["index"])] = child
        elif kind == "child_state" and record["arn"] in self.map_runs:
            entered = (record["name"], json.loads(record.get("input") or "null"))
            self.map_runs[record["arn"]].entered[int(record["index"])] = entered
        else:
            return False
        return True

    def restore(self, account_id: str, region: str) -> Restored:
        backend = stepfunctions_parser_backends[account_id][region]
        machines = {machine.arn: machine for machine in backend.state_machines}
        restored = Restored()
        for arn, record in self.executions.items():
            machine = machines.get(record.start["state_machine_arn"])
            if machine is None:
                restored.skipped += 1
                continue
            execution = _rebuild(record, machine, account_id, region)
            machine.executions.append(execution)  # type: ignore[arg-type]  # moto's two Execution types
            redrives = [event for event in record.events if event["type"] == "ExecutionRedriven"]
            last_redrive = _parse_time(redrives[-1]["timestamp"]) if redrives else None
            redrive.restore_redrives(arn, len(redrives), last_redrive)
            running = execution.exec_status == ExecutionStatus.RUNNING
            for map_run in self.map_runs.values():
                if map_run.start["key"][0] == arn:
                    _restore_map_run(map_run, execution, running, record.events)
            restored.executions += 1
            if running:
                restored.running += 1
                start = _resume_point(record, execution)
                since = _entered_event_count(record, start)
                tokens = [token for count, token in record.tokens if count >= since]
                restored.to_resume.append((execution, start, tokens))
        return restored


def _parse_time(value: Any) -> datetime.datetime:
    if isinstance(value, datetime.datetime):
        return value
    return datetime.datetime.fromisoformat(str(value).replace("Z", "+00:00"))


def _rebuild(record: _ExecutionRecord, machine: Any, account_id: str, region: str) -> Execution:
    start = record.start
    clone = copy.deepcopy(machine, {id(machine.executions): [], id(machine.backend): machine.backend})
    clone.definition = start["definition"]
    execution = Execution(
        name=start["name"],
        sm_type=clone.sm_type,
        role_arn=start["role_arn"],
        exec_arn=start["arn"],
        account_id=account_id,
        region_name=region,
        state_machine=clone,
        start_date=_parse_time(start["start_date"]),
        cloud_watch_logging_session=None,
        activity_store={},
        input_data=start["input"],
    )
    worker = execution._get_start_execution_worker()
    env = worker._get_evaluation_environment()
    events = EventManager()
    events._history_event_list = list(record.events)  # type: ignore[misc,arg-type]
    events._event_id_gen._next_id = max((event["id"] for event in record.events), default=0) + 1
    vars(events)[_TAG] = start["arn"]
    env.event_manager = events
    worker.env = env
    execution.exec_worker = worker
    execution.exec_status = ExecutionStatus.RUNNING
    for event in record.events:
        kind = event["type"]
        if kind in ("ExecutionStarted", "ExecutionRedriven"):
            execution.exec_status, execution.stop_date = ExecutionStatus.RUNNING, None
            execution.error = execution.cause = execution.output = None
        elif kind in _CLOSING:
            execution.exec_status = _CLOSING[kind]
            execution.stop_date = _parse_time(event["timestamp"])
            details: dict[str, Any] = (
                next((value for key, value in event.items() if key.endswith("EventDetails")), {}) or {}
            )
            if kind == "ExecutionSucceeded":
                execution.output = json.loads(details.get("output") or "null")
            execution.error, execution.cause = details.get("error"), details.get("cause")
    return execution


def _top_level(execution: Execution) -> dict[str, Any]:
    states: dict[str, Any] = json.loads(execution.state_machine.definition)["States"]
    return states


def _resume_point(record: _ExecutionRecord, execution: Execution) -> tuple[str, Any] | None:
    """The state to continue from, with its input; None: from the start, with the execution's input."""
    states = _top_level(execution)
    for event in reversed(record.events):
        entered, exited = event.get("stateEnteredEventDetails"), event.get("stateExitedEventDetails")
        if entered and entered["name"] in states:
            return entered["name"], json.loads(entered.get("input") or "null")
        if exited and exited["name"] in states:
            state = states[exited["name"]]
            if state.get("Next") and state.get("Type") != "Choice":
                return state["Next"], json.loads(exited.get("output") or "null")
            continue  # rerun it: find where it was entered
    return None


def _entered_event_count(record: _ExecutionRecord, start: tuple[str, Any] | None) -> int:
    """How many events preceded the (last) entry into the resumed state (tokens handed out since are
    handed out again)."""
    if start is None:
        return 0
    for position in range(len(record.events) - 1, -1, -1):
        details = record.events[position].get("stateEnteredEventDetails")
        if details and details["name"] == start[0]:
            return position
    return len(record.events)


def _restore_map_run(
    record: _MapRunRecord, execution: Execution, running: bool, events: list[dict[str, Any]]
) -> None:
    start = record.start
    items = start["items"]
    memory = MapRunMemory(start["arn"], start["state_machine_arn"], items)
    memory.redrive_count = int(start["redrive_count"])
    memory.redrive_date = _parse_time(start["redrive_date"]) if start.get("redrive_date") else None
    memory.tolerated_failure_count = int(start["tolerated_failure_count"])
    memory.tolerated_failure_percentage = float(start["tolerated_failure_percentage"])
    for index, child in record.children.items():
        saved_point = child.get("resume_from")
        outcome = ChildOutcome(
            index,
            child["status"],
            child["input"],
            output=child["output"],
            error=child["error"],
            cause=child["cause"],
            started=_parse_time(child["started"]),
            stopped=_parse_time(child["stopped"]) if child.get("stopped") else None,
            redrive_count=int(child["redrive_count"]),
            resume_from=(saved_point[0], saved_point[1]) if saved_point else None,
        )
        if outcome.status == "PENDING" and index in record.entered:  # cut off while running
            outcome.resume_from = record.entered[index]
        memory.outcomes[index] = outcome
    memory.resuming = running
    distributed_map.register((start["key"][0], start["key"][1]), memory)
    assert execution.exec_worker is not None and execution.exec_worker.env is not None
    env = execution.exec_worker.env
    map_run = MapRunRecord(
        state_machine_arn=start["state_machine_arn"],
        execution_arn=execution.exec_arn,
        max_concurrency=int(start["max_concurrency"]),
        tolerated_failure_count=memory.tolerated_failure_count,
        tolerated_failure_percentage=memory.tolerated_failure_percentage,
        label=None,
    )
    map_run.map_run_arn = start["arn"]  # type: ignore[misc]
    map_run.map_state_machine_arn = start["map_state_machine_arn"]  # type: ignore[misc]
    map_run.start_date = _parse_time(start["start_date"])
    statuses = [outcome.status for outcome in memory.outcomes.values()]
    for counter in (map_run.item_counter, map_run.execution_counter):
        counter.total.count(len(items))
        for status, name in (("SUCCEEDED", "succeeded"), ("FAILED", "failed"), ("TIMED_OUT", "timed_out")):
            getattr(counter, name).count(statuses.count(status))
        counter.results_written.count(statuses.count("SUCCEEDED"))
        counter.pending.count(len(items) - sum(s in ("SUCCEEDED", "FAILED", "TIMED_OUT") for s in statuses))
    if not running:
        ok = statuses.count("SUCCEEDED") == len(items)
        map_run.set_stop(MapRunStatus.SUCCEEDED if ok else MapRunStatus.FAILED)
        closed = [event for event in events if event["type"] in _MAP_RUN_CLOSING]
        map_run.stop_date = _parse_time(closed[-1]["timestamp"]) if closed else execution.stop_date
    env.map_run_record_pool_manager.add(map_run)


def resume(restored: Restored) -> None:
    """Continue every execution that was RUNNING (call once the endpoint serves: tasks call it)."""
    for execution, resume_point, tokens in restored.to_resume:
        previous = execution.exec_worker
        assert previous is not None
        start = resume_point
        if start is None:
            definition = json.loads(execution.state_machine.definition)
            start = (definition["StartAt"], execution.input_data)
        assert previous.env is not None
        # The tokens that were waiting are valid at once: SendTaskSuccess with one, even before the
        # resumed state runs again, is kept for it (the state then gets the token it had).
        pool = previous.env.callback_pool_manager
        waiting = list(dict.fromkeys(tokens))
        for token in waiting:
            pool.add(token)
        vars(pool)[_REUSE] = set(waiting)
        with _Recording.lock:
            _Recording.callback_pools[execution.exec_arn] = pool
            _Recording.reuse_tokens[execution.exec_arn] = deque(waiting)
        count = redrive._Redrives.of(execution.exec_arn)["count"]
        worker = redrive.RedriveWorker(execution, previous, count, start=start, announce=False)
        worker.env = previous.env  # until the new run has its own (API calls read it meanwhile)
        execution.exec_worker = worker
        worker.start()  # type: ignore[no-untyped-call]


# -- installing ---------------------------------------------------------------------------------------


_original_start = Execution.start
_original_add_event = EventManager.add_event
_original_update_task_token = ContextObject.update_task_token
_original_add_callback = CallbackPoolManager.add
_installed_environment = ExecutionWorker._get_evaluation_environment


class _Installed:
    done = False


def install(journal: Journal | None) -> None:
    """Record the engine's state in ``journal`` (None: record nothing, as without persistence)."""
    global _installed_environment  # noqa: PLW0603 - the environment factory in place before this one
    _Recording.journal = journal
    with _Recording.lock:
        _Recording.callback_pools.clear()
        _Recording.reuse_tokens.clear()
    distributed_map.observe(_MapRunRecorder() if journal is not None else None)
    if _Installed.done:
        return
    _installed_environment = ExecutionWorker._get_evaluation_environment  # redrive.py's, installed first
    Execution.start = _start  # type: ignore[method-assign]
    ExecutionWorker._get_evaluation_environment = _environment  # type: ignore[method-assign]
    EventManager.add_event = _add_child_event  # type: ignore[method-assign]
    ContextObject.update_task_token = _update_task_token  # type: ignore[method-assign]
    CallbackPoolManager.add = _add_callback  # type: ignore[method-assign]
    _Installed.done = True
