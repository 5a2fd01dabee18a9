"""Distributed Map as AWS runs it, on moto's interpreter (shared spec D2, D5, M1-M6).

moto runs a Distributed Map's children inline, lets a failed child leave the Map SUCCEEDED, ignores
the tolerated-failure settings and writes only an empty ResultWriter manifest. This module replaces
those seams: every child's outcome is remembered per Map Run, failures count against the tolerated
threshold (the Map Run stops handing out items once it is exceeded), result files are written in the
documented shape (also when the run fails), and a redriven Map Run keeps its ARN, reuses its items
and re-runs only the children that did not succeed.
"""

from __future__ import annotations

import copy
import datetime
import json
import threading
import uuid
from dataclasses import dataclass, field
from typing import Any, cast

from moto.stepfunctions.parser.api import HistoryEventType, MapRunFailedEventDetails
from moto.stepfunctions.parser.asl.component.common.error_name.failure_event import (
    FailureEvent,
    FailureEventException,
)
from moto.stepfunctions.parser.asl.component.common.error_name.states_error_name import StatesErrorName
from moto.stepfunctions.parser.asl.component.common.error_name.states_error_name_type import (
    StatesErrorNameType,
)
from moto.stepfunctions.parser.asl.component.common.flow.start_at import StartAt
from moto.stepfunctions.parser.asl.component.common.timeouts.timeout import EvalTimeoutError
from moto.stepfunctions.parser.asl.component.state.exec.state_map.iteration.distributed_iteration_component import (  # noqa: E501
    DistributedIterationComponent,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_map.iteration.itemprocessor.distributed_item_processor_worker import (  # noqa: E501
    DistributedItemProcessorWorker,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_map.iteration.itemprocessor.map_run_record import (  # noqa: E501
    MapRunRecord,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_map.iteration.job import Job, JobPool
from moto.stepfunctions.parser.asl.component.state.exec.state_map.max_concurrency import (
    DEFAULT_MAX_CONCURRENCY_VALUE,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_map.result_writer.resource_eval.resource_eval_s3 import (  # noqa: E501
    ResourceEvalS3,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_map.state_map import StateMap
from moto.stepfunctions.parser.asl.eval.environment import Environment
from moto.stepfunctions.parser.asl.eval.event.event_detail import EventDetails
from moto.stepfunctions.parser.asl.eval.event.event_manager import EventManager
from moto.stepfunctions.parser.asl.eval.program_state import ProgramError, ProgramStopped
from moto.stepfunctions.parser.asl.eval.states import ItemData, MapData
from moto.stepfunctions.parser.asl.parse.asl_parser import AmazonStateLanguageParser
from moto.stepfunctions.parser.asl.utils.json_path import extract_json

from docagent.localcloud import jsonata

MAP_RUN_REDRIVE_LIMIT = 1000  # shared spec M3
_BATCH_DEFAULT_BYTES = 256 * 1024


# -- what moto's grammar cannot read: EXPRESS children and ItemBatcher (D1, D4) -----------------------


@dataclass(frozen=True)
class MapExtras:
    """A Distributed Map's settings that are read here instead of by moto's parser."""

    express: bool = False
    batcher: dict[str, Any] | None = None
    language: str = "JSONPath"


class AtLeastOnce:
    """EXPRESS children are at-least-once on AWS; this switch delivers chosen items twice, at once."""

    deliver_twice: set[int] = set()


def deliver_twice(indexes: set[int]) -> None:
    """Deliver these item indexes twice to EXPRESS children (empty: exactly once)."""
    AtLeastOnce.deliver_twice = set(indexes)


def _strip_extras(states: dict[str, Any], language: str = "JSONPath") -> dict[str, MapExtras]:
    """Remove what moto cannot parse from every (nested) Map state; return it by state name path."""
    extras: dict[str, MapExtras] = {}
    for name, state in states.items():
        processor = state.get("ItemProcessor") if state.get("Type") == "Map" else None
        if processor is None:
            continue
        state_language = str(state.get("QueryLanguage", language))
        config = processor.get("ProcessorConfig", {})
        express = config.get("ExecutionType") == "EXPRESS"
        if express:
            config["ExecutionType"] = "STANDARD"
        batcher = state.pop("ItemBatcher", None)
        if express or batcher:
            extras[name] = MapExtras(express=express, batcher=batcher, language=state_language)
        inner_language = str(processor.get("QueryLanguage", state_language))
        for inner, value in _strip_extras(processor.get("States", {}), inner_language).items():
            extras[f"{name}/{inner}"] = value
    return extras


def _attach_extras(states: Any, extras: dict[str, MapExtras], path: str = "") -> None:
    for name, state in states.states.items():
        if isinstance(state, StateMap):
            key = f"{path}{name}"
            if key in extras:
                vars(state.iteration_component)["docagent_extras"] = extras[key]
            inner = getattr(state.iteration_component, "_states", None)
            if inner is not None:
                _attach_extras(inner, extras, f"{key}/")


def _parse(definition: str) -> Any:
    try:
        document = json.loads(definition)
    except ValueError:
        return _original_parse(definition)
    extras = (
        _strip_extras(document.get("States", {}), str(document.get("QueryLanguage", "JSONPath")))
        if isinstance(document, dict)
        else {}
    )
    if not extras:
        return _original_parse(definition)
    program, context = _original_parse(json.dumps(document))
    states = getattr(program, "states", None)
    if states is not None:
        _attach_extras(states, extras)
    return program, context


def _batches(items: list[Any], batcher: dict[str, Any]) -> list[list[Any]]:
    """Group items by MaxItemsPerBatch and MaxInputBytesPerBatch (D4)."""
    max_items = int(batcher.get("MaxItemsPerBatch") or len(items) or 1)
    max_bytes = int(batcher.get("MaxInputBytesPerBatch") or _BATCH_DEFAULT_BYTES)
    batches: list[list[Any]] = [[]]
    size = 0
    for item in items:
        item_size = len(json.dumps(item))
        if batches[-1] and (len(batches[-1]) >= max_items or size + item_size > max_bytes):
            batches.append([])
            size = 0
        batches[-1].append(item)
        size += item_size
    return [batch for batch in batches if batch]


NOT_SUCCEEDED = ("FAILED", "TIMED_OUT", "ABORTED")


def item_weights(items: list[Any], extras: MapExtras) -> list[int]:
    """Items per child: with ItemBatcher a child's batch counts its items in the Map Run's itemCounts and in
    the tolerated-failure threshold (AWS counts items; executionCounts counts children)."""
    return [len(unit) for unit in items] if extras.batcher else [1] * len(items)


def event_details(**details: Any) -> EventDetails:
    """moto types EventDetails as a closed TypedDict that lacks the redrive events; build it loosely."""
    return cast(EventDetails, details)


def _now() -> datetime.datetime:
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
    started: datetime.datetime = field(default_factory=_now)
    stopped: datetime.datetime | None = None
    redrive_count: int = 0
    # A STANDARD child that did not succeed is redriven from this state, with this input (M2).
    resume_from: tuple[str, Any] | None = None


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
        # Stable across redrives: a redriven child keeps its ARN (shared spec M2).
        name = uuid.uuid5(uuid.NAMESPACE_URL, f"{self.map_run_arn}#{index}")
        return f"{self.state_machine_arn.replace(':stateMachine:', ':execution:')}:{name}"


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


def _execution_arn(env: Environment) -> str:
    return str(env.states.context_object.context_object_data["Execution"]["Id"])


# -- the Map Run: reuse on redrive, threshold, outcomes ------------------------------------------------


def _eval_body(self: DistributedIterationComponent, env: Environment) -> None:
    eval_input = env.stack[-1]
    record: MapRunRecord = eval_input.map_run_record
    key = (_execution_arn(env), eval_input.state_name)
    memory = _Registry.by_state.get(key)
    if memory is not None and memory.resuming:  # the local cloud restarted: the same run continues
        pool = env.map_run_record_pool_manager._pool
        pool.pop(record.map_run_arn, None)
        record.map_run_arn = memory.map_run_arn  # type: ignore[misc]
        pool[record.map_run_arn] = record
    elif memory is not None:  # the Map state runs again: this is a redrive of its Map Run
        if memory.redrive_count >= MAP_RUN_REDRIVE_LIMIT:
            raise _failure(
                env, StatesErrorNameType.StatesRuntime, "The Map Run redrive limit of 1000 is reached."
            )
        pool = env.map_run_record_pool_manager._pool
        pool.pop(record.map_run_arn, None)
        record.map_run_arn = memory.map_run_arn  # type: ignore[misc]  # the redriven run keeps its ARN (M6)
        pool[record.map_run_arn] = record
        memory.redrive_count += 1
        memory.redrive_date = _now()
        env.event_manager.add_event(
            context=env.event_history_context,
            event_type=HistoryEventType.MapRunRedriven,
            event_details=event_details(
                mapRunRedrivenEventDetails={
                    "mapRunArn": memory.map_run_arn,
                    "redriveCount": memory.redrive_count,
                }
            ),
        )
    _original_eval_body(self, env)


def _map_run(self: DistributedIterationComponent, env: Environment, eval_input: Any) -> None:
    read_items: list[Any] = env.stack.pop()
    record: MapRunRecord = eval_input.map_run_record
    key = (_execution_arn(env), eval_input.state_name)
    extras: MapExtras = vars(self).get("docagent_extras") or MapExtras()
    with _Registry.lock:
        memory = _Registry.by_state.get(key)
        if memory is None:
            units = _batches(read_items, extras.batcher) if extras.batcher else read_items
            memory = MapRunMemory(record.map_run_arn, record.map_state_machine_arn, units)
            _Registry.by_state[key] = _Registry.by_arn[memory.map_run_arn] = memory
    memory.tolerated_failure_count = int(eval_input.tolerated_failure_count or 0)
    memory.tolerated_failure_percentage = float(eval_input.tolerated_failure_percentage or 0)
    items = memory.items  # a redrive reuses the original items (M5); with ItemBatcher, the batches
    resuming, memory.resuming = memory.resuming, False
    _Observers.current.map_run_started(key, memory, record)

    succeeded = {i for i, outcome in memory.outcomes.items() if outcome.status == "SUCCEEDED"}
    ended = {i for i, outcome in memory.outcomes.items() if outcome.status in ("FAILED", "TIMED_OUT")}
    kept = succeeded | ended if resuming else succeeded
    to_run = [index for index in range(len(items)) if index not in kept]
    weights = item_weights(items, extras)
    for counter, weight in ((record.item_counter, weights), (record.execution_counter, [1] * len(items))):
        counter.total.count(sum(weight))
        counter.succeeded.count(sum(weight[i] for i in succeeded))
        counter.results_written.count(sum(weight[i] for i in succeeded))
        counter.pending.count(sum(weight[i] for i in to_run))
        if resuming:
            counter.failed.count(sum(weight[i] for i in ended))
    for index in to_run:  # not started yet: pending until a worker takes it
        previous = memory.outcomes.get(index)
        memory.outcomes[index] = ChildOutcome(
            index,
            "PENDING",
            previous.input if previous else items[index],
            redrive_count=(previous.redrive_count + (not resuming)) if previous else 0,
            # EXPRESS children start again from the first state (M2).
            resume_from=previous.resume_from if previous and not extras.express else None,
        )
    _Observers.current.outcomes_changed(memory, [memory.outcomes[index] for index in to_run], durable=False)

    deliveries = to_run
    if extras.express:  # at-least-once: chosen items are delivered twice, concurrently
        deliveries = to_run + [index for index in to_run if index in AtLeastOnce.deliver_twice]
    job_pool = JobPool(job_program=self._get_iteration_program(), job_inputs=[items[i] for i in deliveries])
    for job in job_pool._open_jobs:  # keep each item's own index ($$.Map.Item.Index)
        vars(job)["job_index"] = deliveries[job.job_index]
    vars(job_pool)["docagent_memory"] = memory
    vars(job_pool)["docagent_extras"] = extras
    max_concurrency = record.max_concurrency
    workers = len(deliveries) if max_concurrency == DEFAULT_MAX_CONCURRENCY_VALUE else max_concurrency
    for _ in range(min(workers, len(deliveries))):
        self._launch_worker(env=env, eval_input=eval_input, job_pool=job_pool)
    job_pool.await_jobs()

    worker_exception = job_pool.get_worker_exception()
    if worker_exception is not None:
        raise worker_exception
    env.stack.append([memory.outcomes[index].output for index in range(len(items))])


def _failure(env: Environment, error: StatesErrorNameType, cause: str) -> FailureEventException:
    error_name = StatesErrorName(typ=error)
    return FailureEventException(
        FailureEvent(
            env=env,
            error_name=error_name,
            event_type=HistoryEventType.MapRunFailed,
            event_details=event_details(
                mapRunFailedEventDetails=MapRunFailedEventDetails(error=error_name.error_name, cause=cause)
            ),
        )
    )


def _eval_job(self: DistributedItemProcessorWorker, env: Environment, job: Job) -> None:
    """One child execution: run it, record its outcome, and stop the Map Run past the threshold."""
    record, memory = self._map_run_record, vars(self._job_pool)["docagent_memory"]
    extras: MapExtras = vars(self._job_pool)["docagent_extras"]
    weights = item_weights(memory.items, extras)
    counted = ((record.item_counter, weights[job.job_index]), (record.execution_counter, 1))
    for counter, weight in counted:
        counter.pending.offset(-weight)
        counter.running.count(weight)
    outcome = memory.outcomes[job.job_index]
    outcome.status, outcome.started = "RUNNING", _now()
    env.event_manager = EventManager()  # the child's own history, to know where it stopped
    _Observers.current.child_started(memory, outcome, env.event_manager)
    program = job.job_program
    try:
        program = _prepare_child(self, env, job, outcome, extras)
        program.eval(env)
        end_state = env.program_state()
        if isinstance(end_state, ProgramError):
            outcome.status = "FAILED"
            outcome.error = (end_state.error or {}).get("error")
            outcome.cause = (end_state.error or {}).get("cause")
        elif isinstance(end_state, ProgramStopped):
            outcome.status = "ABORTED"
        elif _left_last_state(env, program):
            outcome.status, outcome.output = "SUCCEEDED", env.states.get_input()
        else:  # ended from outside (the Map Run stopped) while a state ran: its input is no output
            outcome.status = "ABORTED"
    except EvalTimeoutError:
        outcome.status, outcome.error = "TIMED_OUT", "States.Timeout"
    except FailureEventException as failure:
        error_cause = failure.extract_error_cause_pair() or (None, None)
        outcome.status, (outcome.error, outcome.cause) = "FAILED", error_cause
    except Exception as error:  # an interpreter fault fails this child, as a service fault would
        outcome.status, outcome.error, outcome.cause = "FAILED", "States.Runtime", str(error)
    finally:
        outcome.stopped = _now()
        status_counter = {"SUCCEEDED": "succeeded", "FAILED": "failed", "TIMED_OUT": "timed_out"}
        for counter, weight in counted:
            counter.running.offset(-weight)
            getattr(counter, status_counter.get(outcome.status, "aborted")).count(weight)
            if outcome.status == "SUCCEEDED":
                counter.results_written.count(weight)
    job.job_output = outcome.output
    outcome.resume_from = _last_entered_state(env, program) if outcome.status in NOT_SUCCEEDED else None
    _Observers.current.outcomes_changed(memory, [outcome], durable=True)
    if outcome.status in NOT_SUCCEEDED:
        with memory.lock:
            if memory.threshold_exceeded(weights):
                job.job_output = _failure(
                    env,
                    StatesErrorNameType.StatesExceedToleratedFailureThreshold,
                    "The specified tolerated failure threshold was exceeded",
                )


def _prepare_child(
    self: DistributedItemProcessorWorker, env: Environment, job: Job, outcome: ChildOutcome, extras: MapExtras
) -> Any:
    """Set the child's input; return the program to run (resumed at its failed state on a redrive)."""
    if outcome.resume_from is not None:
        state_name, state_input = outcome.resume_from
        program = copy.copy(job.job_program)
        program.start_at = StartAt(state_name)  # type: ignore[misc]
        env.states.context_object.context_object_data["Map"] = MapData(
            Item=ItemData(Index=job.job_index, Value=job.job_input)
        )
        env.states.reset(state_input)
        return program
    if extras.batcher:
        map_input = self._env.stack[-1]  # the Map state's input, where the ItemSelector reads it too
        batch: dict[str, Any] = {"Items": [_select(self, env, job.job_index, item) for item in job.job_input]}
        if "BatchInput" in extras.batcher:
            batch["BatchInput"] = batch_input(extras.batcher["BatchInput"], extras.language, map_input, env)
        env.states.reset(batch)
    else:
        env.states.reset(_select(self, env, job.job_index, job.job_input))
    outcome.input = env.states.get_input()
    return job.job_program


def batch_input(template: Any, language: str, map_input: Any, env: Environment) -> Any:
    """ItemBatcher.BatchInput evaluated against the Map state's input, as AWS does ("ItemBatcher":
    JSONPath fields ending in ``.$`` (``$$.`` reads the context object), or JSONata ``{% %}``)."""
    context = env.states.context_object.context_object_data
    if isinstance(template, dict):
        evaluated: dict[str, Any] = {}
        for key, value in template.items():
            if language == "JSONPath" and key.endswith(".$") and isinstance(value, str):
                source = context if value.startswith("$$") else map_input
                evaluated[key[:-2]] = extract_json(value[1:] if value.startswith("$$") else value, source)
            else:
                evaluated[key] = batch_input(value, language, map_input, env)
        return evaluated
    if isinstance(template, list):
        return [batch_input(value, language, map_input, env) for value in template]
    if (
        language == "JSONata"
        and isinstance(template, str)
        and template.startswith("{%")
        and template.endswith("%}")
    ):
        bindings = {"states": {"input": map_input, "context": context}}
        value = jsonata.evaluate(template[2:-2].strip(), bindings)
        return None if value is jsonata.UNDEFINED else value
    return template


def _last_entered_state(env: Environment, program: Any) -> tuple[str, Any] | None:
    names = set(program.states.states)
    for event in reversed(env.event_manager.get_event_history()):
        details = cast(dict[str, Any], event).get("stateEnteredEventDetails")
        if details and details["name"] in names:
            return details["name"], json.loads(details.get("input") or "null")
    return None


def _left_last_state(env: Environment, program: Any) -> bool:
    """Whether the child's last state exited (it reached its end), rather than being cut off after it entered:
    moto ends every frame of an ended Map, and a cut-off child ends with its state's input, not its output."""
    names = set(program.states.states)
    for event in reversed(env.event_manager.get_event_history()):
        details = cast(dict[str, Any], event)
        if (entered := details.get("stateEnteredEventDetails")) and entered["name"] in names:
            return False
        if (exited := details.get("stateExitedEventDetails")) and exited["name"] in names:
            return True
    return False


def _select(self: DistributedItemProcessorWorker, env: Environment, index: int, item: Any) -> Any:
    """An item's child input: the ItemSelector (or Parameters) evaluated with $$.Map.Item set."""
    env.states.context_object.context_object_data["Map"] = MapData(Item=ItemData(Index=index, Value=item))
    env.states.reset(item)
    env.stack.append(env.states.get_input())
    self._eval_input(env_frame=env)
    return env.states.get_input()


# -- ResultWriter: the documented result files --------------------------------------------------------


def _iso(moment: datetime.datetime | None) -> str | None:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z") if moment else None


def result_entry(memory: MapRunMemory, outcome: ChildOutcome) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "ExecutionArn": memory.child_execution_arn(outcome.index),
        "Name": memory.child_execution_arn(outcome.index).rsplit(":", 1)[-1],
        "StateMachineArn": memory.state_machine_arn,
        "Status": outcome.status,
        "Input": json.dumps(outcome.input),
        "InputDetails": {"Included": True},
        "RedriveCount": outcome.redrive_count,
    }
    if outcome.status == "PENDING":
        return entry
    entry["StartDate"] = _iso(outcome.started)
    entry["StopDate"] = _iso(outcome.stopped)
    if outcome.status == "SUCCEEDED":
        entry["Output"] = json.dumps(outcome.output)
        entry["OutputDetails"] = {"Included": True}
        entry["RedriveStatus"] = "NOT_REDRIVABLE"
        entry["RedriveStatusReason"] = "Execution is SUCCEEDED and cannot be redriven"
    else:
        entry["Error"] = outcome.error
        entry["Cause"] = outcome.cause
        entry["RedriveStatus"] = "REDRIVABLE"
    return entry


def write_result_files(memory: MapRunMemory, s3_client: Any, bucket: str, prefix: str) -> str:
    """manifest.json plus SUCCEEDED_0 / FAILED_0 / PENDING_0 (shared spec D5); returns the manifest key."""
    folder = f"{prefix}{memory.map_run_arn.rsplit(':', 1)[-1]}/"
    groups: dict[str, list[dict[str, Any]]] = {"SUCCEEDED": [], "FAILED": [], "PENDING": []}
    for index in sorted(memory.outcomes):
        outcome = memory.outcomes[index]
        group = (
            "SUCCEEDED"
            if outcome.status == "SUCCEEDED"
            else "PENDING"
            if outcome.status in ("PENDING", "RUNNING")
            else "FAILED"
        )
        groups[group].append(result_entry(memory, outcome))
    files: dict[str, list[dict[str, Any]]] = {"FAILED": [], "PENDING": [], "SUCCEEDED": []}
    for group, entries in groups.items():
        if entries:
            body = json.dumps(entries).encode()
            key = f"{folder}{group}_0.json"
            s3_client.put_object(Bucket=bucket, Key=key, Body=body)
            files[group].append({"Key": key, "Size": len(body)})
    manifest_key = f"{folder}manifest.json"
    manifest = {"DestinationBucket": bucket, "MapRunArn": memory.map_run_arn, "ResultFiles": files}
    s3_client.put_object(Bucket=bucket, Key=manifest_key, Body=json.dumps(manifest, indent=2).encode())
    return manifest_key


def _handle_put_object(env: Environment, resource_runtime_part: Any, state_credentials: Any) -> None:
    parameters = env.stack.pop()
    env.stack.pop()
    record = env.map_run_record_pool_manager.get_all().pop()
    memory = _Registry.by_arn[record.map_run_arn]
    prefix = parameters.get("Prefix", "")
    if prefix and not prefix.endswith("/"):
        prefix += "/"
    s3_client = ResourceEvalS3._get_s3_client(resource_runtime_part, state_credentials)
    key = write_result_files(memory, s3_client, parameters["Bucket"], prefix)
    env.stack.append(
        {"MapRunArn": memory.map_run_arn, "ResultWriterDetails": {"Bucket": parameters["Bucket"], "Key": key}}
    )


def _state_map_eval_execution(self: StateMap, env: Environment) -> None:
    """A failed Map Run still writes its result files (FAILED and PENDING children included)."""
    try:
        _original_state_map_eval_execution(self, env)
    except FailureEventException:
        if self.result_writer is not None and env.map_run_record_pool_manager.get_all():
            env.stack.append(None)  # the slot ResultWriter's handler discards
            self.result_writer.eval(env)
            env.stack.pop()
        raise


def _describe_map_run(self: MapRunRecord) -> Any:
    described = _original_describe_map_run(self)
    memory = _Registry.by_arn.get(self.map_run_arn)
    described["redriveCount"] = memory.redrive_count if memory else 0
    if memory and memory.redrive_date:
        described["redriveDate"] = memory.redrive_date
    return described


_original_parse = AmazonStateLanguageParser.parse
_original_eval_body = DistributedIterationComponent._eval_body
_original_state_map_eval_execution = StateMap._eval_execution
_original_describe_map_run = MapRunRecord.describe


def install() -> None:
    AmazonStateLanguageParser.parse = staticmethod(_parse)  # type: ignore[method-assign]
    DistributedIterationComponent._eval_body = _eval_body  # type: ignore[method-assign]
    DistributedIterationComponent._map_run = _map_run  # type: ignore[method-assign]
    DistributedItemProcessorWorker._eval_job = _eval_job  # type: ignore[method-assign]
    ResourceEvalS3._handle_put_object = staticmethod(_handle_put_object)  # type: ignore[method-assign]
    StateMap._eval_execution = _state_map_eval_execution  # type: ignore[method-assign]
    MapRunRecord.describe = _describe_map_run  # type: ignore[method-assign]
