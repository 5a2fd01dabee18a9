"""Definition checks: what Step Functions refuses at CreateStateMachine and reports from
ValidateStateMachineDefinition.

As of 2026-11, AWS API reference "ValidateStateMachineDefinition" and
"ValidateStateMachineDefinitionDiagnostic": the answer is ``result`` OK | FAIL, ``diagnostics``
(severity ERROR | WARNING, code, message, location as a JSON pointer such as ``/States/A/Next``) and
``truncated``; codes include INVALID_JSON_DESCRIPTION, MISSING_DESCRIPTION, SCHEMA_VALIDATION_FAILED,
MISSING_END_STATE, DUPLICATE_STATE_NAME, INVALID_STATE_NAME, and the warnings NO_DOLLAR, NO_PATH,
PASS_RESULT_IS_STATIC. AWS says the codes and wording may change; only ``result`` is stable.

moto only parses definitions (a StartAt or Next naming no state is accepted and fails at run time);
this belongs in moto's parser backend (``StepFunctionsParserBackend._validate_definition``).
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from moto.core.responses import ActionResult
from moto.stepfunctions.parser.api import InvalidDefinition
from moto.stepfunctions.parser.asl.parse.preprocessor import Preprocessor
from moto.stepfunctions.parser.models import StepFunctionsParserBackend
from moto.stepfunctions.responses import StepFunctionResponse

from docagent.localcloud.stepfunctions import executions, json_errors, json_paths, resources

STATE_TYPES = {"Pass", "Task", "Choice", "Wait", "Succeed", "Fail", "Parallel", "Map"}
TERMINAL_TYPES = {"Succeed", "Fail"}
STATE_NAME_MAX = 80
# Fields that exist only in one query language (AWS "Transforming data with JSONata").
JSONPATH_ONLY = {
    "InputPath", "Parameters", "ResultSelector", "ResultPath", "OutputPath", "ItemsPath",
    "TimeoutSecondsPath", "HeartbeatSecondsPath", "SecondsPath", "TimestampPath", "ErrorPath", "CausePath",
    "ToleratedFailureCountPath", "ToleratedFailurePercentagePath", "MaxConcurrencyPath",
}  # fmt: skip
JSONATA_ONLY = {"Arguments", "Output", "Items"}
RETRIER_FIELDS = {
    "ErrorEquals",
    "IntervalSeconds",
    "MaxAttempts",
    "BackoffRate",
    "MaxDelaySeconds",
    "JitterStrategy",
    "Comment",
}
CATCHER_FIELDS = {"ErrorEquals", "Next", "ResultPath", "Output", "Assign", "Comment"}
# The fields each state type takes (ASL specification and the developer guide's state pages, 2026-12-04).
_COMMON = {"Type", "Comment", "QueryLanguage", "InputPath", "OutputPath", "Output", "Assign", "Next", "End"}
_RESULT = {"Parameters", "Arguments", "ResultPath", "ResultSelector", "Retry", "Catch"}
STATE_FIELDS = {
    "Pass": _COMMON | {"Result", "ResultPath", "Parameters"},
    "Task": _COMMON | _RESULT | {"Resource", "TimeoutSeconds", "TimeoutSecondsPath", "HeartbeatSeconds",
                                  "HeartbeatSecondsPath", "Credentials"},
    "Choice": _COMMON | {"Choices", "Default"},
    "Wait": _COMMON | {"Seconds", "SecondsPath", "Timestamp", "TimestampPath"},
    "Succeed": _COMMON,
    "Fail": _COMMON | {"Error", "ErrorPath", "Cause", "CausePath"},
    "Parallel": _COMMON | _RESULT | {"Branches"},
    "Map": _COMMON | _RESULT | {
        "ItemProcessor", "Iterator", "ItemsPath", "Items", "ItemSelector", "ItemReader", "ItemBatcher",
        "ResultWriter", "MaxConcurrency", "MaxConcurrencyPath", "Label", "ToleratedFailurePercentage",
        "ToleratedFailurePercentagePath", "ToleratedFailureCount", "ToleratedFailureCountPath",
    },
}  # fmt: skip
PATH_FIELDS = sorted(field for field in JSONPATH_ONLY if field.endswith("Path"))


@dataclass(frozen=True)
class Diagnostic:
    severity: str
    code: str
    message: str
    location: str | None  # None: AWS names none (a definition that is not a JSON object)

    def as_api(self) -> dict[str, str]:
        found = {"severity": self.severity, "code": self.code, "message": self.message}
        return found | ({"location": self.location} if self.location is not None else {})


def _error(code: str, message: str, location: str | None) -> Diagnostic:
    return Diagnostic("ERROR", code, message, location)


def _schema(message: str, location: str | None) -> Diagnostic:
    return _error("SCHEMA_VALIDATION_FAILED", message, location)


class _DuplicateKeyError(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise _DuplicateKeyError(key)
        seen[key] = value
    return seen


NOT_AN_OBJECT = "Definition must be a valid JSON object"


def diagnose(definition: str | None) -> list[Diagnostic]:
    """Every problem found in ``definition``, errors first. As recorded on AWS in LocalStack's AWS-validated
    snapshot test_sfn_api_validation (read 2026-12-04): a blank definition or one that is not a JSON object
    is "Definition must be a valid JSON object" with no location; invalid JSON is Jackson's words with its
    source as the location (json_errors.py)."""
    if not definition or not definition.strip():
        return [_schema(NOT_AN_OBJECT, None)]
    try:
        document = json.loads(definition, object_pairs_hook=_no_duplicates)
    except _DuplicateKeyError as duplicate:
        return [_error("DUPLICATE_STATE_NAME", f"Duplicate field or state name '{duplicate}'", "/")]
    except json.JSONDecodeError as error:
        reason, source = json_errors.parse_error(definition, error)
        if source:
            return [_error("INVALID_JSON_DESCRIPTION", f"{reason}\n at {source}", source)]
        return [_error("INVALID_JSON_DESCRIPTION", f"The definition is not valid JSON: {reason}", "/")]
    if not isinstance(document, dict):
        return [_schema(NOT_AN_OBJECT, None)]
    language = document.get("QueryLanguage", "JSONPath")
    found = list(_machine(document, "", language, set(), whole=language))
    return sorted(found, key=lambda item: item.severity != "ERROR")


def _machine(
    machine: dict[str, Any], at: str, language: str, names: set[str], *, whole: str
) -> Iterator[Diagnostic]:
    """``whole``: the whole state machine's QueryLanguage."""
    if language not in ("JSONPath", "JSONata"):
        yield _schema(f"QueryLanguage must be JSONPath or JSONata, not {language!r}", f"{at}/QueryLanguage")
        language = "JSONPath"
    states = machine.get("States")
    start = machine.get("StartAt")
    # "These fields are required: [States, StartAt]" (as recorded on AWS: test_sfn_api_validation
    # ``[EMPTY_DICT]``, ``[INVALID_BASE_NO_STARTAT]``; test_sfn_api ``test_create_delete_invalid_sm``).
    missing = [field for field, value in (("States", states), ("StartAt", start)) if value is None]
    if missing:
        yield _schema("These fields are required: [" + ", ".join(missing) + "]", at or "/")
    if not isinstance(start, str) and start is not None:
        yield _schema("StartAt must be a state name", f"{at}/StartAt")
    if states is None:
        return
    if not isinstance(states, dict) or not states:
        yield _schema("The field 'States' should be non-empty", f"{at}/States")
        return
    if isinstance(start, str) and start not in states:
        yield _error("MISSING_TRANSITION_TARGET", f"StartAt names no state: '{start}'", f"{at}/StartAt")
    for name, state in states.items():
        where = f"{at}/States/{name}"
        if name in names:
            yield _error("DUPLICATE_STATE_NAME", f"State name '{name}' is used more than once", where)
        names.add(name)
        if not 1 <= len(name) <= STATE_NAME_MAX:
            yield _error(
                "INVALID_STATE_NAME", f"State name '{name}' is not 1 to {STATE_NAME_MAX} characters", where
            )
        if not isinstance(state, dict):
            yield _schema(f"State '{name}' must be a JSON object", where)
            continue
        yield from _state(name, state, where, states, language, names, whole)
    yield from _reachability(start, states, at)


