"""JSONata for the local Step Functions interpreter, with the functions Step Functions adds.

moto keeps LocalStack's JSONata plumbing but not its evaluator (``eval_jsonata_expression`` calls a
function pointer left at None), so every ``{% ... %}`` failed with States.Runtime. This module evaluates
the expressions with jsonata-python (a pure-Python port of jsonata-java, pinned in pyproject.toml),
chosen against JSONata's own test suite (docs/decisions.md "The JSONata evaluator": 97.6 % of jsonata-js
test/test-suite; the Rust-backed candidates crashed or hung the process on some cases).

As of 2026-11, AWS "Transforming data with JSONata in Step Functions": JSONata 2.0.6 with every built-in
function except ``$eval`` (use ``$parse``), plus ``$partition``, ``$range``, ``$hash``, ``$random``
(optionally seeded), ``$uuid`` and ``$parse``; ``$states`` holds ``input``, ``context``, and where the
field allows it ``result`` and ``errorOutput``; workflow variables are ``$name``; an expression that
fails, returns nothing (undefined) or returns a function is ``States.QueryEvaluationError``, with AWS's
cause naming the expression and its field (``The JSONata expression '$x' specified for the field
'Output/result' returned nothing (undefined).``; "threw an error during evaluation. T1006: ..." with
JSONata's error code; "returned an unsupported result type.") and an ``EvaluationFailed`` event carrying
the field as ``location`` (as recorded on AWS in LocalStack's AWS-validated snapshots, read 2026-12-04:
tests/aws/services/stepfunctions/v2/assign/test_assign_reference_variables, intrinsic_functions/
test_math_operations_jsonata - ``$randomSeeded`` is no Step Functions function: T1006).
Instead of moto's approach (prepending the bindings as JSON text to the expression) the bindings are
passed as values, so strings with quotes or backslashes survive. Belongs in moto's ``jsonata.py``.
"""

from __future__ import annotations

import hashlib
import json
import random
import threading
import uuid
from collections.abc import Callable, Mapping
from typing import Any, cast

import jsonata as jsonata_python  # type: ignore[import-untyped]
from jsonata import parser as jsonata_parser
from jsonata import utils as jsonata_utils
from moto.stepfunctions.parser.api import EvaluationFailedEventDetails, HistoryEventType
from moto.stepfunctions.parser.asl.component.common.error_name.failure_event import (
    FailureEvent,
    FailureEventException,
)
from moto.stepfunctions.parser.asl.component.common.error_name.states_error_name import StatesErrorName
from moto.stepfunctions.parser.asl.component.common.error_name.states_error_name_type import (
    StatesErrorNameType,
)
from moto.stepfunctions.parser.asl.component.common.query_language import QueryLanguageMode
from moto.stepfunctions.parser.asl.component.common.string import string_expression
from moto.stepfunctions.parser.asl.eval.environment import Environment
from moto.stepfunctions.parser.asl.eval.event.event_detail import EventDetails

from docagent.localcloud.stepfunctions.jsonata_location import field_location

HASH_ALGORITHMS = {
    "MD5": "md5",
    "SHA-1": "sha1",
    "SHA-256": "sha256",
    "SHA-384": "sha384",
    "SHA-512": "sha512",
}
_NULL = jsonata_utils.Utils.NULL_VALUE


class QueryEvaluationError(Exception):
    """An expression failed, or returned nothing or a function: States.QueryEvaluationError."""


class UnsupportedResultError(QueryEvaluationError):
    """An expression returned a function, which no state field can hold."""


class Undefined:
    """JSONata's undefined (no value), distinct from JSON null."""


UNDEFINED = Undefined()


# -- Step Functions' own functions --------------------------------------------------------------------


def _partition(array: Any, size: Any) -> list[Any]:
    items = list(array) if isinstance(array, list) else [array]
    if not isinstance(size, (int, float)) or size < 1:
        raise QueryEvaluationError("$partition: the chunk size must be a positive number")
    chunk = int(size)
    return [items[start : start + chunk] for start in range(0, len(items), chunk)]


def _range(start: Any, end: Any, step: Any) -> Any:
    """The numbers from start to end by step; one number alone is that number, not an array (a JSONata
    sequence of one: AWS answers ``$range(1, 9, 9)`` with ``1``, as recorded on AWS in LocalStack's
    AWS-validated snapshot intrinsic_functions/test_array_jsonata ``test_array_range``, read 2026-12-04)."""
    if not all(isinstance(value, (int, float)) for value in (start, end, step)) or step == 0:
        raise QueryEvaluationError("$range: start, end and a non-zero step must be numbers")
    values, current = [], start
    while (step > 0 and current <= end) or (step < 0 and current >= end):
        values.append(current)
        current += step
    return values[0] if len(values) == 1 else values


def _hash(value: Any, algorithm: Any) -> str:
    if algorithm not in HASH_ALGORITHMS:
        raise QueryEvaluationError(f"$hash: the algorithm must be one of {', '.join(HASH_ALGORITHMS)}")
    text = value if isinstance(value, str) else json.dumps(_plain(value), separators=(",", ":"))
    return hashlib.new(HASH_ALGORITHMS[algorithm], text.encode()).hexdigest()


def _random(seed: Any = None) -> float:
    return random.Random(seed).random() if seed is not None else random.random()


def _uuid() -> str:
    return str(uuid.uuid4())


