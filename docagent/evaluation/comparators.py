"""Compare a document's extracted JSON with its label, field by field, with comparators from the schema.

The comparator of a field comes from its JSON Schema: ``enum`` -> enum; ``string`` with ``format`` date or
date-time -> date; ``number``/``integer`` -> number (equal unless a tolerance is set); ``boolean`` -> exact;
``string`` -> normalised text (case, spaces and punctuation ignored); objects field by field; arrays item by
item after matching the items by best assignment (scipy's ``linear_sum_assignment`` on the items'
similarity). A field's ``x-comparator`` object overrides it, e.g. ``{"type": "number", "abs_tol": 0.01}``,
``{"type": "fuzzy", "threshold": 0.8}`` (rapidfuzz's normalised Indel ratio; default threshold 0.85),
``{"type": "exact"}``, ``{"type": "date", "dayfirst": true}``; on an array, ``{"threshold": 0.5}`` (the
default) is the least similarity of two items that are paired. ``x-weight`` (default 1) weighs a field in
a document's score.

Null, a missing key and an empty string are all "no value".
"""

from __future__ import annotations

import datetime as dt
import string
import unicodedata
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from docagent.evaluation.figures import FieldOutcome, Outcome

ComparatorType = Literal["exact", "text", "number", "date", "enum", "fuzzy"]
Schema = dict[str, Any]  # a JSON Schema node: JSON, not a model of ours
DEFAULT_LIST_THRESHOLD = 0.5
DEFAULT_FUZZY_THRESHOLD = 0.85


class ComparatorSpec(BaseModel):
    """A field's ``x-comparator`` (every key optional: unset ones come from the schema)."""

    model_config = ConfigDict(extra="forbid")

    type: ComparatorType | None = None
    abs_tol: float = Field(0.0, ge=0, description="number: |a - b| <= abs_tol")
    rel_tol: float = Field(0.0, ge=0, description="number: |a - b| <= rel_tol * |label|")
    threshold: float | None = Field(
        None, ge=0, le=1, description="fuzzy: least ratio (0.85); array: least item similarity (0.5)"
    )
    dayfirst: bool = Field(False, description="date: 03.04.2026 is 3 April")


class SchemaError(ValueError):
    """The schema cannot be compared with (an unknown $ref, a bad x-comparator)."""


def resolve(node: Schema, root: Schema) -> Schema:
    """``node`` with its ``$ref`` followed (local refs: #/$defs/NAME or #/definitions/NAME), a nullable
    union (anyOf/oneOf) reduced to its first non-null branch and a list of types (``["string", "null"]``)
    to its first non-null type; the node's own keys (x-comparator, x-weight) win over the branch's."""
    resolved = _followed(node, root)
    kind = resolved.get("type")
    if isinstance(kind, list):
        concrete = [name for name in kind if name != "null"]
        return {**resolved, "type": concrete[0] if concrete else "null"}
    return resolved


def _followed(node: Schema, root: Schema) -> Schema:
    own = {key: value for key, value in node.items() if key not in {"$ref", "anyOf", "oneOf"}}
    if "$ref" in node:
        ref = str(node["$ref"])
        parts = ref.removeprefix("#/").split("/")
        target: Any = root
        for part in parts:
            if not isinstance(target, dict) or part not in target:
                raise SchemaError(f"the schema's $ref {ref!r} points nowhere")
            target = target[part]
        return {**resolve(target, root), **own}
    for union in ("anyOf", "oneOf"):
        branches = [b for b in node.get(union, []) if isinstance(b, dict) and b.get("type") != "null"]
        if branches:
            return {**resolve(branches[0], root), **own}
    return node


def check_schema(root: Schema) -> None:
    """Every $ref and x-comparator of the schema, checked before anything runs (SchemaError names the first
    problem and where it is)."""

    def visit(node: Any, path: str, depth: int) -> None:
        if not isinstance(node, dict) or depth > 32:  # a recursive schema is checked 32 levels deep
            return
        node = resolve(node, root)
        spec_of(node, path or "(root)")
        for name, child in dict(node.get("properties", {})).items():
            visit(child, f"{path}.{name}" if path else name, depth + 1)
        if "items" in node:
            visit(node["items"], f"{path}[]", depth + 1)

    visit(root, "", 0)


