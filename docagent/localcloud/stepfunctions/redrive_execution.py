"""RedriveExecution on the local endpoint (docs/semantics.md R1-R7), built around moto's interpreter.

A redrive restarts a closed execution from the state that failed, with that state's original input,
under the same ARN and definition. States that succeeded are not run again; the history is kept and
gains an ``ExecutionRedriven`` event; retry counters start from zero; ``$$.Execution.RedriveCount``
tells the workflow which attempt it is in. A Distributed Map that failed is redriven through its Map
Run (see distributed_map.py): only children that did not succeed run again.
"""

from __future__ import annotations

import datetime
import json
import threading
from typing import Any, cast

from moto.core.exceptions import JsonRESTError
from moto.core.responses import ActionResult
from moto.stepfunctions.parser.api import ExecutionStatus, HistoryEventType
from moto.stepfunctions.parser.asl.eval.environment import Environment
from moto.stepfunctions.parser.asl.parse.asl_parser import AmazonStateLanguageParser
from moto.stepfunctions.parser.backend.execution import Execution
from moto.stepfunctions.parser.backend.execution_worker import ExecutionWorker
from moto.stepfunctions.responses import StepFunctionResponse

from docagent.localcloud.stepfunctions import stop_execution as stop
from docagent.localcloud.stepfunctions.distributed_map import event_details
from docagent.localcloud.stepfunctions.executions import AwsError

REDRIVE_WINDOW = datetime.timedelta(days=14)  # docs/semantics.md R3
HISTORY_LIMIT = 24_999
CLIENT_TOKEN_WINDOW = datetime.timedelta(minutes=15)


class ExecutionNotRedrivableError(JsonRESTError):
    code = 400

    def __init__(self, message: str) -> None:
        super().__init__("ExecutionNotRedrivable", message)


class _Redrives:
    """Per execution ARN: count, date and recent client tokens (the Execution object has no room)."""

    lock = threading.Lock()
    state: dict[str, dict[str, Any]] = {}

    @classmethod
    def of(cls, execution_arn: str) -> dict[str, Any]:
        return cls.state.setdefault(execution_arn, {"count": 0, "date": None, "tokens": {}})


def redrive_record(execution_arn: str) -> dict[str, Any]:
    """The execution's redrive count, date and recent client tokens."""
    with _Redrives.lock:
        return dict(_Redrives.of(execution_arn))


def reset() -> None:
    """Forget every redrive (a new local cloud starts empty)."""
    with _Redrives.lock:
        _Redrives.state.clear()


def _history(execution: Execution) -> list[dict[str, Any]]:
    worker = execution.exec_worker
    if worker is None or worker.env is None:
        return []
    return cast(list[dict[str, Any]], worker.env.event_manager.get_event_history())


def redrive_status(execution: Execution) -> tuple[str, str | None]:
    """REDRIVABLE or NOT_REDRIVABLE with the reason, as DescribeExecution reports it."""
    status = execution.exec_status
    if execution.sm_type == "EXPRESS":
        return "NOT_REDRIVABLE", "Express executions cannot be redriven"
    if status in (ExecutionStatus.RUNNING, ExecutionStatus.SUCCEEDED, None):
        name = status.value if status else "PENDING"
        return "NOT_REDRIVABLE", f"Execution is {name} and cannot be redriven"
    stopped = execution.stop_date
    if stopped and datetime.datetime.now(tz=datetime.UTC) - stopped > REDRIVE_WINDOW:
        return "NOT_REDRIVABLE", "Execution was closed more than 14 days ago"
    if len(_history(execution)) >= HISTORY_LIMIT:
        return "NOT_REDRIVABLE", f"Execution history has reached {HISTORY_LIMIT} events"
    if _failed_state(execution) is None:
        return "NOT_REDRIVABLE", "No failed state to redrive from"
    return "REDRIVABLE", None


def _failed_state(execution: Execution) -> tuple[str, Any] | None:
    """(name, input) of the top-level state that was running when the execution closed."""
    top_level = set(json.loads(execution.state_machine.definition)["States"])
    for event in reversed(_history(execution)):
        details = event.get("stateEnteredEventDetails")
        if event["type"].endswith("StateEntered") and details and details["name"] in top_level:
            return details["name"], json.loads(details.get("input") or "null")
    return None


class RedriveWorker(ExecutionWorker):
    """Runs the definition again from the failed state, appending to the execution's history."""

    def __init__(
        self,
        execution: Execution,
        previous: ExecutionWorker,
        redrive_count: int,
        *,
        start: tuple[str, Any] | None = None,
        announce: bool = True,
    ) -> None:
        """``start`` and ``announce=False``: continue a RUNNING execution after a restart (resume.py)."""
        super().__init__(
            evaluation_details=previous._evaluation_details,
            exec_comm=previous._execution_communication,
            cloud_watch_logging_session=previous._cloud_watch_logging_session,
            activity_store=previous._activity_store,
        )
        failed = start or _failed_state(execution)
        assert failed is not None
        self._state_name, self._state_input = failed
        self._previous_env = previous.env
        self._redrive_count = redrive_count
        self._announce = announce

    def _execution_logic(self) -> None:
        definition = json.loads(self._evaluation_details.state_machine_details.definition)
        definition["StartAt"] = self._state_name
        program = AmazonStateLanguageParser.parse(json.dumps(definition))[0]
        env: Environment = self._get_evaluation_environment()
        assert self._previous_env is not None
        env.event_manager = self._previous_env.event_manager  # one history across attempts
        stop.reopen(env.event_manager)  # closed at ExecutionAborted if the execution was stopped
        env.map_run_record_pool_manager = self._previous_env.map_run_record_pool_manager
        # Workflow variables assigned before the failure are still set when the failed state runs again.
        vars(env)["variable_store"] = self._previous_env.variable_store
        _execution_context(env)["RedriveCount"] = self._redrive_count
        env.states.reset(input_value=self._state_input)
        self.env = env
        if self._announce:
            env.event_manager.add_event(
                context=env.event_history_context,
                event_type=HistoryEventType.ExecutionRedriven,
                event_details=event_details(
                    executionRedrivenEventDetails={"redriveCount": self._redrive_count}
                ),
                update_source_event_id=False,
            )
        program.eval(env)
        self._execution_communication.terminated()


