"""Distributed Map as AWS runs it, on moto's interpreter (docs/semantics.md D2, D5, M1-M6).

moto runs a Distributed Map's children inline, lets a failed child leave the Map SUCCEEDED, ignores
the tolerated-failure settings and writes only an empty ResultWriter manifest. This module replaces
those seams: every child's outcome is remembered per Map Run, failures count against the tolerated
threshold (the Map Run stops handing out items once it is exceeded), result files are written in the
documented shape (also when the run fails), and a redriven Map Run keeps its ARN, reuses its items
and re-runs only the children that did not succeed.

Here: the Map Run (reuse on redrive, threshold, outcomes) and each child execution. Beside it:
map_run_memory.py (what a Map Run remembers), map_extras.py (EXPRESS children, ItemBatcher) and
result_writer.py (the result files).
"""

from __future__ import annotations

import copy
import json
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
from moto.stepfunctions.parser.asl.component.state.exec.state_map import state_map
from moto.stepfunctions.parser.asl.component.state.exec.state_map.iteration.distributed_iteration_component import (  # noqa: E501
    DistributedIterationComponent,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_map.iteration.itemprocessor.distributed_item_processor import (  # noqa: E501
    DistributedItemProcessor,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_map.iteration.itemprocessor.distributed_item_processor_worker import (  # noqa: E501
    DistributedItemProcessorWorker,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_map.iteration.itemprocessor.map_run_record import (  # noqa: E501
    MapRunRecord,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_map.iteration.iterator.iterator_decl import (
    IteratorDecl,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_map.iteration.job import Job, JobPool
from moto.stepfunctions.parser.asl.component.state.exec.state_map.max_concurrency import (
    DEFAULT_MAX_CONCURRENCY_VALUE,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_map.mode import Mode
from moto.stepfunctions.parser.asl.eval.environment import Environment
from moto.stepfunctions.parser.asl.eval.event.event_manager import EventManager
from moto.stepfunctions.parser.asl.eval.program_state import ProgramError, ProgramStopped
from moto.stepfunctions.parser.asl.eval.states import ItemData, MapData

from docagent.localcloud.iam import enforcement as iam_enforcement
from docagent.localcloud.iam.actions import Check
from docagent.localcloud.iam.role_tokens import WORKFLOW_SESSION
from docagent.localcloud.stepfunctions import map_children, map_extras, result_writer
from docagent.localcloud.stepfunctions.map_extras import (
    AtLeastOnce,
    MapExtras,
    batch_input,
    batch_limits,
    batches,
    deliver_twice,
    item_weight,
    item_weights,
)
from docagent.localcloud.stepfunctions.map_run_memory import (
    NOT_SUCCEEDED,
    ChildOutcome,
    MapRunMemory,
    Observer,
    current_observer,
    event_details,
    execution_arn,
    forget_state,
    memory_for_map_run,
    memory_for_state,
    now,
    observe,
    register,
    remember,
    reset,
)

# What other modules import from here (the Map Run's memory and settings live beside it).
__all__ = [
    "MAP_RUN_REDRIVE_LIMIT",
    "ChildOutcome",
    "MapRunMemory",
    "Observer",
    "deliver_twice",
    "event_details",
    "install",
    "memory_for_map_run",
    "observe",
    "register",
    "reset",
]

MAP_RUN_REDRIVE_LIMIT = 1000  # docs/semantics.md M3

# -- the Map Run: reuse on redrive, threshold, outcomes ------------------------------------------------


def _eval_body(self: DistributedIterationComponent, env: Environment) -> None:
    eval_input = env.stack[-1]
    record: MapRunRecord = eval_input.map_run_record
    key = (execution_arn(env), eval_input.state_name)
    memory = memory_for_state(key)
    if memory is not None and memory.resuming:  # the local cloud restarted: the same run continues
        pool = env.map_run_record_pool_manager._pool
        pool.pop(record.map_run_arn, None)
        record.map_run_arn = memory.map_run_arn  # type: ignore[misc]
        pool[record.map_run_arn] = record
    elif memory is not None and memory.attempt == _attempt(env):
        # Entered again in the same attempt (a loop): a new Map Run, with MapRunStarted (AWS "Distributed Map
        # state": each time the state runs it starts a Map Run); not a redrive of the previous one.
        forget_state(key)
    elif memory is not None:  # the Map state runs again in a redriven execution: a redrive of its Map Run
        if memory.redrive_count >= MAP_RUN_REDRIVE_LIMIT:
            raise _failure(
                env, StatesErrorNameType.StatesRuntime, "The Map Run redrive limit of 1000 is reached."
            )
        pool = env.map_run_record_pool_manager._pool
        pool.pop(record.map_run_arn, None)
        record.map_run_arn = memory.map_run_arn  # type: ignore[misc]  # the redriven run keeps its ARN (M6)
        pool[record.map_run_arn] = record
        memory.redrive_count += 1
        memory.redrive_date = now()
        memory.attempt = _attempt(env)
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
    key = (execution_arn(env), eval_input.state_name)
    extras: MapExtras = vars(self).get("docagent_extras") or MapExtras()

    def new_map_run() -> MapRunMemory:
        units = read_items
        if extras.batcher:
            limits = batch_limits(extras.batcher, extras.language, env.states.get_input(), env)
            units = batches(read_items, limits)
        return MapRunMemory(record.map_run_arn, record.map_state_machine_arn, units, attempt=_attempt(env))

    memory = remember(key, new_map_run)
    memory.tolerated_failure_count = int(eval_input.tolerated_failure_count or 0)
    memory.tolerated_failure_percentage = float(eval_input.tolerated_failure_percentage or 0)
    items = memory.items  # a redrive reuses the original items (M5); with ItemBatcher, the batches
    resuming, memory.resuming = memory.resuming, False
    current_observer().map_run_started(key, memory, record)
    _authorize_children(env)

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
            ended_attempts=previous.ended_attempts
            if previous
            else [],  # its history goes on (map_children.py)
        )
    current_observer().outcomes_changed(memory, [memory.outcomes[index] for index in to_run], durable=False)

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


def _attempt(env: Environment) -> int:
    """The execution's redrive count (redrive.py sets $$.Execution.RedriveCount)."""
    execution = cast(dict[str, Any], env.states.context_object.context_object_data["Execution"])
    return int(execution.get("RedriveCount") or 0)


def _authorize_children(env: Environment) -> None:
    """A Distributed Map starts its children as executions of its state machine: its role needs
    states:StartExecution on it (AWS "IAM policies for using Distributed Map states", looked up 2026-12-07),
    checked by the local IAM when it is enforced (docagent/localcloud/iam)."""
    authorizer = iam_enforcement.active()
    if authorizer is None:
        return
    machine = str(env.states.context_object.context_object_data["StateMachine"]["Id"])
    check = Check("states:StartExecution", machine)
    denial = authorizer.authorize(env.aws_execution_details.role_arn, WORKFLOW_SESSION, check)
    if denial is not None:
        raise _failure(env, StatesErrorNameType.StatesRuntime, denial)


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


def _eval_pool(self: DistributedItemProcessorWorker, job: Job | None, worker_frame: Environment) -> None:
    """A worker runs children until the pool is empty: moto's own version recurses once per child, so a
    worker with more children than Python's recursion limit (2,000 per worker at 20,000 documents and
    MaxConcurrency 10) failed them with RecursionError. The same steps, in a loop."""
    while job is not None:
        job_frame = worker_frame.open_inner_frame()
        self._eval_job(env=job_frame, job=job)
        worker_frame.delete_frame(job_frame)
        # Evaluation terminates here due to an exception in the job, or the worker was stopped.
        next_job = None
        stopped = self.stopped() or not worker_frame.is_running()  # type: ignore[no-untyped-call]
        if not (isinstance(job.job_output, Exception) or stopped):  # the execution stopped: start no more
            next_job = self._job_pool.next_job()
        if next_job is None:
            # The frame is closed before the job, so the owner environment is updated before the Map
            # state, which awaits jobs (not workers), continues.
            self._env.delete_frame(worker_frame)
            self._job_pool.close_job(job)
            return
        self._job_pool.close_job(job)
        job = next_job
    self._env.delete_frame(worker_frame)


def _eval_job(self: DistributedItemProcessorWorker, env: Environment, job: Job) -> None:
    """One child execution: run it, record its outcome, and stop the Map Run past the threshold."""
    record, memory = self._map_run_record, vars(self._job_pool)["docagent_memory"]
    extras: MapExtras = vars(self._job_pool)["docagent_extras"]
    counted = (
        (record.item_counter, item_weight(memory.items, job.job_index, extras)),
        (record.execution_counter, 1),
    )
    for counter, weight in counted:
        counter.pending.offset(-weight)
        counter.running.count(weight)
    outcome = memory.outcomes[job.job_index]
    outcome.status, outcome.started = "RUNNING", now()
    env.event_manager = EventManager()  # the child's own history, to know where it stopped
    map_children.attempt_started(outcome, cast(list[dict[str, Any]], env.event_manager._history_event_list))
    current_observer().child_started(memory, outcome, env.event_manager)
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
        outcome.stopped = now()
        map_children.attempt_ended(outcome)
        status_counter = {"SUCCEEDED": "succeeded", "FAILED": "failed", "TIMED_OUT": "timed_out"}
        for counter, weight in counted:
            counter.running.offset(-weight)
            getattr(counter, status_counter.get(outcome.status, "aborted")).count(weight)
            if outcome.status == "SUCCEEDED":
                counter.results_written.count(weight)
    job.job_output = outcome.output
    outcome.resume_from = _last_entered_state(env, program) if outcome.status in NOT_SUCCEEDED else None
    current_observer().outcomes_changed(memory, [outcome], durable=True)
    if outcome.status in NOT_SUCCEEDED and not isinstance(env.program_state(), ProgramStopped):
        with memory.lock:  # (children of a stopped execution are aborted with it, not counted as failures)
            if memory.threshold_exceeded(item_weights(memory.items, extras)):
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
        batch: dict[str, Any] = {}  # BatchInput first, as AWS writes a batch (LocalStack's AWS-validated
        if "BatchInput" in extras.batcher:  # snapshot test_map_item_batching_base_json_max_per_batch_jsonata)
            batch["BatchInput"] = batch_input(extras.batcher["BatchInput"], extras.language, map_input, env)
        batch["Items"] = [_select(self, env, job.job_index, item) for item in job.job_input]
        env.states.reset(batch)
    else:
        env.states.reset(_select(self, env, job.job_index, job.job_input))
    outcome.input = env.states.get_input()
    return job.job_program


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


def _describe_map_run(self: MapRunRecord) -> Any:
    described = _original_describe_map_run(self)
    memory = memory_for_map_run(self.map_run_arn)
    described["redriveCount"] = memory.redrive_count if memory else 0
    if memory and memory.redrive_date:
        described["redriveDate"] = memory.redrive_date
    return described


_original_eval_body = DistributedIterationComponent._eval_body
_original_describe_map_run = MapRunRecord.describe


def _from_iterator_decl(iterator_decl: IteratorDecl) -> Any:
    """A legacy ``Iterator`` with a DISTRIBUTED ProcessorConfig runs as an ItemProcessor does, its
    ``Parameters`` choosing each child's input (developer guide "Map state": ItemProcessor replaces Iterator,
    ItemSelector replaces Parameters). moto's own distributed Iterator gave every child null."""
    if iterator_decl.processor_config.mode == Mode.Distributed:
        return DistributedItemProcessor(
            query_language=iterator_decl.query_language, start_at=iterator_decl.start_at,
            states=iterator_decl.states, comment=iterator_decl.comment,  # type: ignore[arg-type]
            processor_config=iterator_decl.processor_config,
        )  # fmt: skip
    return _original_from_iterator_decl(iterator_decl)


_original_from_iterator_decl = vars(state_map)["from_iterator_decl"]


def install() -> None:
    vars(state_map)["from_iterator_decl"] = _from_iterator_decl
    map_extras.install()
    result_writer.install()
    DistributedIterationComponent._eval_body = _eval_body  # type: ignore[method-assign]
    DistributedIterationComponent._map_run = _map_run  # type: ignore[method-assign]
    DistributedItemProcessorWorker._eval_job = _eval_job  # type: ignore[method-assign]
    DistributedItemProcessorWorker._eval_pool = _eval_pool  # type: ignore[method-assign]
    MapRunRecord.describe = _describe_map_run  # type: ignore[method-assign]