def spec_of(node: Schema, path: str) -> ComparatorSpec:
    raw = node.get("x-comparator", {})
    try:
        return ComparatorSpec.model_validate(raw)
    except ValueError as error:
        raise SchemaError(f"{path}: x-comparator {raw!r} is invalid: {error}") from None


def comparator_type(node: Schema, spec: ComparatorSpec) -> ComparatorType:
    if spec.type is not None:
        return spec.type
    kind = node.get("type")
    if "enum" in node or "const" in node:
        return "enum"
    if kind == "string" and node.get("format") in {"date", "date-time"}:
        return "date"
    if kind in {"number", "integer"}:
        return "number"
    if kind == "string":
        return "text"
    return "exact"


# ------------------------------------------------------------------------------------------ scalars


def is_none(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


_PUNCTUATION = {ord(c): " " for c in string.punctuation}


def normalise_text(value: Any) -> str:
    """Case-folded, punctuation (ASCII and Unicode) as spaces, runs of spaces as one."""
    text = unicodedata.normalize("NFKC", str(value)).casefold().translate(_PUNCTUATION)
    text = "".join(" " if unicodedata.category(c).startswith("P") else c for c in text)
    return " ".join(text.split())


def _number(value: Any) -> Decimal | None:
    if isinstance(value, bool):
        return None
    try:
        return Decimal(str(value).replace(",", "").replace(" ", "").strip())
    except InvalidOperation:
        return None


def _date(value: Any, dayfirst: bool) -> dt.date | None:
    from dateutil import parser

    text = str(value).strip()
    try:
        return dt.date.fromisoformat(text[:10])
    except ValueError:
        pass
    try:
        parsed: dt.datetime = parser.parse(text, dayfirst=dayfirst)
        return parsed.date()
    except (ValueError, OverflowError):
        return None


def _fuzzy(a: Any, b: Any) -> float:
    from rapidfuzz import fuzz

    return float(fuzz.ratio(normalise_text(a), normalise_text(b))) / 100


def similarity(kind: ComparatorType, spec: ComparatorSpec, expected: Any, extracted: Any) -> float:
    """How alike two values are, in [0, 1]; 1 for every comparator but fuzzy means "the same"."""
    if kind == "number":
        a, b = _number(expected), _number(extracted)
        if a is None or b is None:
            return float(str(expected) == str(extracted))
        tolerance = max(Decimal(str(spec.abs_tol)), Decimal(str(spec.rel_tol)) * abs(a))
        return 1.0 if abs(a - b) <= tolerance else 0.0
    if kind == "date":
        da, db = _date(expected, spec.dayfirst), _date(extracted, spec.dayfirst)
        return float(da is not None and da == db)
    if kind == "text":
        return float(normalise_text(expected) == normalise_text(extracted))
    if kind == "enum":
        return float(str(expected).strip().casefold() == str(extracted).strip().casefold())
    if kind == "fuzzy":
        return _fuzzy(expected, extracted)
    return float(expected == extracted)


def is_match(kind: ComparatorType, spec: ComparatorSpec, score: float) -> bool:
    if kind == "fuzzy":
        return score >= (DEFAULT_FUZZY_THRESHOLD if spec.threshold is None else spec.threshold)
    return score >= 1.0


# ------------------------------------------------------------------------------------------ structures


class Comparison:
    """Compares two JSON documents under one schema (its $defs resolved against ``root``)."""

    def __init__(self, root: Schema) -> None:
        self.root = root

    def compare(self, expected: Any, extracted: Any) -> list[FieldOutcome]:
        return self._node(self.root, expected, extracted, "", 1.0)

    def _node(
        self, node: Schema, expected: Any, extracted: Any, path: str, weight: float
    ) -> list[FieldOutcome]:
        node = resolve(node, self.root)
        weight *= float(node.get("x-weight", 1.0))
        if node.get("type") == "object" or "properties" in node:
            return self._object(node, expected, extracted, path, weight)
        if node.get("type") == "array":
            return self._array(node, expected, extracted, path, weight)
        return [self._leaf(node, expected, extracted, path or "(value)", weight)]

    def _object(
        self, node: Schema, expected: Any, extracted: Any, path: str, weight: float
    ) -> list[FieldOutcome]:
        mine = expected if isinstance(expected, dict) else {}
        theirs = extracted if isinstance(extracted, dict) else {}
        outcomes: list[FieldOutcome] = []
        for name, child in dict(node.get("properties", {})).items():
            child_path = f"{path}.{name}" if path else name
            outcomes += self._node(child, mine.get(name), theirs.get(name), child_path, weight)
        return outcomes

    def _array(
        self, node: Schema, expected: Any, extracted: Any, path: str, weight: float
    ) -> list[FieldOutcome]:
        items = dict(node.get("items", {}))
        mine = list(expected) if isinstance(expected, list) else []
        theirs = list(extracted) if isinstance(extracted, list) else []
        item_path = f"{path}[]"

        def pair(a: Any, b: Any) -> list[FieldOutcome]:
            return self._node(items, a, b, item_path, weight)

        threshold = spec_of(node, path).threshold
        threshold = DEFAULT_LIST_THRESHOLD if threshold is None else threshold
        outcomes: list[FieldOutcome] = []
        paired_mine: set[int] = set()
        paired_theirs: set[int] = set()
        for i, j in best_assignment(mine, theirs, lambda a, b: item_similarity(pair(a, b)), threshold):
            outcomes += pair(mine[i], theirs[j])
            paired_mine.add(i)
            paired_theirs.add(j)
        for i, item in enumerate(mine):
            if i not in paired_mine:
                outcomes += pair(item, None)
        for j, item in enumerate(theirs):
            if j not in paired_theirs:
                outcomes += pair(None, item)
        return outcomes

    def _leaf(self, node: Schema, expected: Any, extracted: Any, path: str, weight: float) -> FieldOutcome:
        spec = spec_of(node, path)
        kind = comparator_type(node, spec)
        outcome: Outcome
        score = 0.0
        if is_none(expected) and is_none(extracted):
            outcome, score = "absent", 1.0
        elif is_none(extracted):
            outcome = "missing"
        elif is_none(expected):
            outcome = "extra"
        else:
            score = similarity(kind, spec, expected, extracted)
            outcome = "match" if is_match(kind, spec, score) else "wrong"
        return FieldOutcome(
            path=path,
            outcome=outcome,
            comparator=kind,
            expected=_json(expected),
            extracted=_json(extracted),
            score=round(score, 4),
            weight=weight,
        )


def item_similarity(outcomes: list[FieldOutcome]) -> float:
    """Two list items' similarity: the mean score of the fields either has (1.0 when neither has any)."""
    compared = [o for o in outcomes if o.outcome != "absent"]
    return sum(o.score for o in compared) / len(compared) if compared else 1.0


def best_assignment(
    mine: list[Any], theirs: list[Any], similar: Callable[[Any, Any], float], threshold: float
) -> list[tuple[int, int]]:
    """The pairs (label item, extracted item) of the assignment with the greatest total similarity (scipy's
    Hungarian solver; the lists may differ in length); pairs less similar than ``threshold`` stay unpaired."""
    if not mine or not theirs:
        return []
    from scipy.optimize import linear_sum_assignment

    scores = [[similar(a, b) for b in theirs] for a in mine]
    rows, columns = linear_sum_assignment(scores, maximize=True)
    return [
        (int(i), int(j)) for i, j in zip(rows, columns, strict=True) if scores[int(i)][int(j)] >= threshold
    ]


def _json(value: Any) -> JsonValue:
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, list):
        return [_json(item) for item in value]
    if isinstance(value, dict):
        return {str(key): _json(item) for key, item in value.items()}
    return str(value)
