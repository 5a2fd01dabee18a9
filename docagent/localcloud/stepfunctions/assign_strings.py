"""A string assigned to a variable, as Step Functions keeps it.

An ``Assign`` string is the JSON string's value, its escapes decoded (``"\\""`` is one double quote), as
every other string of a definition; the history's ``assignedVariables`` shows each value as JSON text.
AWS records ``"Assign": {"var": "\\""}`` as ``"assignedVariables": {"var": "\\"\\\\\\"\\""}`` and then
evaluates ``$var = '"'`` to true (LocalStack's AWS-validated snapshot scenarios/test_base_scenarios
``test_escape_sequence_parsing``, read 2026-12-04). moto kept the raw JSON text of the literal (so the
comparison was false) and wrote a string variable between quotes without escaping it.
"""

from __future__ import annotations

from typing import Any

from moto.stepfunctions.parser.asl.antlt4utils.antlr4utils import from_string_literal
from moto.stepfunctions.parser.asl.component.common.assign.assign_template_value_terminal import (
    AssignTemplateValueTerminalLit,
)
from moto.stepfunctions.parser.asl.eval.variable_store import VariableStore
from moto.stepfunctions.parser.asl.parse.preprocessor import Preprocessor
from moto.stepfunctions.parser.asl.utils.encoding import to_json_str


def _assign_string_literal(self: Preprocessor, ctx: Any) -> AssignTemplateValueTerminalLit:
    return AssignTemplateValueTerminalLit(value=from_string_literal(ctx.string_literal()))


def _assigned_variables(self: VariableStore) -> dict[str, str]:
    return {name: to_json_str(self.get(name), separators=(",", ":")) for name in self._declaration_tracing}


def install() -> None:
    Preprocessor.visitAssign_template_value_terminal_string_literal = _assign_string_literal  # type: ignore[method-assign]
    VariableStore.get_assigned_variables = _assigned_variables  # type: ignore[method-assign]