def _state(  # noqa: PLR0917 - one state, in its scope
    name: str, state: dict[str, Any], at: str, states: dict[str, Any], outer: str, names: set[str], whole: str
) -> Iterator[Diagnostic]:
    kind = state.get("Type")
    if kind not in STATE_TYPES:
        yield _schema(
            "The field 'Type' should have one of these values: "
            "[Task, Wait, Pass, Succeed, Fail, Choice, Parallel, Map]",
            f"{at}/Type",
        )
        return
    language = state.get("QueryLanguage", outer)
    for field in sorted(state.keys() - STATE_FIELDS[kind] - JSONPATH_ONLY - JSONATA_ONLY):
        yield _schema(f'The field "{field}" is not supported by Step Functions', f"{at}/{field}")
    yield from _values(kind, state, at, language)
    if whole == "JSONata" and language == "JSONPath":  # AWS's words (test_sfn_api_validation recording)
        yield _schema("'QueryLanguage' can not be 'JSONPath' if set to 'JSONata' for whole state machine", at)
    wrong = JSONPATH_ONLY if language == "JSONata" else JSONATA_ONLY
    for field in sorted(wrong & state.keys()):
        yield _schema(f"Field '{field}' is not supported in a {language} state", f"{at}/{field}")
    if kind in TERMINAL_TYPES:
        for field in ("Next", "End"):
            if field in state:
                yield _schema(f"A {kind} state cannot have '{field}'", f"{at}/{field}")
    elif kind == "Choice":
        yield from _choice(state, at, states, language)
    else:
        has_next, ends = "Next" in state, state.get("End") is True
        if has_next == ends:
            yield _schema(f"State '{name}' must have exactly one of 'Next' or 'End: true'", at)
        if has_next:
            yield from _target(state["Next"], states, f"{at}/Next")
    for index, retrier in enumerate(_list(state.get("Retry"))):
        yield from _retrier(retrier, f"{at}/Retry/{index}")
    for index, catcher in enumerate(_list(state.get("Catch"))):
        yield from _catcher(catcher, f"{at}/Catch/{index}", states)
    if kind == "Parallel":
        if state.get("Branches") == []:  # as recorded on AWS (teststate.py, _schema_refusal)
            yield _schema("Value cannot be empty", f"{at}/Branches")
        for index, branch in enumerate(_list(state.get("Branches"))):
            if isinstance(branch, dict):
                yield from _machine(branch, f"{at}/Branches/{index}", language, names, whole=whole)
    if kind == "Map":
        key = "ItemProcessor" if "ItemProcessor" in state else "Iterator"
        processor = state.get(key)
        if isinstance(processor, dict):
            processor_language = processor.get("QueryLanguage", language)
            yield from _machine(processor, f"{at}/{key}", processor_language, names, whole=whole)
        else:
            yield _schema("A Map state needs an ItemProcessor", f"{at}/ItemProcessor")


