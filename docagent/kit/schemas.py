"""Reading a class's schema as the checks need it: the sub-schema of a dotted field, the kinds it can hold,
and the keywords a schema uses. Pure functions of the parsed schema (local ``$ref``s into ``$defs`` only)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from functions.checks.fields import SCHEMA_LISTS as _SCHEMA_LISTS
from functions.checks.fields import alternatives as _alternatives

# The keywords whose value is one schema, a list of schemas, or an object of named schemas.
_ONE_SCHEMA = ("items", "not", "additionalProperties")
_NAMED_SCHEMAS = ("properties", "$defs")


def kinds(schema: dict[str, Any], root: dict[str, Any]) -> set[str]:
    """What a field can hold: its JSON types, plus ``amount``/``date`` for strings normalised or formatted so
    (``x-normalise``, ``format: date``)."""
    found: set[str] = set()
    for branch in _alternatives(schema, root):
        declared = branch.get("type")
        found.update(
            [declared] if isinstance(declared, str) else [t for t in declared or [] if isinstance(t, str)]
        )
        if branch.get("x-normalise") == "amount":
            found.add("amount")
        if branch.get("x-normalise") == "date" or branch.get("format") == "date":
            found.add("date")
    return found


def index_step(index: int) -> str:
    """A JSON path's step to a list item: ``[3]`` (built by concatenation: no rich markup tag anywhere)."""
    return "[" + str(index) + "]"


def walk(schema: Any, path: str = "$") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every schema object inside ``schema`` with its JSON path (``$.properties.amount``)."""
    if not isinstance(schema, dict):
        return
    yield path, schema
    for keyword in _ONE_SCHEMA:
        yield from walk(schema.get(keyword), f"{path}.{keyword}")
    for keyword in _SCHEMA_LISTS:
        branches = schema.get(keyword)
        for index, branch in enumerate(branches if isinstance(branches, list) else []):
            yield from walk(branch, f"{path}.{keyword}" + index_step(index))
    for keyword in _NAMED_SCHEMAS:
        named = schema.get(keyword)
        for name, sub in (named if isinstance(named, dict) else {}).items():
            yield from walk(sub, f"{path}.{keyword}.{name}")
