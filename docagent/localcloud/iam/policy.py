"""IAM policy documents evaluated as AWS evaluates them, for the local cloud's authorization (enforcement.py).

A statement applies to a request when its ``Action`` (or ``NotAction``), ``Resource`` (or ``NotResource``),
``Principal`` (resource-based policies) and every ``Condition`` match. Within one account a request is allowed
when an identity-based or a resource-based policy allows it and no policy denies it explicitly (AWS "Policy
evaluation logic", looked up 2026-12-07). Wildcards: ``*`` and ``?``; actions match without regard to case,
resources with it.

Conditions: the String, Arn, Bool, Null and Numeric operator families, their ``...IfExists`` forms and the
``ForAnyValue:``/``ForAllValues:`` set qualifiers. A key absent from the request context fails a positive
operator and satisfies a negated one (``StringNotEquals``, ``ArnNotLike``), except ``...IfExists``
(satisfied) and ``Null`` (it tests the absence): AWS "IAM JSON policy elements: Condition operators",
looked up 2026-12-07. An operator outside these is refused (``UnsupportedConditionError``), never
silently taken as matched.
"""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

# Request context keys and their values (lower-cased keys: condition keys match without regard to case).
Context = Mapping[str, tuple[str, ...]]


class Decision(enum.Enum):
    ALLOW = "allow"
    DENY = "deny"  # an explicit Deny statement applied
    NONE = "none"  # no statement applied: an implicit deny unless another policy allows


class UnsupportedConditionError(ValueError):
    """A policy's condition uses an operator the local evaluation does not implement."""


