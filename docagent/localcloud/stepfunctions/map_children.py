"""A Distributed Map's child workflow executions as executions of their own, as AWS documents them.

AWS (looked up 2026-12-01): API reference "ListExecutions": with ``mapRunArn`` it lists "all of the child
workflow executions started by a Map Run"; "You can specify either a mapRunArn or a stateMachineArn, but
not both"; each ``ExecutionListItem`` then carries ``mapRunArn`` (and ``itemCount``, ``redriveCount``,
``redriveDate``). A child's ARN is its Map Run's state machine, ``arn:...:execution:STATE_MACHINE/LABEL:ID``
(developer guide "Viewing a Distributed Map Run execution": the child workflows' state machine is
``arn:...:stateMachine:STATE_MACHINE/MapRunLabel or UUID``). DescribeExecution and GetExecutionHistory
answer for a child like for any execution, with ``mapRunArn``; "To redrive a workflow that includes a
Distributed Map state whose Map Run failed, you must redrive the parent workflow" (RedriveExecution), so a
child that did not succeed is ``REDRIVABLE_BY_MAP_RUN`` (DescribeExecution ``redriveStatus``) and
RedriveExecution on it is refused with ExecutionNotRedrivable (the wording is ours: unconfirmed).

The children run inside the parent's interpreter (distributed_map.py); their outcomes are the Map Run's
memory (map_run_memory.py). Here: their histories (the running attempt's events, ended attempts kept
compressed) and the API answers built from that memory.
"""

from __future__ import annotations

import json
import re
import zlib
from typing import Any

from moto.core.responses import ActionResult
from moto.core.utils import iso_8601_datetime_with_milliseconds as iso
from moto.stepfunctions.responses import StepFunctionResponse

from docagent.localcloud.stepfunctions.executions import AwsError
from docagent.localcloud.stepfunctions.map_run_memory import (
    ChildOutcome,
    MapRunMemory,
    memories_of,
    memory_for_map_run,
    now,
)
from docagent.localcloud.stepfunctions.paging import page, page_size

_CHILD_ARN = re.compile(
    r"^(?P<prefix>arn:[^:]+:states:[^:]+:\d{12}):execution:(?P<machine>[^:/]+/[^:]+):(?P<name>[^:]+)$"
)
_TERMINAL = {
    "SUCCEEDED": "ExecutionSucceeded",
    "FAILED": "ExecutionFailed",
    "TIMED_OUT": "ExecutionTimedOut",
    "ABORTED": "ExecutionAborted",
}
_STATUSES = ("RUNNING", "SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED", "PENDING_REDRIVE")


# -- the child's history ---------------------------------------------------------------------------------


def attempt_started(outcome: ChildOutcome, events: list[dict[str, Any]]) -> None:
    """A child (or its redrive) starts: ``events`` is its interpreter history, filled as it runs."""
    outcome.running_events = events


def attempt_ended(outcome: ChildOutcome) -> None:
    """The child's attempt ended with ``outcome``'s status: keep its events and its end, compressed."""
    events = list(outcome.running_events or [])
    ended = _TERMINAL.get(outcome.status)
    if ended is not None:
        events.append(_end_event(outcome, ended))
    outcome.ended_attempts.append(zlib.compress(json.dumps(events, default=str).encode()))
    outcome.running_events = None


def _end_event(outcome: ChildOutcome, kind: str) -> dict[str, Any]:
    stamp = iso(outcome.stopped or now())
    key = kind[0].lower() + kind[1:] + "EventDetails"
    if kind == "ExecutionSucceeded":
        details: dict[str, Any] = {
            "output": json.dumps(outcome.output),
            "outputDetails": {"truncated": False},
        }
    else:
        details = {
            name: value for name, value in (("error", outcome.error), ("cause", outcome.cause)) if value
        }
    return {"timestamp": stamp, "type": kind, "id": 0, "previousEventId": 0, key: details}


