"""Assign as Step Functions applies it: its strings, and when its variables change.

When: every field of a state reads the variables as they were when the state was entered; the state's
assignments take effect when it leaves (before its ``*StateExited`` event, which lists them). AWS runs
``"InputPath": "$answer", "OutputPath": "$answer", "Assign": {"answer": "<omitted>"}`` with the answer
assigned before (42) to an output of 42 (LocalStack's AWS-validated snapshot
assign/test_assign_base ``test_state_assign_evaluation_order``, read 2026-12-04); moto assigned at once,
so the OutputPath read the new value.

Strings: an ``Assign`` string is the JSON string's value, its escapes decoded (``"\\""`` is one double
quote), as every other string of a definition; the history's ``assignedVariables`` shows each value as
JSON text.
AWS records ``"Assign": {"var": "\\""}`` as ``"assignedVariables": {"var": "\\"\\\\\\"\\""}`` and then
evaluates ``$var = '"'`` to true (LocalStack's AWS-validated snapshot scenarios/test_base_scenarios
``test_escape_sequence_parsing``, read 2026-12-04). moto kept the raw JSON text of the literal (so the
comparison was false) and wrote a string variable between quotes without escaping it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from moto.stepfunctions.parser.asl.antlt4utils.antlr4utils import from_string_literal
from moto.stepfunctions.parser.asl.component.common.assign.assign_decl import AssignDecl
from moto.stepfunctions.parser.asl.component.common.assign.assign_template_value_terminal import (
    AssignTemplateValueTerminalLit,
)
from moto.stepfunctions.parser.asl.component.state.choice.state_choice import StateChoice
from moto.stepfunctions.parser.asl.component.state.state import CommonStateField
from moto.stepfunctions.parser.asl.eval.environment import Environment
from moto.stepfunctions.parser.asl.eval.variable_store import VariableStore
from moto.stepfunctions.parser.asl.parse.preprocessor import Preprocessor
from moto.stepfunctions.parser.asl.utils.encoding import to_json_str


def _assign_string_literal(self: Preprocessor, ctx: Any) -> AssignTemplateValueTerminalLit:
    return AssignTemplateValueTerminalLit(value=from_string_literal(ctx.string_literal()))


def _assigned_variables(self: VariableStore) -> dict[str, str]:
    return {name: to_json_str(self.get(name), separators=(",", ":")) for name in self._declaration_tracing}


def _assign_when_leaving(self: AssignDecl, env: Environment) -> None:
    """The values, computed now; kept for the state's end (moto set them at once)."""
    pending: dict[str, Any] = vars(env).setdefault(_PENDING, {})
    for declaration_binding in self.declaration_bindings:
        declaration_binding.eval(env=env)
        pending.update(env.stack.pop())


def _entering(original: Callable[[Any, Environment], None]) -> Callable[[Any, Environment], None]:
    def eval_body(self: Any, env: Environment) -> None:
        vars(env).pop(_PENDING, None)  # what a failed state computed is never assigned
        original(self, env)

    return eval_body


def _leaving(original: Callable[[Any, Environment], None]) -> Callable[[Any, Environment], None]:
    def set_next(self: Any, env: Environment) -> None:
        for name, value in vars(env).pop(_PENDING, {}).items():
            env.variable_store.set(variable_identifier=name, variable_value=value)
        original(self, env)

    return set_next


_PENDING = "_docagent_pending_assignments"


def install() -> None:
    AssignDecl._eval_body = _assign_when_leaving  # type: ignore[method-assign]
    CommonStateField._eval_body = _entering(CommonStateField._eval_body)  # type: ignore[method-assign,assignment]
    for state in (CommonStateField, StateChoice):
        state._set_next = _leaving(state._set_next)  # type: ignore[method-assign,assignment]
    Preprocessor.visitAssign_template_value_terminal_string_literal = _assign_string_literal  # type: ignore[method-assign]
    VariableStore.get_assigned_variables = _assigned_variables  # type: ignore[method-assign]
