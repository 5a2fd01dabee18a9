"""``variableReferences`` of DescribeStateMachine and DescribeStateMachineForExecution.

AWS API reference "DescribeStateMachine" (looked up 2026-12-04): "A map of state name to a list of variables
referenced by that state. States that do not use variable references will not be shown in the response."
As recorded on AWS in LocalStack's AWS-validated snapshot test_sfn_api_variable_references (read
2026-12-04): a state nested in a Map is named by its own name; a reference is a ``$name`` read by a JSONPath
field (``.$`` fields, ``*Path`` fields, a Choice rule's ``Variable``, intrinsic functions' arguments outside
their quoted strings), never ``$``/``$$``; a plain string (``"$bucket"`` without ``.$``) references nothing;
a machine without references has no ``variableReferences``. Each list is sorted (the recording sorts them;
AWS's own order is not recorded).
"""

from __future__ import annotations

import re
from typing import Any

_NESTED = ("ItemProcessor", "Iterator", "Branches")
_QUOTED = re.compile(r"'(?:\\.|[^'\\])*'")
_JSONPATH_VARIABLE = re.compile(r"(?<![$\w])\$([A-Za-z_]\w*)")
_JSONATA = re.compile(r"^\s*\{%(.*)%\}\s*$", re.DOTALL)
_JSONATA_VARIABLE = re.compile(r"(?<![$\w])\$([A-Za-z_]\w*)(?!\w|\s*\()")


def _read(value: str, jsonpath: bool, found: set[str]) -> None:
    jsonata = _JSONATA.match(value)
    if jsonata:
        found.update(name for name in _JSONATA_VARIABLE.findall(jsonata.group(1)) if name != "states")
    elif jsonpath:
        found.update(_JSONPATH_VARIABLE.findall(_QUOTED.sub("", value)))


def _scan(value: Any, key: str, found: set[str]) -> None:
    if isinstance(value, dict):
        for name, item in value.items():
            if name not in _NESTED:
                _scan(item, name, found)
    elif isinstance(value, list):
        for item in value:
            _scan(item, key, found)
    elif isinstance(value, str):
        _read(value, key.endswith(".$") or key.endswith("Path") or key == "Variable", found)


def _states(states: Any, references: dict[str, list[str]]) -> None:
    for name, state in (states or {}).items() if isinstance(states, dict) else []:
        if not isinstance(state, dict):
            continue
        found: set[str] = set()
        _scan(state, "", found)
        if found:
            references[name] = sorted(found)
        for nested in ("ItemProcessor", "Iterator"):
            if isinstance(state.get(nested), dict):
                _states(state[nested].get("States"), references)
        for branch in state.get("Branches") or []:
            if isinstance(branch, dict):
                _states(branch.get("States"), references)


def variable_references(definition: Any) -> dict[str, list[str]]:
    """Each state's referenced variables (empty: the machine references none)."""
    references: dict[str, list[str]] = {}
    if isinstance(definition, dict):
        _states(definition.get("States"), references)
    return references
