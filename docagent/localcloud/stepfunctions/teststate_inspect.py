"""TestState's ``inspectionData``: each step of a state's data flow as the interpreter computed it.

AWS API reference "InspectionData" (looked up 2026-12-04): ``input`` (the raw state input),
``afterInputPath`` ("The input after Step Functions applies the InputPath filter"), ``afterParameters``
("The effective input after Step Functions applies the Parameters filter"), ``result`` ("The state's raw
result"), ``afterResultSelector`` ("The effective result after Step Functions applies the ResultSelector
filter"), ``afterResultPath`` ("The effective result combined with the raw state input after Step Functions
applies the ResultPath filter") - these four "Not populated when QueryLanguage is JSONata" - and
``afterArguments`` ("only ... when QueryLanguage ... is set to JSONata"), ``variables``.

moto's interpreter computes each of these on its value stack; here InputPath, Parameters/Arguments,
ResultSelector and ResultPath note the value they leave, in an environment that asks for it (only a
TestState run's), so the answer holds what the state really did. A step a state does not have gives
the value unchanged (no ResultSelector: ``afterResultSelector`` is the result).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from moto.stepfunctions.parser.asl.component.common.parargs import Arguments, Parargs
from moto.stepfunctions.parser.asl.component.common.path.input_path import InputPath
from moto.stepfunctions.parser.asl.component.common.path.result_path import ResultPath
from moto.stepfunctions.parser.asl.component.common.result_selector import ResultSelector
from moto.stepfunctions.parser.asl.eval.environment import Environment

_NOTES = "_docagent_inspection"
_HTTP = "_docagent_http_trace"  # an HTTP Task's request and response, shared with the frames it runs in
JSONPATH_STEPS = ("afterInputPath", "afterParameters", "result", "afterResultSelector", "afterResultPath")


def watch(env: Any) -> None:
    """Have ``env``'s top-level state note its data flow, and an HTTP Task its request and response."""
    vars(env)[_NOTES] = {}
    vars(env)[_HTTP] = {}


def http_notes(env: Any) -> dict[str, Any] | None:
    """Where an HTTP Task running in ``env`` (or a frame of it) notes its request and response (None: not
    a TestState run)."""
    found: dict[str, Any] | None = vars(env).get(_HTTP)
    return found


def _sharing_http_notes(original: Any) -> Any:
    """A Task runs in a frame of its state's environment; the frame shares the HTTP notes."""

    def as_inner_frame_of(cls: Any, env: Any, *args: Any, **kwargs: Any) -> Any:
        frame = original.__func__(cls, env, *args, **kwargs)
        if _HTTP in vars(env):
            vars(frame)[_HTTP] = vars(env)[_HTTP]
        return frame

    return classmethod(as_inner_frame_of)


def notes(env: Any) -> dict[str, Any]:
    """What ``env``'s state noted (step name: value)."""
    found: dict[str, Any] = vars(env).get(_NOTES, {})
    return found


def _noting(original: Callable[[Any, Any], None], before: str | None, after: Callable[[Any], str]) -> Any:
    def eval_body(self: Any, env: Any) -> None:
        noted = vars(env).get(_NOTES)
        if noted is not None and before is not None and env.stack:
            noted.setdefault(before, env.stack[-1])
        original(self, env)
        if noted is not None and env.stack:
            noted.setdefault(after(self), env.stack[-1])

    return eval_body


def jsonpath_inspection(noted: dict[str, Any], state: dict[str, Any], state_input: Any) -> dict[str, str]:
    """The JSONPath data-flow fields of ``inspectionData`` (a step ``state`` lacks passes its value on).

    A Pass state with ``Result`` shows its result, not the input's paths; one without shows no result (as
    recorded on AWS in LocalStack's AWS-validated snapshot test_state/test_test_state_scenarios
    ``test_base_inspection_level_debug``, read 2026-12-04)."""
    kind = state.get("Type")
    passes_result = kind == "Pass" and "Result" in state
    value: Any = noted.get("afterInputPath", state_input)
    found: dict[str, str] = {}
    if not passes_result:
        found["afterInputPath"] = json.dumps(value)
        if kind in ("Task", "Pass", "Map", "Parallel"):
            value = noted.get("afterParameters", value)
            found["afterParameters"] = json.dumps(value)
    if "afterResultPath" in noted:
        result = noted.get("result", value)
        if kind != "Pass" or passes_result:
            found["result"] = json.dumps(result)
        found["afterResultSelector"] = json.dumps(noted.get("afterResultSelector", result))
        found["afterResultPath"] = json.dumps(noted["afterResultPath"])
    return found


def install() -> None:
    Environment.as_inner_frame_of = _sharing_http_notes(Environment.as_inner_frame_of)  # type: ignore[method-assign]
    InputPath._eval_body = _noting(InputPath._eval_body, None, lambda _: "afterInputPath")  # type: ignore[method-assign]
    Parargs._eval_body = _noting(  # type: ignore[method-assign]
        Parargs._eval_body,
        None,
        lambda self: "afterArguments" if isinstance(self, Arguments) else "afterParameters",
    )
    ResultSelector._eval_body = _noting(ResultSelector._eval_body, "result", lambda _: "afterResultSelector")  # type: ignore[method-assign]
    ResultPath._eval_body = _noting(ResultPath._eval_body, "result", lambda _: "afterResultPath")  # type: ignore[method-assign]