def child_history(memory: MapRunMemory, outcome: ChildOutcome) -> list[dict[str, Any]]:
    """The child's history as GetExecutionHistory gives it: started, each attempt (a redrive announced by
    ExecutionRedriven), and its end; event ids numbered from 1 across attempts."""
    started = {
        "timestamp": iso(outcome.started),
        "type": "ExecutionStarted",
        "id": 0,
        "previousEventId": 0,
        "executionStartedEventDetails": {
            "input": json.dumps(outcome.input),
            "inputDetails": {"truncated": False},
            "roleArn": "",
        },
    }
    attempts: list[list[dict[str, Any]]] = [
        json.loads(zlib.decompress(part)) for part in outcome.ended_attempts
    ]
    if outcome.running_events is not None:
        attempts.append(list(outcome.running_events))
    history = [started]
    for number, attempt in enumerate(attempts):
        offset = len(history)
        if number:
            stamp = attempt[0]["timestamp"] if attempt else iso(now())
            details = {"redriveCount": number}
            history.append(
                {"timestamp": stamp, "type": "ExecutionRedriven", "id": 0, "previousEventId": 0,
                 "executionRedrivenEventDetails": details}
            )  # fmt: skip
            offset += 1
        for event in attempt:
            moved = dict(event)
            moved["previousEventId"] = (
                (event["previousEventId"] + offset) if event.get("previousEventId") else 0
            )
            history.append(moved)
    for position, event in enumerate(history, start=1):
        event["id"] = position
        if not event["previousEventId"]:
            event["previousEventId"] = position - 1
    return history


# -- finding a child -----------------------------------------------------------------------------------------


def find_child(execution_arn: str) -> tuple[MapRunMemory, ChildOutcome] | None:
    """The Map Run and outcome of the child execution ``execution_arn`` (None: no such child)."""
    match = _CHILD_ARN.match(execution_arn or "")
    if match is None:
        return None
    machine = f"{match['prefix']}:stateMachine:{match['machine']}"
    for memory in memories_of(machine):
        index = memory.child_index(match["name"])
        outcome = memory.outcomes.get(index) if index is not None else None
        if outcome is not None and _started(outcome):
            return memory, outcome
    return None


def _started(outcome: ChildOutcome) -> bool:
    return outcome.status != "PENDING" or bool(outcome.ended_attempts)


def _status(outcome: ChildOutcome) -> str:
    # A child waiting for its Map Run's redrive shows the status of its last attempt.
    return outcome.status if outcome.status != "PENDING" else "PENDING_REDRIVE"


# -- the API -----------------------------------------------------------------------------------------------


def _list_item(memory: MapRunMemory, outcome: ChildOutcome) -> dict[str, Any]:
    item: dict[str, Any] = {
        "executionArn": memory.child_execution_arn(outcome.index),
        "stateMachineArn": memory.state_machine_arn,
        "name": memory.child_name(outcome.index),
        "status": _status(outcome),
        "startDate": outcome.started,
        "mapRunArn": memory.map_run_arn,
        "itemCount": len(outcome.input["Items"]) if _batched(outcome) else 1,
        "redriveCount": outcome.redrive_count,
    }
    if outcome.stopped is not None and outcome.status != "RUNNING":
        item["stopDate"] = outcome.stopped
    return item


def _batched(outcome: ChildOutcome) -> bool:
    return isinstance(outcome.input, dict) and isinstance(outcome.input.get("Items"), list)


def list_children(
    map_run_arn: str, status: str | None, redrive_filter: str | None, max_results: Any, token: str | None
) -> dict[str, Any]:
    memory = memory_for_map_run(map_run_arn)
    if memory is None:
        raise AwsError("ResourceNotFound", f"Map Run Does Not Exist: '{map_run_arn}'")
    if status is not None and status not in _STATUSES:
        raise AwsError(
            "ValidationException", f"Value '{status}' at 'statusFilter' failed to satisfy constraint"
        )
    if redrive_filter not in (None, "REDRIVEN", "NOT_REDRIVEN"):
        raise AwsError(
            "ValidationException", f"Value '{redrive_filter}' at 'redriveFilter' failed to satisfy constraint"
        )
    children = [outcome for outcome in list(memory.outcomes.values()) if _started(outcome)]
    if status is not None:
        children = [outcome for outcome in children if _status(outcome) == status]
    if redrive_filter is not None:
        children = [
            outcome for outcome in children if (outcome.redrive_count > 0) == (redrive_filter == "REDRIVEN")
        ]
    children.sort(key=lambda outcome: (outcome.started, outcome.index), reverse=True)
    scope = {"map_run": map_run_arn, "status": status, "redrive": redrive_filter}
    chosen, next_token = page(children, page_size(max_results), token, scope)
    answer: dict[str, Any] = {"executions": [_list_item(memory, outcome) for outcome in chosen]}
    if next_token is not None:
        answer["nextToken"] = next_token
    return answer


