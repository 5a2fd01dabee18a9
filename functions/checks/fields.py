"""A document's fields against its class's schema (docs/defining-a-job.md, "Fields"): the model's reply read
as one JSON object, each property normalised by its ``x-normalise``, then validated with fastjsonschema; and
the fields as a report row's text.

Knows no class: everything comes from the class's schema in the job's pinned definition bundle.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any, cast

import fastjsonschema
from pydantic import JsonValue

from functions.checks.patterns import linear_patterns
from functions.definition.job_spec import ClassBundle, DefinitionBundle, canonical_json, keyword_values

# A valid reply (one object of a class's fields) is far below this. Anything longer is not an extraction (a
# runaway reply, or a document that talked the model into writing something else).
MAX_REPLY_CHARS = 10_000
# fastjsonschema implements draft-04 to draft-07; the definition allows only keywords that mean the same in
# 2020-12 and draft-07 (functions/definition/job_spec.py SCHEMA_KEYWORDS).
VALIDATION_DIALECT = "http://json-schema.org/draft-07/schema#"
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)
# Date forms the ``date`` normaliser reads, tried in order (day before month where both could be either).
DATE_FORMATS = (
    "%Y-%m-%d", "%Y/%m/%d", "%Y.%m.%d", "%Y%m%d",
    "%d.%m.%Y", "%d/%m/%Y", "%d-%m-%Y", "%m/%d/%Y",
    "%d %B %Y", "%d %b %Y", "%B %d %Y", "%b %d %Y", "%d. %B %Y", "%d %b. %Y", "%b. %d %Y",
)  # fmt: skip


class FieldsInvalid(ValueError):  # noqa: N818 (the fields are invalid; the name reads as the outcome)
    """The reply is not an object of the class's fields; the message names every problem."""


# ----------------------------------------------------------------------------------------------- reply


def parse_reply(reply: str) -> dict[str, Any]:
    """The model's reply as a JSON object (one Markdown code fence tolerated)."""
    if len(reply) > MAX_REPLY_CHARS:
        raise FieldsInvalid(
            f"model reply is too large: {len(reply)} characters, over the limit of {MAX_REPLY_CHARS}"
        )
    text = reply.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    if not text:
        raise FieldsInvalid("model reply is empty")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        where = f"line {error.lineno} column {error.colno}"
        raise FieldsInvalid(f"model reply is not valid JSON ({error.msg} at {where})") from None
    if not isinstance(data, dict):
        raise FieldsInvalid(f"model reply is JSON {type(data).__name__}, not an object")
    return data


# ----------------------------------------------------------------------------------------- normalisers


def normalise_amount(value: Any) -> str:
    """'1,234.56', '1.234,56', "1 234,5", 1234.5 -> '1234.56' (two places)."""
    if isinstance(value, bool):
        raise ValueError("an amount is a number")
    if isinstance(value, (int, float, Decimal)):
        number = Decimal(str(value))
    elif isinstance(value, str):
        text = re.sub(r"[\s\u00a0']", "", value)
        if "," in text and "." in text:
            decimal_sep = "," if text.rfind(",") > text.rfind(".") else "."
            thousands = "." if decimal_sep == "," else ","
            text = text.replace(thousands, "").replace(decimal_sep, ".")
        elif "," in text:
            head, _, tail = text.rpartition(",")
            text = text.replace(",", "") if len(tail) == 3 else f"{head.replace(',', '')}.{tail}"
        if not re.fullmatch(r"-?\d+(\.\d+)?", text):
            raise ValueError(f"amount {value!r} is not a decimal number")
        number = Decimal(text)
    else:
        raise ValueError("an amount is a number or a numeric string")
    try:
        return f"{number.quantize(Decimal('0.01')):.2f}"
    except InvalidOperation:
        raise ValueError(f"amount {value!r} is out of range") from None


