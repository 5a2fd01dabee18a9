"""Step Functions Local's mocked service integrations, so its users' test suites run unchanged.

As of 2026-11, AWS "Using mocked service integrations for testing in Step Functions Local" and
"Configuration options": the mock file comes from ``SFN_MOCK_CONFIG`` (else ``MockConfigFile.json``);
``StateMachines.NAME.TestCases.CASE`` maps a state to a response name; ``MockedResponses.NAME`` maps
invocation numbers ("0") or inclusive ranges ("1-2") to exactly one of ``Return`` or ``Throw``
(``Error``, ``Cause``); a test case is chosen by starting ``stateMachineArn#CASE``; states not listed
run for real; an invocation without an entry fails the execution. There is one invocation counter per
state per execution, advanced on every invocation, retries and Map iterations included (LocalStack
fixed its counter to match). moto has the plumbing (``Environment.mock_test_case``) but its loader
returns None and it counts by retry number; both belong fixed in moto's ``mocking/mock_config.py``.

Here the file is read at each start of a test case, so an edited file applies to the next execution.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any, cast

from moto.stepfunctions.parser.api import HistoryEventType, TaskFailedEventDetails
from moto.stepfunctions.parser.asl.component.common.error_name.failure_event import (
    FailureEvent,
    FailureEventException,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_task import mock_eval_utils
from moto.stepfunctions.parser.asl.eval.environment import Environment
from moto.stepfunctions.parser.asl.eval.event.event_detail import EventDetails
from moto.stepfunctions.parser.backend.execution import Execution
from moto.stepfunctions.parser.backend.execution_worker import ExecutionWorker
from moto.stepfunctions.parser.mocking.mock_config import (
    MockedResponse,
    MockedResponseReturn,
    MockedResponseThrow,
)
from pydantic import BaseModel, ConfigDict, Field, RootModel, ValidationError, model_validator

from docagent.localcloud.stepfunctions import executions
from docagent.localcloud.stepfunctions.executions import AwsError
from docagent.localcloud.stepfunctions.runtime_errors import ReportedErrorName

CONFIG_VARIABLE = "SFN_MOCK_CONFIG"
DEFAULT_FILE = "MockConfigFile.json"


class ThrowSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    Error: str
    Cause: str = ""


class MockedAnswer(BaseModel):
    """One entry of a mocked response: exactly one of Return or Throw."""

    model_config = ConfigDict(extra="forbid")
    Return: Any = None
    Throw: ThrowSpec | None = None
    returns: bool = Field(default=False, exclude=True)

    @model_validator(mode="before")
    @classmethod
    def _exactly_one(cls, data: Any) -> Any:
        if not isinstance(data, dict) or ("Return" in data) == ("Throw" in data):
            raise ValueError("each mocked response entry holds exactly one of Return or Throw")
        return {**data, "returns": "Return" in data}


class StateMachineMocks(BaseModel):
    model_config = ConfigDict(extra="allow")
    TestCases: dict[str, dict[str, str]]


class MockConfig(BaseModel):
    model_config = ConfigDict(extra="allow")
    StateMachines: dict[str, StateMachineMocks] = {}
    MockedResponses: dict[str, RootModel[dict[str, MockedAnswer]]] = {}


def config_path(environ: dict[str, str] | None = None) -> Path:
    environ = dict(os.environ) if environ is None else environ
    return Path(environ.get(CONFIG_VARIABLE) or DEFAULT_FILE)


def load(path: Path) -> MockConfig:
    try:
        return MockConfig.model_validate(json.loads(path.read_text()))
    except OSError as error:
        raise AwsError("InvalidArn", f"the mock configuration file {path} cannot be read: {error}") from None
    except (ValueError, ValidationError) as error:
        raise AwsError("InvalidArn", f"the mock configuration file {path} is not valid: {error}") from None


def _invocations(key: str) -> range:
    first, _, last = key.strip().partition("-")
    start, end = int(first), int(last or first)
    if start < 0 or end < start:
        raise ValueError(f"invalid invocation range {key!r}")
    return range(start, end + 1)


class _StateMocks:
    """What moto's ``is_mocked_mode`` looks up: one entry per mocked state."""

    def __init__(self, answers: dict[int, MockedResponse]) -> None:
        self.answers = answers


