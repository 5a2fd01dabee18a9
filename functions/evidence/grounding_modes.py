"""How each field is held to its quote (docs/design.md, "Evidence and confidence", "Grounding modes"): a
property's ``x-grounding`` (``verbatim``, ``support``, ``none``), else its parent's, else a default by its
type: ``support`` for a boolean, for free text and for a number described as computed, ``verbatim`` for
everything else.

Pure functions of the schema: functions/evidence/grounding.py grades each field by its mode, ``definition
validate`` (docagent/kit/grounding_notes.py) names the fields graded ``support`` by default.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, get_args

from functions.payloads.evidence import GroundingMode

GROUNDING_KEYWORD = "x-grounding"
MODES: tuple[GroundingMode, ...] = get_args(GroundingMode)
# A string that may be longer than this is free text: longer than any name, id or e-mail address (RFC 5321
# 4.5.3.1.3 caps a path at 256 octets with its angle brackets, so an address at 254, the bound an e-mail
# field is given; looked up 2026-12-07).
FREE_TEXT_LENGTH = 255
# A field named or described with one of these words is written by the model rather than read.
DERIVED_WORDS = re.compile(
    r"\b(summar(?:y|ies|ise|ize|ised|ized|ising|izing)|explain\w*|explanation|reasons?|reasoning|rationale"
    r"|justif\w*)\b",
    re.IGNORECASE,
)
# A number named or described with one of these is computed by the model (years of experience from two
# dates, the items it counted) rather than printed, so its quote supports it and its value is not read
# from it. Not "estimate": an estimate's figures are printed.
COMPUTED_WORDS = re.compile(
    r"\b(comput\w*|calculat\w*|counted|counting|derived?|deduced?|inferred)\b",
    re.IGNORECASE,
)
_READ_AS = {"date", "amount"}  # normalisers that read the value from the text: a value the document prints


def _types(schema: dict[str, Any]) -> set[str]:
    """The schema's types but null."""
    given = schema.get("type")
    named = [given] if isinstance(given, str) else given if isinstance(given, list) else []
    return {str(kind) for kind in named} - {"null"}


def default_mode(schema: dict[str, Any], name: str = "") -> tuple[GroundingMode, str | None]:
    """A property's mode by its type and why, when it is not ``verbatim``: ``name`` is the field's name."""
    types = _types(schema)
    if types == {"boolean"}:
        return "support", "a yes/no judgement"
    said = f"{name.replace('_', ' ')} {schema.get('description') or ''}"
    if types and types <= {"integer", "number"} and not _fixed(schema) and COMPUTED_WORDS.search(said):
        return "support", "a computed number"
    if types != {"string"} or _fixed(schema):
        return "verbatim", None
    if schema.get("x-normalise") in _READ_AS:
        return "verbatim", None
    bound = schema.get("maxLength")
    if (isinstance(bound, int) and bound > FREE_TEXT_LENGTH) or DERIVED_WORDS.search(said):
        return "support", "free text"
    return "verbatim", None


def _fixed(schema: dict[str, Any]) -> bool:
    """A value of a given form: a format, a pattern, a list of allowed values."""
    return any(key in schema for key in ("format", "pattern", "enum", "const"))


def grounding_mode(schema: dict[str, Any], name: str = "") -> GroundingMode:
    """A property's mode: its ``x-grounding`` (the parent's, when functions/evidence/grounding.py ``leaves``
    passed it down), else its default."""
    said = schema.get(GROUNDING_KEYWORD)
    if isinstance(said, str) and said in MODES:
        return said
    return default_mode(schema, name)[0]


def name_of(path: str) -> str:
    """A field path's own name (``items[0].summary`` -> ``summary``; ``tags[1]`` -> ``tags``)."""
    return re.sub(r"\[\d*\]", "", path.rsplit(".", 1)[-1])


def defaulted(schema: dict[str, Any], path: str = "") -> Iterator[tuple[str, GroundingMode, str]]:
    """Each field of a class's schema (a dotted path, ``[]`` for a list's items) without an ``x-grounding``
    of its own or its parents' that its default grades other than ``verbatim``, with its mode and why."""
    if GROUNDING_KEYWORD in schema:
        return
    properties = schema.get("properties")
    if isinstance(properties, dict):
        for name, sub in properties.items():
            if isinstance(sub, dict):
                yield from defaulted(sub, f"{path}.{name}".lstrip("."))
    items = schema.get("items")
    if isinstance(items, dict):
        yield from defaulted(items, f"{path}[]")
    if path and not isinstance(properties, dict) and not isinstance(items, dict):
        mode, why = default_mode(schema, name_of(path))
        if why is not None:
            yield path, mode, why


def needs_quote(schema: dict[str, Any], name: str = "", mode: GroundingMode | None = None) -> bool:
    """Whether the model must quote the text a field's value comes from (functions/inference/evidence.py):
    a field not read ``verbatim`` (summarised or judged: ``support``; ``none``), or an enum or a constant,
    which names a kind the text need not spell. Any other value is found on its page by the grounding itself
    (functions/evidence/grounding.py ``locate_value``), so the model gives its page only."""
    mode = mode or grounding_mode(schema, name)
    return mode != "verbatim" or any(key in schema for key in ("enum", "const"))


def quoted_paths(schema: dict[str, Any], path: str = "") -> Iterator[str]:
    """Each field of a class's schema (a dotted path, ``[]`` for a list's items) the model must quote
    (``needs_quote``), an object's or a list's ``x-grounding`` passed down to its parts that do not say
    theirs (as functions/evidence/grounding.py ``leaves`` does)."""

    def passed(sub: dict[str, Any]) -> dict[str, Any]:
        if GROUNDING_KEYWORD in schema and GROUNDING_KEYWORD not in sub:
            return {**sub, GROUNDING_KEYWORD: schema[GROUNDING_KEYWORD]}
        return sub

    properties = schema.get("properties")
    items = schema.get("items")
    if isinstance(properties, dict):
        for name, sub in properties.items():
            if isinstance(sub, dict):
                yield from quoted_paths(passed(sub), f"{path}.{name}".lstrip("."))
    elif isinstance(items, dict):
        yield from quoted_paths(passed(items), f"{path}[]")
    elif path and needs_quote(schema, name_of(path)):
        yield path


def schema_path(path: str) -> str:
    """A value's path as its schema names it: ``line_items[0].amount`` -> ``line_items[].amount``."""
    return re.sub(r"\[\d+\]", "[]", path)