def _parse(text: Any) -> Any:
    if not isinstance(text, str):
        raise QueryEvaluationError("$parse: the argument must be a string")
    try:
        return _bound(json.loads(text))
    except ValueError as error:
        raise QueryEvaluationError(f"$parse: not valid JSON: {error}") from None


def _eval_unavailable(*_: Any) -> Any:
    raise QueryEvaluationError("$eval is not available in Step Functions; use $parse")


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "partition": _partition,
    "range": _range,
    "hash": _hash,
    "random": _random,
    "uuid": _uuid,
    "parse": _parse,
    "eval": _eval_unavailable,
}


# -- evaluation ----------------------------------------------------------------------------------------


def _bound(value: Any) -> Any:
    """A value as a binding: JSON null becomes JSONata null (None alone means undefined)."""
    return _NULL if value is None else value


def _plain(value: Any) -> Any:
    """A JSONata result as plain JSON: nulls as None, integral floats as ints (JSON has one number type)."""
    if value is _NULL:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    return value


_compiled = threading.local()
# What a JSONata function value is in jsonata-python: a lambda is a parser Symbol, built-ins are JFunctions.
_FUNCTION_TYPES = (
    jsonata_python.Jsonata.JLambda,
    jsonata_python.Jsonata.JFunction,
    jsonata_parser.Parser.Symbol,
)


def _expression(text: str) -> Any:
    cache: dict[str, Any] = vars(_compiled).setdefault("cache", {})
    found = cache.get(text)
    if found is None:
        if len(cache) > 2048:
            cache.clear()
        found = jsonata_python.Jsonata(text)
        found.set_output_convert_nulls(False)
        for name, function in FUNCTIONS.items():
            found.register_lambda(name, function)
        cache[text] = found
    return found


def evaluate(expression: str, bindings: Mapping[str, Any], data: Any = None) -> Any:
    """The value of ``expression`` with ``bindings`` as its variables; UNDEFINED when it has none.

    Raises QueryEvaluationError when the expression is not valid JSONata or fails."""
    try:
        compiled = _expression(expression)
        result = compiled.evaluate(data, {name: _bound(value) for name, value in bindings.items()})
    except QueryEvaluationError:
        raise
    except jsonata_python.JException as error:  # JSONata's error code first, as AWS prints it
        code = getattr(error, "error", None)
        raise QueryEvaluationError(f"{code}: {error}" if code else str(error)) from None
    except Exception as error:  # jsonata-python raises plain Python errors too
        raise QueryEvaluationError(str(error) or type(error).__name__) from None
    if result is None:
        return UNDEFINED
    if callable(result) or isinstance(result, _FUNCTION_TYPES):
        raise UnsupportedResultError("returned a function")
    return _plain(result)


# -- the interpreter seam -------------------------------------------------------------------------------


def _states_binding(env: Environment) -> dict[str, Any]:
    """``$states``: input, context and what the state has so far. A Catch sees ``errorOutput`` and no
    ``result`` (developer guide "Transforming data with JSONata", the reserved variable's fields per
    state field; as recorded on AWS in LocalStack's AWS-validated snapshot test_state/
    test_test_state_scenarios ``test_state_task_catch_error``, read 2026-12-04); moto set both."""
    data = dict(env.states._states_data)
    if data.get("errorOutput") is not None:
        data.pop("result", None)
    return {key: value for key, value in data.items() if value is not None or key == "input"}


def _variables(env: Environment) -> dict[str, Any]:
    store = env.variable_store
    return {**store._outer_scope, **store._inner_scope}


def query_failure(env: Environment, cause: str, location: str | None = None) -> FailureEventException:
    """States.QueryEvaluationError with ``cause``; ``location`` is the field's path (``Output/result``)."""
    error_name = StatesErrorName(typ=StatesErrorNameType.StatesQueryEvaluationError)
    details = EvaluationFailedEventDetails(error=error_name.error_name, cause=cause)
    if location:
        details["location"] = location
    failure_event = FailureEvent(
        env=env,
        error_name=error_name,
        event_type=HistoryEventType.EvaluationFailed,
        event_details=cast(  # moto's EventDetails is a closed TypedDict of every event kind
            EventDetails,
            {"evaluationFailedEventDetails": details},
        ),
    )
    return FailureEventException(failure_event=failure_event)


def _evaluate_in(env: Environment, expression: str, with_states: bool) -> Any:
    bindings = _variables(env)
    if with_states:
        bindings["states"] = _states_binding(env)
    location = field_location(env) or env.next_field_name
    said = f"The JSONata expression '{expression}' specified for the field '{location}'"
    try:
        value = evaluate(expression, bindings)
    except UnsupportedResultError:
        raise query_failure(env, f"{said} returned an unsupported result type.", location) from None
    except QueryEvaluationError as error:
        raise query_failure(env, f"{said} threw an error during evaluation. {error}", location) from None
    if value is UNDEFINED:
        raise query_failure(env, f"{said} returned nothing (undefined).", location)
    return value


def _string_jsonata_eval_body(self: Any, env: Environment) -> None:
    env.stack.append(_evaluate_in(env, self.expression, with_states=True))


def _string_variable_sample_eval_body(self: Any, env: Environment) -> None:
    with_states = self.query_language_mode == QueryLanguageMode.JSONata
    env.stack.append(_evaluate_in(env, self.expression, with_states=with_states))


def install() -> None:
    string_expression.StringJSONata._eval_body = _string_jsonata_eval_body  # type: ignore[method-assign]
    string_expression.StringVariableSample._eval_body = _string_variable_sample_eval_body  # type: ignore[method-assign]