def _values(kind: str, state: dict[str, Any], at: str, language: str) -> Iterator[Diagnostic]:
    """Field values AWS refuses at creation: JSONPaths that do not parse, a Wait Timestamp that is not RFC
    3339 ("Wait": "an uppercase T must separate the date and time portions, and an uppercase Z must denote
    that a numeric time zone offset is not present"), an integration resource Step Functions does not have."""
    if language == "JSONPath":
        for field in PATH_FIELDS:
            value = state.get(field)
            # A Fail state's ErrorPath and CausePath may be an intrinsic function call (developer guide
            # "Fail workflow state": "a reference path or an intrinsic function").
            call = field in ("ErrorPath", "CausePath") and isinstance(value, str) and _intrinsic_ok(value)
            if isinstance(value, str) and not call and not json_paths.is_valid(value):
                yield _schema(f"The value for the field '{field}' must be a valid JSONPath", f"{at}/{field}")
        stamp = state.get("Timestamp")
        if kind == "Wait" and isinstance(stamp, str) and not rfc3339(stamp):
            yield _schema(
                "The value for the field 'Timestamp' must be a valid RFC3339 timestamp", f"{at}/Timestamp"
            )
    if language == "JSONPath":
        for field in ("Parameters", "ResultSelector", "ItemSelector"):
            yield from _templates(state.get(field), f"{at}/{field}")
    resource = state.get("Resource")
    if kind == "Task" and isinstance(resource, str) and not resources.known(resource):
        yield _error(
            "INVALID_RESOURCE",
            f"The resource provided {resource} is not recognized. The value is not a valid resource ARN, or "
            "the resource is not available in this region.",
            f"{at}/Resource",
        )


_PATH_OR_CALL = "a valid JSONPath or a valid intrinsic function call"
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)


def _intrinsic_ok(text: str) -> bool:
    """An intrinsic function call's shape: ``States.Name(...)``, its string literals escaping only
    ``'``, ``{``, ``}`` and ``\\`` (ASL "Intrinsic functions": "Reserved characters ... escaped")."""
    if not re.match(r"^States\.[A-Za-z0-9]+\(.*\)$", text, re.DOTALL):
        return False
    for literal in re.findall(r"'((?:[^'\\]|\\.)*)'", text):
        if any(char not in "'{}\\" for char in _ESCAPE.findall(literal)):
            return False
    return text.count("(") == text.count(")")