class CaseMocks:
    """The mocks of one execution, with one invocation counter per state (shared by Map iterations)."""

    def __init__(self, name: str, answers: dict[str, dict[int, MockedResponse]]) -> None:
        self.test_case_name = name
        self.state_mocked_responses = {state: _StateMocks(by_number) for state, by_number in answers.items()}
        self._counters: dict[str, int] = {}
        self._lock = threading.Lock()

    def next_response(self, state: str) -> MockedResponse:
        with self._lock:
            number = self._counters.get(state, 0)
            self._counters[state] = number + 1
        answer = self.state_mocked_responses[state].answers.get(number)
        if answer is None:
            raise RuntimeError(
                f"No mocked response for state '{state}' at invocation {number} ({self.test_case_name})"
            )
        return answer

    @classmethod
    def from_config(cls, config: MockConfig, state_machine: str, case: str) -> CaseMocks:
        machine = config.StateMachines.get(state_machine)
        if machine is None or case not in machine.TestCases:
            raise AwsError(
                "InvalidArn",
                f"no test case '{case}' for state machine '{state_machine}' in the mock configuration",
            )
        answers: dict[str, dict[int, MockedResponse]] = {}
        for state, response_name in machine.TestCases[case].items():
            response = config.MockedResponses.get(response_name)
            if response is None:
                raise AwsError("InvalidArn", f"test case '{case}' names no mocked response '{response_name}'")
            answers[state] = {}
            for key, entry in response.root.items():
                for number in _invocations(key):
                    answers[state][number] = to_moto(
                        entry.Return, entry.Throw if not entry.returns else None, number
                    )
        return cls(case, answers)


def to_moto(returned: Any, thrown: ThrowSpec | None, number: int = 0) -> MockedResponse:
    if thrown is not None:
        return MockedResponseThrow(number, number, error=thrown.Error, cause=thrown.Cause)
    return MockedResponseReturn(number, number, payload=returned)


# -- the interpreter seam -------------------------------------------------------------------------------

_pending: dict[str, CaseMocks] = {}
_pending_lock = threading.Lock()


def _on_test_case(execution_arn: str, state_machine: str, case: str) -> None:
    mocks = CaseMocks.from_config(load(config_path()), state_machine, case)
    with _pending_lock:
        _pending[execution_arn] = mocks


def _start_worker(self: Execution) -> ExecutionWorker:
    worker = _original_start_worker(self)
    with _pending_lock:
        mocks = _pending.pop(self.exec_arn, None)
    if mocks is not None:
        vars(worker)["_mock_test_case"] = mocks
    return worker


def _current_mocked_response(self: Environment) -> MockedResponse:
    mocks = self.mock_test_case
    if not isinstance(mocks, CaseMocks):
        return _original_current_mocked_response(self)
    return mocks.next_response(str(self.next_state_name))


_original_start_worker = Execution._get_start_execution_worker
_original_current_mocked_response = Environment.get_current_mocked_response


def _mocked_throw(env: Environment, mocked_response: MockedResponseThrow) -> None:
    details = TaskFailedEventDetails(error=mocked_response.error, cause=mocked_response.cause)
    failure_event = FailureEvent(
        env=env,
        error_name=ReportedErrorName(mocked_response.error),  # States. ones too: a mocked States.Timeout
        event_type=HistoryEventType.TaskFailed,
        event_details=cast(EventDetails, {"taskFailedEventDetails": details}),  # a closed TypedDict
    )
    raise FailureEventException(failure_event=failure_event)


def install() -> None:
    vars(mock_eval_utils)["_eval_mocked_response_throw"] = _mocked_throw
    executions.on_test_case(_on_test_case)
    Execution._get_start_execution_worker = _start_worker  # type: ignore[method-assign]
    Environment.get_current_mocked_response = _current_mocked_response  # type: ignore[method-assign]
