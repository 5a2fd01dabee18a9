"""TestState's ``context``: checked as AWS checks it, and then the whole Context object of the run.

AWS API reference "TestState" (looked up 2026-12-04): ``context`` is "A JSON string representing a valid
Context object for the state under test. This field may only be specified if a mock is specified". What
AWS does with it, as recorded on AWS in LocalStack's AWS-validated snapshot
test_state/test_state_context_object (read 2026-12-04):
- ``$$`` is exactly the object given: the full object reads back as given (no ``EnteredTime`` or state
  name of the run's own), ``{"Execution": {}, "State": {}, "StateMachine": {}}`` reads back so, and ``{}``
  stays ``{}``;
- refusals, each a ValidationException "Invalid Context object provided: ..." - ``Execution.Id must be a
  string`` (a field of the wrong type), ``Field 'pokemon' is not allowed`` (a field the object does not
  have, at any depth), ``'Map' field is not supported when mocking a Context object``, and ``Context object
  contains 'Task' when state is not a Task state with a '.sync' or '.waitForTaskToken' service integration
  pattern``.
The fields and their types are the developer guide's "Accessing execution data from the Context object".
"""

from __future__ import annotations

import copy
from typing import Any

from moto.stepfunctions.parser.asl.eval.environment import Environment

from docagent.localcloud.stepfunctions import resources
from docagent.localcloud.stepfunctions.executions import AwsError

PREFIX = "Invalid Context object provided: "
# The name AWS runs the tested state under, whatever its name in the definition: ``$$.State.Name`` is
# "StateName" and a schema error points at ``/States/StateName/...`` (as recorded on AWS in LocalStack's
# AWS-validated snapshots test_state/test_test_state_scenarios and test_state_mock_validation).
STATE_NAME = "StateName"
_ANY = object()  # a field of any JSON type
FIELDS: dict[str, dict[str, Any]] = {
    "Execution": {"Id": str, "Input": _ANY, "Name": str, "RoleArn": str, "StartTime": str,
                  "RedriveCount": int, "RedriveTime": str},
    "State": {"EnteredTime": str, "Name": str, "RetryCount": int},
    "StateMachine": {"Id": str, "Name": str},
    "Task": {"Token": str},
}  # fmt: skip
_TYPE_NAMES = {str: "a string", int: "an integer"}


def _field_problem(parent: str, name: str, value: Any) -> str | None:
    kind = FIELDS[parent].get(name)
    if kind is None:
        return f"Field '{name}' is not allowed"
    if kind is not _ANY and (not isinstance(value, kind) or isinstance(value, bool)):
        return f"{parent}.{name} must be {_TYPE_NAMES[kind]}"
    return None


def _callback_task(state: dict[str, Any]) -> bool:
    resource = state.get("Resource")
    found = resources.integration(resource) if isinstance(resource, str) else None
    return state.get("Type") == "Task" and found is not None and bool(found.pattern)


def problem(given: Any, state: dict[str, Any]) -> str | None:
    """Why AWS refuses ``given`` as the Context object of ``state`` (None: it does not)."""
    if not isinstance(given, dict):
        return "the Context object must be a JSON object"  # wording ours
    for key, value in given.items():
        if key == "Map":
            return "'Map' field is not supported when mocking a Context object"
        if key not in FIELDS:
            return f"Field '{key}' is not allowed"
        if not isinstance(value, dict):
            return f"{key} must be an object"  # wording ours
        for name, item in value.items():
            if found := _field_problem(key, name, item):
                return found
    if "Task" in given and not _callback_task(state):
        return (
            "Context object contains 'Task' when state is not a Task state with a '.sync' or "
            "'.waitForTaskToken' service integration pattern"
        )
    return None


def checked(given: Any, state: dict[str, Any]) -> dict[str, Any]:
    """``given`` if AWS accepts it as ``state``'s Context object; else AWS's ValidationException."""
    found = problem(given, state)
    if found:
        raise AwsError("ValidationException", PREFIX + found)
    return dict(given)


class _Absent(dict[str, Any]):
    """A part of the Context object as read by the interpreter: a field that was not given is None when it
    indexes one (``["Execution"]["Input"]`` as it builds a frame); JSONPath's ``.get`` still finds none."""

    def __missing__(self, key: str) -> None:
        return None


class FixedContext(dict[str, Any]):
    """A Context object that is what TestState was given and nothing else: the interpreter's own writes
    (the state's name and entry time, its retry count, a task token) leave it as it is."""

    def __setitem__(self, key: str, value: Any) -> None:
        pass

    def __getitem__(self, key: str) -> Any:
        value = copy.deepcopy(super().__getitem__(key)) if key in self else {}
        return _Absent(value) if isinstance(value, dict) else value

    def __deepcopy__(self, memo: dict[int, Any]) -> FixedContext:
        return FixedContext(copy.deepcopy(dict(self), memo))


def _use(env: Environment, context: FixedContext) -> None:
    """``context`` as what ``$$`` (JSONPath) and ``$states.context`` (JSONata) read in ``env``."""
    vars(env.states.context_object)["context_object_data"] = context
    env.states._states_data["context"] = context  # type: ignore[typeddict-item]


def fix(env: Environment, given: dict[str, Any]) -> None:
    """Make ``given`` the whole Context object of ``env`` (and of the frames its states run in)."""
    _use(env, FixedContext(copy.deepcopy(given)))


def as_aws_gives_it(env: Environment, role_given: bool) -> None:
    """The Context object of a TestState run without a given one, as recorded on AWS (the same snapshots):
    the execution is an Express one (``arn:...:express:MACHINE:NAME``), without ``RedriveCount``, and its
    ``RoleArn`` is null when the request names no role."""
    execution: Any = env.states.context_object.context_object_data["Execution"]
    execution.pop("RedriveCount", None)
    if not role_given:
        execution["RoleArn"] = None


def _frames_keep_it(original: Any) -> Any:
    def as_inner_frame_of(cls: Any, env: Any, *args: Any, **kwargs: Any) -> Any:
        frame = original.__func__(cls, env, *args, **kwargs)
        data = env.states.context_object.context_object_data
        if isinstance(data, FixedContext):
            _use(frame, copy.deepcopy(data))
        return frame

    return classmethod(as_inner_frame_of)


def install() -> None:
    Environment.as_inner_frame_of = _frames_keep_it(Environment.as_inner_frame_of)  # type: ignore[method-assign]