@functools.lru_cache(maxsize=4096)
def _glob(pattern: str, ignore_case: bool) -> re.Pattern[str]:
    parts = (".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.compile("".join(parts), re.IGNORECASE | re.DOTALL if ignore_case else re.DOTALL)


def matches(pattern: str, value: str, *, ignore_case: bool = False) -> bool:
    """``value`` matched by an IAM pattern with ``*`` (any run) and ``?`` (one character)."""
    if "*" not in pattern and "?" not in pattern:
        return pattern.lower() == value.lower() if ignore_case else pattern == value
    return _glob(pattern, ignore_case).fullmatch(value) is not None


def _any_of(patterns: list[Any], *, ignore_case: bool) -> re.Pattern[str] | None:
    """One expression matching any of ``patterns`` (None: no pattern, nothing matches)."""
    if not patterns:
        return None
    parts = (
        "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in str(p)) for p in patterns
    )
    return re.compile(
        "|".join(f"(?:{part})" for part in parts), re.DOTALL | (re.IGNORECASE if ignore_case else 0)
    )


def _arn_matches(pattern: str, value: str) -> bool:
    """ArnLike: each of the six colon-separated parts matched on its own (the last may hold colons)."""
    pattern_parts, value_parts = pattern.split(":", 5), value.split(":", 5)
    if len(pattern_parts) != len(value_parts):
        return False
    return all(matches(p, v) for p, v in zip(pattern_parts, value_parts, strict=True))


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else [value]


def _text(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def _numeric(compare: Callable[[float, float], bool]) -> Callable[[str, str], bool]:
    def test(value: str, expected: str) -> bool:
        try:
            return compare(float(value), float(expected))
        except ValueError:
            return False

    return test


# Each operator's positive test of one context value against one policy value; negated operators are the
# positive one's complement over all policy values (a value matching none of them).
_TESTS: dict[str, tuple[Callable[[str, str], bool], bool]] = {
    "stringequals": (lambda v, e: v == e, False),
    "stringnotequals": (lambda v, e: v == e, True),
    "stringequalsignorecase": (lambda v, e: v.lower() == e.lower(), False),
    "stringnotequalsignorecase": (lambda v, e: v.lower() == e.lower(), True),
    "stringlike": (lambda v, e: matches(e, v), False),
    "stringnotlike": (lambda v, e: matches(e, v), True),
    "arnequals": (lambda v, e: _arn_matches(e, v), False),
    "arnlike": (lambda v, e: _arn_matches(e, v), False),
    "arnnotequals": (lambda v, e: _arn_matches(e, v), True),
    "arnnotlike": (lambda v, e: _arn_matches(e, v), True),
    "bool": (lambda v, e: v.lower() == e.lower(), False),
    "numericequals": (_numeric(lambda v, e: v == e), False),
    "numericnotequals": (_numeric(lambda v, e: v == e), True),
    "numericlessthan": (_numeric(lambda v, e: v < e), False),
    "numericlessthanequals": (_numeric(lambda v, e: v <= e), False),
    "numericgreaterthan": (_numeric(lambda v, e: v > e), False),
    "numericgreaterthanequals": (_numeric(lambda v, e: v >= e), False),
}


def _condition_holds(operator: str, key: str, expected: Sequence[str], context: Context) -> bool:
    qualifier, _, name = operator.rpartition(":")
    name = name.lower()
    values = context.get(key.lower())
    if name == "null":  # "true": the key is absent; "false": it is present
        return any((values is None) == (e.lower() == "true") for e in expected)
    if_exists = name.endswith("ifexists")
    if if_exists:
        name = name[: -len("ifexists")]
    if name not in _TESTS:
        raise UnsupportedConditionError(f"condition operator {operator!r} is not evaluated locally")
    test, negated = _TESTS[name]

    def one(value: str) -> bool:
        hit = any(test(value, e) for e in expected)
        return not hit if negated else hit

    if values is None:
        if qualifier.lower() == "forallvalues":
            return True
        return if_exists or (negated and not qualifier)
    if qualifier.lower() == "forallvalues":
        return all(one(v) for v in values)
    return any(one(v) for v in values)


def conditions_hold(condition: Mapping[str, Any], context: Context) -> bool:
    """Every operator's every key holds (AND); within a key, any of its values (OR)."""
    for operator, keys in condition.items():
        for key, expected in keys.items():
            if not _condition_holds(operator, key, [_text(e) for e in _as_list(expected)], context):
                return False
    return True


@dataclass(frozen=True)
class Principal:
    """Who makes a request: a role's session (``assumed-role/ROLE/SESSION``), or a service."""

    arn: str  # arn:aws:sts::ACCOUNT:assumed-role/ROLE/SESSION
    role_arn: str
    account: str
    service: str | None = None  # bedrock.amazonaws.com, ...


def _principal_matches(element: Any, principal: Principal) -> bool:
    if element == "*":
        return True
    for kind, values in dict(element).items():
        for named in map(str, _as_list(values)):
            if kind == "AWS" and named in ("*", principal.account, f"arn:aws:iam::{principal.account}:root"):
                return True
            if kind == "AWS" and named in (principal.role_arn, principal.arn):
                return True
            if kind == "Service" and named == principal.service:
                return True
    return False


@dataclass(frozen=True)
class Statement:
    effect: str
    sid: str
    document: Mapping[str, Any] = field(hash=False, compare=False)

    @functools.cached_property
    def _patterns(self) -> tuple[re.Pattern[str] | None, bool, re.Pattern[str] | None, bool]:
        """(actions, negated, resources, negated): each element's patterns as one expression (None: the
        statement has no Resource element, as a trust policy)."""
        doc = self.document
        actions = doc.get("NotAction", doc.get("Action", []))
        resources = doc.get("NotResource", doc.get("Resource"))
        return (
            _any_of(_as_list(actions), ignore_case=True),
            "NotAction" in doc,
            None if resources is None else _any_of(_as_list(resources), ignore_case=False),
            "NotResource" in doc,
        )

    def applies(self, action: str, resource: str, context: Context, principal: Principal | None) -> bool:
        doc = self.document
        actions, not_action, resources, not_resource = self._patterns
        if (actions is not None and actions.fullmatch(action) is not None) is not_action:
            return False
        if resources is not None and (resources.fullmatch(resource) is not None) is not_resource:
            return False
        if (
            principal is not None
            and "Principal" in doc
            and not _principal_matches(doc["Principal"], principal)
        ):
            return False
        if (
            principal is not None
            and "NotPrincipal" in doc
            and _principal_matches(doc["NotPrincipal"], principal)
        ):
            return False
        return conditions_hold(doc.get("Condition") or {}, context)


@dataclass(frozen=True)
class Policy:
    """One policy document (identity- or resource-based), its statements read once."""

    name: str
    statements: tuple[Statement, ...]

    @classmethod
    def parse(cls, name: str, document: Mapping[str, Any]) -> Policy:
        statements = tuple(
            Statement(str(s.get("Effect", "Deny")), str(s.get("Sid", "")), s)
            for s in _as_list(document.get("Statement", []))
        )
        return cls(name, statements)


def evaluate(
    policies: Iterable[Policy],
    action: str,
    resource: str,
    context: Context,
    principal: Principal | None = None,
) -> Decision:
    """DENY when a Deny statement applies, else ALLOW when an Allow one does, else NONE. ``principal``: the
    caller, for resource-based policies (their statements name who they apply to)."""
    allowed = False
    for policy in policies:
        for statement in policy.statements:
            if statement.applies(action, resource, context, principal):
                if statement.effect == "Deny":
                    return Decision.DENY
                allowed = allowed or statement.effect == "Allow"
    return Decision.ALLOW if allowed else Decision.NONE
