"""A class's checks on a document's fields (docs/defining-a-job.md, "Checks and outcome"): each rule check
decided here, each lookup check from its reference row (looked up by process_document as a durable step), and
the document's outcome from all of them.

Pure functions of the fields, the checks and the day: the same inputs always give the same outcomes.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from pydantic import JsonValue

from functions.checks.expressions import expression_failure
from functions.checks.fields import MISSING, as_text, field_value
from functions.checks.patterns import matches
from functions.definition.job_spec import Check, LookupCheck, RuleCheck
from functions.payloads.common import DocumentStatus
from functions.payloads.model_calls import CheckOutcome, LookupRecord


def _message(check: RuleCheck | LookupCheck, value: Any, default: str) -> str:
    """The check's ``message`` with ``{value}`` and ``{field}`` filled in, else ``default``."""
    if check.message is None:
        return default
    try:
        return check.message.format(value=as_text(value) or "", field=check.field)
    except (KeyError, IndexError, ValueError):
        return check.message


def _outcome(check: RuleCheck | LookupCheck, value: Any, failure: str | None) -> CheckOutcome:
    return CheckOutcome(
        name=check.name,
        type=check.type,
        passed=failure is None,
        on_fail=check.on_fail,
        error=None if failure is None else check.error,
        reason=None if failure is None else _message(check, value, failure),
    )


def _decimal(value: Any) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        number = Decimal(str(value).strip())
    except InvalidOperation:
        return None
    return number if number.is_finite() else None


def _date(value: Any) -> dt.date | None:
    if not isinstance(value, str):
        return None
    try:
        return dt.date.fromisoformat(value[:10])
    except ValueError:
        return None


def _date_failure(check: RuleCheck, value: Any, fields: dict[str, JsonValue], today: dt.date) -> str | None:
    later = check.not_after is None  # not_before: the day may not be earlier than the limit
    against = check.not_after if check.not_after is not None else check.not_before
    day = _date(value)
    if day is None:
        return f"{check.field} {as_text(value)!r} is not a date (YYYY-MM-DD)"
    if against == "today":
        limit, shown = today, f"today ({today.isoformat()})"
    else:
        other = field_value(fields, str(against))
        found = _date(other) if other is not MISSING else None
        if found is None:
            return f"{check.field} cannot be compared: {against} is missing or not a date"
        limit, shown = found, f"{against} ({found.isoformat()})"
    if later and day < limit:
        return f"{check.field} {day.isoformat()} is before {shown}"
    if not later and day > limit:
        return f"{check.field} {day.isoformat()} is after {shown}"
    return None


def _rule_failure(
    check: RuleCheck, value: Any, fields: dict[str, JsonValue], today: dt.date, attached: dict[str, Any]
) -> str | None:
    if check.expression is not None:
        return expression_failure(check.expression, fields, attached)
    if check.minimum is not None or check.maximum is not None:
        number = _decimal(value)
        if number is None:
            return f"{check.field} {as_text(value)!r} is not a number"
        if check.minimum is not None and number < check.minimum:
            return f"{check.field} {number} is below the minimum {check.minimum}"
        if check.maximum is not None and number > check.maximum:
            return f"{check.field} {number} is above the maximum {check.maximum}"
        return None
    if check.one_of is not None:
        text = as_text(value)
        return (
            None
            if text in check.one_of
            else f"{check.field} {text!r} is not one of {', '.join(check.one_of)}"
        )
    if check.pattern is not None:
        text = as_text(value) or ""
        matched = matches(check.pattern, text)  # RE2: linear in the text (functions/checks/patterns.py)
        return None if matched else f"{check.field} {text!r} does not match {check.pattern}"
    return _date_failure(check, value, fields, today)


def rule_outcome(
    check: RuleCheck,
    fields: dict[str, JsonValue],
    today: dt.date,
    attached: dict[str, dict[str, JsonValue]] | None = None,
) -> CheckOutcome:
    """A rule check on the fields (and, for an expression, the rows earlier lookups attached); a missing (or
    null) field fails it unless the check is ``optional``."""
    value = field_value(fields, check.field)
    if value is MISSING:
        return _outcome(check, None, None if check.optional else f"{check.field} is missing")
    return _outcome(check, value, _rule_failure(check, value, fields, today, attached or {}))


def lookup_key(check: LookupCheck, fields: dict[str, JsonValue]) -> str | None:
    """The key a lookup check looks up: its field's value as text (None: the field is missing)."""
    value = field_value(fields, check.field)
    return None if value is MISSING else as_text(value)


def lookup_outcome(check: LookupCheck, key: str | None, record: LookupRecord | None) -> CheckOutcome:
    """A lookup check, from the row found (``record``; None when the field was missing, nothing looked up)."""
    if key is None or record is None:
        return _outcome(check, None, f"{check.field} is missing")
    failure = None if record.found else f"{check.field} {key} is not in the reference table {check.table}"
    return _outcome(check, key, failure)


@dataclass(frozen=True)
class Decision:
    """A document's outcome from its checks."""

    status: DocumentStatus
    error: str | None = None
    reason: str | None = None


def decide(outcomes: list[CheckOutcome]) -> Decision:
    """Any failed check with on_fail "reject": rejected, with the first such check's error and reason; else
    any failed "review" check: review, with their reasons; else extracted (accepted)."""
    failed = [outcome for outcome in outcomes if not outcome.passed]
    rejecting = [outcome for outcome in failed if outcome.on_fail == "reject"]
    if rejecting:
        return Decision("rejected", rejecting[0].error, rejecting[0].reason)
    if failed:
        return Decision("review", None, "; ".join(str(outcome.reason) for outcome in failed))
    return Decision("extracted")


def run_checks(
    checks: list[Check],
    fields: dict[str, JsonValue],
    today: dt.date,
    lookup: Callable[[LookupCheck, str], LookupRecord],
) -> tuple[list[CheckOutcome], dict[str, dict[str, JsonValue]]]:
    """Every check in order, and the rows lookups found by their ``attach`` name. ``lookup`` reads a reference
    row (process_document: as the durable step lookup-{check})."""
    outcomes: list[CheckOutcome] = []
    attached: dict[str, dict[str, JsonValue]] = {}
    for check in checks:
        if isinstance(check, RuleCheck):
            outcomes.append(rule_outcome(check, fields, today, attached))
            continue
        key = lookup_key(check, fields)
        record = None if key is None else lookup(check, key)
        outcomes.append(lookup_outcome(check, key, record))
        if record is not None and record.row is not None and check.attach is not None:
            attached[check.attach] = record.row
    return outcomes, attached