def redrive(execution: Execution, client_token: str | None) -> datetime.datetime:
    with _Redrives.lock:
        record = _Redrives.of(execution.exec_arn)
        now = datetime.datetime.now(tz=datetime.UTC)
        if client_token and client_token in record["tokens"]:
            issued = record["tokens"][client_token]
            # docs/semantics.md R7: a repeated call is the same redrive
            if now - issued < CLIENT_TOKEN_WINDOW:
                return record["date"]  # type: ignore[no-any-return]
        status, reason = redrive_status(execution)
        if status != "REDRIVABLE":
            raise ExecutionNotRedrivableError(f"Execution {execution.exec_arn} cannot be redriven: {reason}")
        previous = execution.exec_worker
        assert previous is not None
        record["count"] += 1
        record["date"] = now
        if client_token:
            record["tokens"][client_token] = now
        worker = RedriveWorker(execution, previous, record["count"])
        execution.exec_worker = worker
        execution.exec_status = ExecutionStatus.RUNNING
        execution.stop_date = None
        execution.error = None
        execution.cause = None
        execution.output = None
        worker.start()  # type: ignore[no-untyped-call]
        return now


# -- the API: RedriveExecution, and the redrive fields of DescribeExecution ------------------------


def _find_execution(response: StepFunctionResponse, execution_arn: str) -> Execution:
    return response.stepfunction_backend.describe_execution(execution_arn)  # type: ignore[return-value]


def restore_redrives(execution_arn: str, count: int, date: datetime.datetime | None) -> None:
    """Redrives of an execution read back from disk (resume.py)."""
    with _Redrives.lock:
        record = _Redrives.of(execution_arn)
        record["count"], record["date"] = count, date


def _redrive_execution(self: StepFunctionResponse) -> ActionResult:
    execution = _find_execution(self, self._get_param("executionArn"))
    return ActionResult({"redriveDate": redrive(execution, self._get_param("clientToken"))})


def _describe_execution(self: StepFunctionResponse) -> Any:
    result = _original_describe_execution(self)
    execution = _find_execution(self, self._get_param("executionArn"))
    record = _Redrives.of(execution.exec_arn)
    status, reason = redrive_status(execution)
    extra: dict[str, Any] = {"redriveCount": record["count"], "redriveStatus": status}
    if reason:
        extra["redriveStatusReason"] = reason
    if record["date"]:
        extra["redriveDate"] = record["date"]
    if "input" in result.result:  # type: ignore[operator]
        extra["inputDetails"] = {
            "included": True
        }  # as recorded on AWS (test_sfn_api test_describe_execution)
    result.result.update(extra)  # type: ignore[attr-defined]
    return result


def _list_executions(self: StepFunctionResponse) -> ActionResult:
    """A state machine's executions by ``redriveFilter`` (API reference "ListExecutions", looked up
    2026-12-04: "Sets a filter to list executions based on whether or not they have been redriven"): REDRIVEN
    keeps the executions redriven at least once, NOT_REDRIVEN the others. A page is filtered after it is
    cut, so a filtered page may hold fewer than maxResults (its nextToken still leads on). A Map Run's
    children are listed (and filtered) by map_children.py."""
    redrive_filter = self._get_param("redriveFilter")
    if redrive_filter not in (None, "REDRIVEN", "NOT_REDRIVEN"):
        raise AwsError(
            "ValidationException", f"Value '{redrive_filter}' at 'redriveFilter' failed to satisfy constraint"
        )
    listed = _original_list_executions(self)
    answer = cast(dict[str, Any], listed.result)
    if redrive_filter is not None:
        answer["executions"] = [
            item
            for item in answer["executions"]
            if (redrive_record(item["executionArn"])["count"] > 0) == (redrive_filter == "REDRIVEN")
        ]
    for item in answer["executions"]:  # each with its redriveCount, as recorded on AWS (test_sfn_api)
        item["redriveCount"] = redrive_record(item["executionArn"])["count"]
    return listed


def _execution_context(env: Environment) -> dict[str, Any]:
    """$$.Execution, which gains RedriveCount (not in moto's ExecutionData type)."""
    return cast(dict[str, Any], env.states.context_object.context_object_data["Execution"])


def _context_with_redrive_count(self: ExecutionWorker) -> Environment:
    env = _original_environment(self)
    _execution_context(env).setdefault("RedriveCount", 0)
    return env


_original_describe_execution = StepFunctionResponse.describe_execution
_original_list_executions = StepFunctionResponse.list_executions
_original_environment = ExecutionWorker._get_evaluation_environment


def install() -> None:
    StepFunctionResponse.redrive_execution = _redrive_execution  # type: ignore[attr-defined]
    StepFunctionResponse.describe_execution = _describe_execution  # type: ignore[method-assign]
    StepFunctionResponse.list_executions = _list_executions  # type: ignore[method-assign]
    ExecutionWorker._get_evaluation_environment = _context_with_redrive_count  # type: ignore[method-assign]