def normalise_date(value: Any) -> str:
    """Common date forms (ISO with or without a time, 31.12.2026, 12/31/2026, 5 March 2026) -> YYYY-MM-DD."""
    if not isinstance(value, str):
        raise ValueError("a date is a string")
    text = re.sub(r"\s+", " ", value.strip().replace(",", " ")).strip()
    iso = re.match(r"^(\d{4}-\d{2}-\d{2})[T ]", text)
    if iso:
        text = iso.group(1)
    for form in DATE_FORMATS:
        try:
            return dt.datetime.strptime(text, form).date().isoformat()
        except ValueError:
            continue
    raise ValueError(
        f"date {value!r} is not a date docagent reads (YYYY-MM-DD, DD.MM.YYYY, 5 March 2026, ...)"
    )


def _text(transform: Callable[[str], str]) -> Callable[[Any], Any]:
    return lambda value: transform(value.strip()) if isinstance(value, str) else value


NORMALISE: dict[str, Callable[[Any], Any]] = {
    "amount": normalise_amount,
    "date": normalise_date,
    "upper": _text(str.upper),
    "lower": _text(str.lower),
    "strip": _text(str),
}


def resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with its local ``$ref`` (``#/$defs/NAME``) followed, through references to references (a
    published schema has no other: docagent/kit/schema_refs.py); anything else as it is."""
    seen: set[str] = set()
    while (
        isinstance(schema.get("$ref"), str) and schema["$ref"].startswith("#/") and schema["$ref"] not in seen
    ):
        seen.add(schema["$ref"])
        target: Any = root
        for part in schema["$ref"][2:].split("/"):
            target = target.get(part) if isinstance(target, dict) else None
        if not isinstance(target, dict):
            break
        schema = target
    return schema


SCHEMA_LISTS = ("anyOf", "oneOf", "allOf")  # the keywords whose value is a list of schemas


def alternatives(schema: dict[str, Any], root: dict[str, Any]) -> list[dict[str, Any]]:
    """The schema and the branches of its anyOf/oneOf/allOf (a nullable field is often ``anyOf``)."""
    schema = resolve(schema, root)
    found = [schema]
    for keyword in SCHEMA_LISTS:
        for branch in schema.get(keyword) or []:
            if isinstance(branch, dict):
                found += alternatives(branch, root)
    return found


def field_schema(root: dict[str, Any], field: str) -> dict[str, Any] | None:
    """The sub-schema of a dotted field (``vendor.name``), or None when the schema has no such field."""
    current: list[dict[str, Any]] = [root]
    for part in field.split("."):
        following = [
            branch["properties"][part]
            for schema in current
            for branch in alternatives(schema, root)
            if isinstance(branch.get("properties"), dict) and isinstance(branch["properties"].get(part), dict)
        ]
        if not following:
            return None
        current = following
    return current[0]


def _normalised(
    value: Any, schema: dict[str, Any], root: dict[str, Any], path: str, problems: list[str]
) -> Any:
    schema = resolve(schema, root)
    normaliser = schema.get("x-normalise")
    if isinstance(normaliser, str) and value is not None:
        try:
            value = NORMALISE[normaliser](value)
        except ValueError as error:
            problems.append(f"{path}: {error}")
            return value
    properties = schema.get("properties")
    if isinstance(value, dict) and isinstance(properties, dict):
        return {
            name: _normalised(item, properties[name], root, f"{path}.{name}".lstrip("."), problems)
            if isinstance(properties.get(name), dict)
            else item
            for name, item in value.items()
        }
    items = schema.get("items")
    if isinstance(value, list) and isinstance(items, dict):
        return [_normalised(item, items, root, f"{path}[{i}]", problems) for i, item in enumerate(value)]
    return value


# ------------------------------------------------------------------------------------------ validation


@functools.lru_cache(maxsize=256)
def _validator(schema_json: str) -> Callable[[Any], Any]:
    """A compiled validator, once per distinct schema per container (schemas never change in a bundle)."""
    schema = json.loads(schema_json)
    schema["$schema"] = VALIDATION_DIALECT
    patterns = [value for _, value in keyword_values(schema, "pattern") if isinstance(value, str)]
    # RE2 matches (functions/checks/patterns.py)
    return linear_patterns(fastjsonschema.compile(schema), patterns)


def _validate(value: Any, schema: dict[str, Any]) -> str | None:
    try:
        _validator(canonical_json(schema).decode())(value)
    except fastjsonschema.JsonSchemaValueException as error:
        return str(error.message)
    return None


def _problems(data: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    """Every problem of ``data``: each top-level property validated on its own (fastjsonschema stops at the
    first error), then the object's own rules (required keys, no other keys)."""
    problems: list[str] = []
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    assert isinstance(properties, dict)
    definitions: dict[str, Any] = {key: schema[key] for key in ("$defs", "definitions") if key in schema}
    for name, subschema in properties.items():
        if name in data and isinstance(subschema, dict):
            problem = _validate(data[name], {**subschema, **definitions})
            if problem:
                problems.append(f"{name}: {problem.removeprefix('data ').removeprefix('data.')}")
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    problems += [f"{name}: missing" for name in required or [] if name not in data]
    if schema.get("additionalProperties") is False:
        problems += [f"{name}: not a field of the class" for name in data if name not in properties]
    if not problems:
        whole = _validate(data, schema)
        if whole:
            problems.append(whole)
    return problems