def _templates(template: Any, at: str) -> Iterator[Diagnostic]:
    """Every ``.$`` field of a payload template holds a JSONPath or an intrinsic function call."""
    items = (
        template.items()
        if isinstance(template, dict)
        else enumerate(template)
        if isinstance(template, list)
        else ()
    )
    for key, value in items:
        where = f"{at}/{key}"
        if isinstance(key, str) and key.endswith(".$") and isinstance(value, str):
            ok = _intrinsic_ok(value) if value.startswith("States.") else json_paths.is_valid(value)
            if not ok:
                yield _schema(f"The value for the field '{key}' must be {_PATH_OR_CALL}", where)
        else:
            yield from _templates(value, where)


_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")


def rfc3339(text: str) -> bool:
    if not _RFC3339.match(text):
        return False
    try:
        datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _target(target: Any, states: dict[str, Any], at: str) -> Iterator[Diagnostic]:
    if not isinstance(target, str) or target not in states:
        yield _error("MISSING_TRANSITION_TARGET", f"Missing 'Next' target: {target}", at)


def _choice(state: dict[str, Any], at: str, states: dict[str, Any], language: str) -> Iterator[Diagnostic]:
    if "End" in state or "Next" in state:
        yield _schema("A Choice state cannot have 'Next' or 'End'", at)
    choices = state.get("Choices")
    if not isinstance(choices, list) or not choices:
        yield _schema("A Choice state needs a non-empty Choices list", f"{at}/Choices")
        choices = []
    for index, rule in enumerate(choices):
        where = f"{at}/Choices/{index}"
        if not isinstance(rule, dict):
            yield _schema("A choice rule must be a JSON object", where)
            continue
        yield from _target(rule.get("Next"), states, f"{where}/Next")
        if language == "JSONata" and "Variable" in rule:
            yield _schema(
                "Field 'Variable' is not supported in a JSONata state (use Condition)", f"{where}/Variable"
            )
        if language == "JSONPath" and "Condition" in rule:
            yield _schema("Field 'Condition' is not supported in a JSONPath state", f"{where}/Condition")
    if "Default" in state:
        yield from _target(state["Default"], states, f"{at}/Default")


def _error_equals(rule: dict[str, Any], at: str) -> Iterator[Diagnostic]:
    errors = rule.get("ErrorEquals")
    if not isinstance(errors, list) or not errors or not all(isinstance(item, str) for item in errors):
        yield _schema("ErrorEquals must be a non-empty list of error names", f"{at}/ErrorEquals")
    elif "States.ALL" in errors and len(errors) > 1:
        yield _schema("States.ALL must appear alone in ErrorEquals", f"{at}/ErrorEquals")


def _retrier(rule: Any, at: str) -> Iterator[Diagnostic]:
    if not isinstance(rule, dict):
        yield _schema("A retrier must be a JSON object", at)
        return
    for field in sorted(rule.keys() - RETRIER_FIELDS):
        yield _schema(f"Field '{field}' is not supported in a retrier", f"{at}/{field}")
    yield from _error_equals(rule, at)
    checks: tuple[tuple[str, Callable[[Any], bool], str], ...] = (
        ("IntervalSeconds", lambda v: isinstance(v, int) and 1 <= v <= 99_999_999, "a positive integer"),
        ("MaxAttempts", lambda v: isinstance(v, int) and 0 <= v <= 99_999_999, "a non-negative integer"),
        ("BackoffRate", lambda v: isinstance(v, (int, float)) and v >= 1.0, "a number of at least 1.0"),
        ("MaxDelaySeconds", lambda v: isinstance(v, int) and 0 < v < 31_622_401, "a positive integer"),
        ("JitterStrategy", lambda v: v in ("FULL", "NONE"), "FULL or NONE"),
    )
    for field, ok, expected in checks:
        if field in rule and (isinstance(rule[field], bool) or not ok(rule[field])):
            yield _schema(f"{field} must be {expected}, not {rule[field]!r}", f"{at}/{field}")


def _catcher(rule: Any, at: str, states: dict[str, Any]) -> Iterator[Diagnostic]:
    if not isinstance(rule, dict):
        yield _schema("A catcher must be a JSON object", at)
        return
    for field in sorted(rule.keys() - CATCHER_FIELDS):
        yield _schema(f"Field '{field}' is not supported in a catcher", f"{at}/{field}")
    yield from _error_equals(rule, at)
    yield from _target(rule.get("Next"), states, f"{at}/Next")


def _transitions(state: dict[str, Any]) -> Iterator[str]:
    for target in [state.get("Next"), state.get("Default")]:
        if isinstance(target, str):
            yield target
    for rule in _list(state.get("Choices")) + _list(state.get("Catch")):
        if isinstance(rule, dict) and isinstance(rule.get("Next"), str):
            yield rule["Next"]