def describe_child(memory: MapRunMemory, outcome: ChildOutcome) -> dict[str, Any]:
    item = _list_item(memory, outcome)
    described: dict[str, Any] = {
        **{
            key: item[key]
            for key in ("executionArn", "stateMachineArn", "name", "status", "startDate", "mapRunArn")
        },
        "input": json.dumps(outcome.input),
        "inputDetails": {"included": True},
        "redriveCount": outcome.redrive_count,
    }
    if "stopDate" in item:
        described["stopDate"] = item["stopDate"]
    if outcome.status == "SUCCEEDED":
        described["output"] = json.dumps(outcome.output)
        described["outputDetails"] = {"included": True}
        described["redriveStatus"] = "NOT_REDRIVABLE"
        described["redriveStatusReason"] = "Execution is SUCCEEDED and cannot be redriven"
    elif outcome.status == "RUNNING":
        described["redriveStatus"] = "NOT_REDRIVABLE"
        described["redriveStatusReason"] = "Execution is RUNNING and cannot be redriven"
    else:
        described["redriveStatus"] = "REDRIVABLE_BY_MAP_RUN"
    for key, value in (("error", outcome.error), ("cause", outcome.cause)):
        if value is not None and outcome.status != "SUCCEEDED":
            described[key] = value
    return described


def _list_executions(self: StepFunctionResponse) -> Any:
    map_run_arn = self._get_param("mapRunArn")
    if map_run_arn is None:
        return _original("list_executions")(self)  # a state machine's: redrive_execution.py filters them
    if self._get_param("stateMachineArn") is not None:
        raise AwsError(
            "ValidationException", "You can specify either a mapRunArn or a stateMachineArn, but not both"
        )
    return ActionResult(
        list_children(
            map_run_arn,
            self._get_param("statusFilter"),
            self._get_param("redriveFilter"),
            self._get_param("maxResults"),
            self._get_param("nextToken"),
        )
    )


def _describe_execution(self: StepFunctionResponse) -> Any:
    child = find_child(self._get_param("executionArn"))
    if child is None:
        return _original("describe_execution")(self)
    return ActionResult(describe_child(*child))


_NOT_FOR_EXECUTION = ("creationDate", "status", "type")


def _for_execution(self: StepFunctionResponse, machine: Any) -> dict[str, Any]:
    """DescribeStateMachine's answer in DescribeStateMachineForExecution's shape: ``updateDate``, and no
    ``creationDate``/``status``/``type`` (API reference "DescribeStateMachineForExecution"; as recorded on AWS
    in LocalStack's AWS-validated snapshot test_sfn_api ``test_describe_state_machine_for_execution``, read
    2026-12-04)."""
    described: dict[str, Any] = self._describe_state_machine(machine.arn).result  # type: ignore[assignment]
    kept = {key: value for key, value in described.items() if key not in _NOT_FOR_EXECUTION}
    return {**kept, "updateDate": machine.update_date}


def _describe_state_machine_for_execution(self: StepFunctionResponse) -> Any:
    child = find_child(self._get_param("executionArn"))
    if child is None:
        backend = self.stepfunction_backend
        return ActionResult(
            _for_execution(
                self, backend.describe_state_machine_for_execution(self._get_param("executionArn"))
            )
        )
    memory = child[0]
    parent_machine, label = memory.state_machine_arn.rsplit("/", 1)
    parent = self.stepfunction_backend.describe_state_machine(parent_machine)
    return ActionResult(
        {
            **_for_execution(self, parent),
            "stateMachineArn": memory.state_machine_arn,
            "mapRunArn": memory.map_run_arn,
            "label": label,
        }
    )


def _redrive_execution(self: StepFunctionResponse) -> Any:
    arn = self._get_param("executionArn")
    if find_child(arn) is not None:
        raise AwsError(
            "ExecutionNotRedrivable",
            f"Execution {arn} is a child workflow execution of a Map Run: redrive its parent execution",
        )
    return _original("redrive_execution")(self)


def history_of(execution_arn: str) -> list[dict[str, Any]] | None:
    """A child execution's history (None: ``execution_arn`` is no Map Run child)."""
    child = find_child(execution_arn)
    return child_history(*child) if child is not None else None


class _Originals:
    """The handlers in place before ours (redrive.py's DescribeExecution and RedriveExecution among them)."""

    handlers: dict[str, Any] = {}


def _original(name: str) -> Any:
    return _Originals.handlers[name]


_REPLACED = {
    "list_executions": _list_executions,
    "describe_execution": _describe_execution,
    "describe_state_machine_for_execution": _describe_state_machine_for_execution,
    "redrive_execution": _redrive_execution,
}


def install() -> None:
    """After redrive.py, whose DescribeExecution and RedriveExecution serve every other execution."""
    for name, handler in _REPLACED.items():
        _Originals.handlers[name] = getattr(StepFunctionResponse, name)
        setattr(StepFunctionResponse, name, handler)