def extracted_fields(reply: str, class_bundle: ClassBundle) -> dict[str, JsonValue]:
    """The reply's fields, normalised and valid for the class's schema, or FieldsInvalid naming every field
    problem."""
    data = parse_reply(reply)
    schema = cast("dict[str, Any]", class_bundle.schema_)
    problems: list[str] = []
    normalised = _normalised(data, schema, schema, "", problems)
    problems += [problem for problem in _problems(normalised, schema) if problem not in problems]
    if problems:
        raise FieldsInvalid("model reply does not match the class's schema: " + "; ".join(problems))
    return cast("dict[str, JsonValue]", normalised)


# ----------------------------------------------------------------------------------------- field paths


MISSING = object()


def field_value(fields: dict[str, JsonValue], path: str) -> Any:
    """The value at a dotted field path (``vendor.name``), or MISSING (absent or null)."""
    value: Any = fields
    for part in path.split("."):
        if not isinstance(value, dict) or value.get(part) is None:
            return MISSING
        value = value[part]
    return value


def as_text(value: Any) -> str | None:
    """A field's value as a report shows it: strings as they are, numbers and booleans as JSON, lists and
    objects as compact JSON; null for a missing value."""
    if value is MISSING or value is None:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def default_columns(class_bundle: ClassBundle) -> list[str]:
    """A class's report columns: its ``columns``, else its schema's top-level fields that are not objects or
    lists."""
    if class_bundle.spec.columns is not None:
        return list(class_bundle.spec.columns)
    properties = class_bundle.schema_.get("properties")
    if not isinstance(properties, dict):
        return []
    return [
        name
        for name, schema in properties.items()
        if not (isinstance(schema, dict) and schema.get("type") in ("object", "array"))
    ]


def row_columns(bundle: DefinitionBundle, class_name: str | None) -> list[str]:
    """The fields a document's report row carries: its class's columns, then those of the fields the
    definition's totals read that its class has (so the report's totals come from the rows alone, and a row
    carries no other class's field); no class: none."""
    if class_name not in bundle.classes:
        return []
    class_bundle = bundle.classes[class_name]
    columns = default_columns(class_bundle)
    for total in bundle.definition.totals:
        columns += [
            name
            for name in (total.sum, total.by)
            if name is not None
            and name not in columns
            and field_schema(class_bundle.schema_, name) is not None
        ]
    return columns


def row_values(fields: dict[str, JsonValue], columns: list[str]) -> dict[str, str | None]:
    return {column: as_text(field_value(fields, column)) for column in columns}