def _reachability(start: Any, states: dict[str, Any], at: str) -> Iterator[Diagnostic]:
    if not isinstance(start, str) or start not in states:
        return
    seen, todo = {start}, [start]
    while todo:
        state = states[todo.pop()]
        for target in _transitions(state) if isinstance(state, dict) else ():
            if target in states and target not in seen:
                seen.add(target)
                todo.append(target)
    for name in states:
        if name not in seen:  # AWS's wording, quoted in localstack/localstack#11978
            yield _error(
                "MISSING_TRANSITION_TARGET", f'State "{name}" is not reachable.', f"{at}/States/{name}"
            )
    terminal = any(
        isinstance(state, dict) and (state.get("Type") in TERMINAL_TYPES or state.get("End") is True)
        for name, state in states.items()
        if name in seen
    )
    if not terminal:
        yield _error("MISSING_END_STATE", "The workflow has no terminal state", f"{at}/States")


def refusal(diagnostics: list[Diagnostic]) -> str | None:
    """The InvalidDefinition message for the errors among ``diagnostics`` (None if there are none)."""
    errors = [item for item in diagnostics if item.severity == "ERROR"]
    if not errors:
        return None
    listed = ", ".join(
        f"{item.code}: {item.message}" + (f" at {item.location}" if item.location is not None else "")
        for item in errors
    )
    return f"Invalid State Machine Definition: '{listed}'"


def check(definition: str | None) -> None:
    message = refusal(diagnose(definition))
    if message:
        raise InvalidDefinition(message)


# -- the API ------------------------------------------------------------------------------------------


def _validate_state_machine_definition(self: StepFunctionResponse) -> ActionResult:
    found = diagnose(self._get_param("definition"))
    if self._get_param("type") == "EXPRESS":
        try:
            document = json.loads(self._get_param("definition") or "")
        except ValueError:
            document = None
        express = [_schema(message, where) for where, message in executions.express_refusals(document)]
        found = express + found
    if self._get_param("severity") == "WARNING":
        wanted = found
    else:  # the default, ERROR, reports errors only
        wanted = [item for item in found if item.severity == "ERROR"]
    limit = int(self._get_param("maxResults") or 100)
    result = "FAIL" if any(item.severity == "ERROR" for item in found) else "OK"
    return ActionResult(
        {
            "result": result,
            "diagnostics": [item.as_api() for item in wanted[:limit]],
            "truncated": len(wanted) > limit,
        }
    )


_PARSER_ARGS = re.compile(r"^Error=\w+ Args=\[[\"'](?P<reason>.*?)[\"']\] in definition", re.DOTALL)
_PARSER_TOKEN = re.compile(r'^ASLParserException line \d+:\d+, at "(?P<token>[^"]*)"')


def parser_refusal(message: str) -> str:
    """AWS's frame for what moto's ASL parser refused (a check above missed it): the reason without the
    parser's own vocabulary (``ASLParserException line 1:185 ...``, ``Error=ValueError Args=[...]``).
    The location is the definition's root: the parser does not give a JSON pointer."""
    if message.startswith("Invalid State Machine Definition"):
        return message
    if found := _PARSER_ARGS.match(message):
        reason = found["reason"]
    elif found := _PARSER_TOKEN.match(message):
        reason = f'The value "{found["token"]}" is not supported by Step Functions'
    else:
        reason = "The definition is not valid"
    return f"Invalid State Machine Definition: 'SCHEMA_VALIDATION_FAILED: {reason} at /'"


def _validate_definition(definition: str) -> None:
    check(definition)
    try:
        _original_validate_definition(definition)
    except InvalidDefinition as refused:
        raise InvalidDefinition(parser_refusal(str(refused.message))) from None


_original_validate_definition = StepFunctionsParserBackend._validate_definition


def _preprocessor_init(self: Preprocessor) -> None:
    """Each parse keeps its own QueryLanguage scopes. moto's preprocessor kept them in a class attribute, one
    list for every parse in the process: parses at the same time (many clients) mixed their scopes, and a
    parse that failed inside a JSONata scope left it there, so every later JSONPath definition was refused
    ("Unsupported declaration in QueryLanguage=JSONPath block") until a restart. Belongs in moto."""
    super(Preprocessor, self).__init__()
    self._query_language_per_scope = []


def install() -> None:
    Preprocessor.__init__ = _preprocessor_init  # type: ignore[method-assign,assignment]
    StepFunctionResponse.validate_state_machine_definition = _validate_state_machine_definition  # type: ignore[attr-defined]
    StepFunctionsParserBackend._validate_definition = staticmethod(_validate_definition)  # type: ignore[method-assign]
