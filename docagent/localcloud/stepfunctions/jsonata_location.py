"""Where in a state a JSONata expression sits, as Step Functions names it in its errors.

AWS's causes and ``EvaluationFailed`` events name the field of a failed expression as a path of the
state's field names: ``Output``, ``Output/result``, ``Arguments/FunctionName``, ``Assign/result``,
``Items``, ``Timestamp`` (API reference "EvaluationFailedEventDetails": "location: The location of the
field in the state in which the evaluation error occurred"; the paths as AWS records them in LocalStack's
AWS-validated snapshots, tests/aws/services/stepfunctions/v2/assign/test_assign_reference_variables and
scenarios/test_base_scenarios, read 2026-12-04). moto keeps one "next field name" (a class name at the
top level), so each field's component here pushes its name on the environment's path while it evaluates.
An element of an array keeps its array's path (AWS's form for it is not recorded anywhere we could read).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from moto.stepfunctions.parser.asl.component.common.assign.assign_decl import AssignDecl
from moto.stepfunctions.parser.asl.component.common.assign.assign_template_binding import (
    AssignTemplateBindingValue,
)
from moto.stepfunctions.parser.asl.component.common.jsonata.jsonata_template_binding import (
    JSONataTemplateBinding,
)
from moto.stepfunctions.parser.asl.component.common.outputdecl import Output
from moto.stepfunctions.parser.asl.component.common.parargs import Arguments
from moto.stepfunctions.parser.asl.component.common.timeouts.heartbeat import HeartbeatSecondsJSONata
from moto.stepfunctions.parser.asl.component.common.timeouts.timeout import TimeoutSecondsJSONata
from moto.stepfunctions.parser.asl.component.eval_component import EvalComponent
from moto.stepfunctions.parser.asl.component.state.choice.comparison.comparison import (
    ConditionStringJSONata,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_map.item_reader.reader_config import (
    max_items_decl,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_map.item_selector import ItemSelector
from moto.stepfunctions.parser.asl.component.state.exec.state_map.items.items import ItemsJSONata
from moto.stepfunctions.parser.asl.component.state.exec.state_map.max_concurrency import MaxConcurrencyJSONata
from moto.stepfunctions.parser.asl.component.state.exec.state_map.tolerated_failure import (
    ToleratedFailureCountStringJSONata,
    ToleratedFailurePercentageStringJSONata,
)
from moto.stepfunctions.parser.asl.component.state.fail.cause_decl import Cause
from moto.stepfunctions.parser.asl.component.state.fail.error_decl import Error
from moto.stepfunctions.parser.asl.component.state.wait.wait_function.seconds import SecondsJSONata
from moto.stepfunctions.parser.asl.component.state.wait.wait_function.timestamp import Timestamp
from moto.stepfunctions.parser.asl.eval.environment import Environment

_PATH = "_docagent_field_path"

# A state's JSONata fields: the component that evaluates each, and the field's name in the definition.
FIELDS: dict[type[EvalComponent], str] = {
    Output: "Output",
    Arguments: "Arguments",
    AssignDecl: "Assign",
    ItemsJSONata: "Items",
    ItemSelector: "ItemSelector",
    Timestamp: "Timestamp",
    SecondsJSONata: "Seconds",
    TimeoutSecondsJSONata: "TimeoutSeconds",
    HeartbeatSecondsJSONata: "HeartbeatSeconds",
    MaxConcurrencyJSONata: "MaxConcurrency",
    max_items_decl.MaxItemsStringJSONata: "MaxItems",
    ToleratedFailureCountStringJSONata: "ToleratedFailureCount",
    ToleratedFailurePercentageStringJSONata: "ToleratedFailurePercentage",
    ConditionStringJSONata: "Condition",
    Cause: "Cause",
    Error: "Error",
}
# The keys of a JSONata object template (Output, Arguments, ItemSelector) and of Assign.
BINDINGS: tuple[type[EvalComponent], ...] = (JSONataTemplateBinding, AssignTemplateBindingValue)


def field_location(env: Environment) -> str | None:
    """The path of the field being evaluated (``Output/result``), or None outside every known field."""
    path: list[str] | None = vars(env).get(_PATH)
    return "/".join(path) if path else None


def _tracked(original: Callable[[Any, Environment], None], name: Callable[[Any], str]) -> Any:
    def evaluate(self: Any, env: Environment) -> None:
        path: list[str] = vars(env).setdefault(_PATH, [])
        path.append(name(self))
        try:
            original(self, env)
        finally:
            path.pop()

    return evaluate


def _named(field: str) -> Callable[[Any], str]:
    return lambda _: field


def install() -> None:
    for component, field in FIELDS.items():
        component.eval = _tracked(component.eval, _named(field))  # type: ignore[method-assign]
    for binding in BINDINGS:
        binding.eval = _tracked(binding.eval, lambda self: str(self.identifier))  # type: ignore[method-assign]
