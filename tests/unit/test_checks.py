"""functions/checks/outcomes.py: each rule kind, lookup outcomes, messages, and the outcome's precedence."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from pydantic import JsonValue

from functions.checks.outcomes import decide, lookup_key, lookup_outcome, rule_outcome, run_checks
from functions.definition.job_spec import LookupCheck, RuleCheck
from functions.payloads.model_calls import CheckOutcome, LookupRecord

TODAY = dt.date(2026, 6, 1)
FIELDS: dict[str, JsonValue] = {
    "total": "1234.50",
    "count": 3,
    "kind": "water",
    "policy": "P-0042",
    "filed": "2026-05-01",
    "incident": "2026-04-20",
    "party": {"id": "C-7"},
}


def rule(**spec: Any) -> RuleCheck:
    return RuleCheck.model_validate({"type": "rule", "name": "r", **spec})


@pytest.mark.parametrize(
    ("spec", "passed", "reason"),
    [
        ({"field": "total", "minimum": "100"}, True, None),
        ({"field": "total", "maximum": "1000"}, False, "total 1234.50 is above the maximum 1000"),
        ({"field": "count", "minimum": 4, "maximum": 9}, False, "count 3 is below the minimum 4"),
        ({"field": "kind", "minimum": 1}, False, "kind 'water' is not a number"),
        ({"field": "kind", "one_of": ["water", "fire"]}, True, None),
        ({"field": "kind", "one_of": ["fire"]}, False, "kind 'water' is not one of fire"),
        ({"field": "policy", "pattern": "^P-[0-9]{4}$"}, True, None),
        ({"field": "party.id", "pattern": "^X"}, False, "party.id 'C-7' does not match ^X"),
        ({"field": "filed", "not_after": "today"}, True, None),
        ({"field": "filed", "not_before": "today"}, False, "filed 2026-05-01 is before today (2026-06-01)"),
        ({"field": "incident", "not_after": "filed"}, True, None),
        (
            {"field": "filed", "not_after": "incident"},
            False,
            "filed 2026-05-01 is after incident (2026-04-20)",
        ),
        ({"field": "filed", "not_after": "absent"}, False, "filed cannot be compared: absent is missing"),
        ({"field": "kind", "not_after": "today"}, False, "kind 'water' is not a date (YYYY-MM-DD)"),
        ({"field": "absent", "minimum": 1}, False, "absent is missing"),
        ({"field": "absent", "minimum": 1, "optional": True}, True, None),
    ],
)
def test_rules(spec: dict[str, Any], passed: bool, reason: str | None) -> None:
    check = rule(**spec)
    outcome = rule_outcome(check, FIELDS, TODAY)
    assert (outcome.passed, outcome.type, outcome.on_fail) == (passed, "rule", "review")
    if reason is None:
        assert (outcome.reason, outcome.error) == (None, None)
    else:
        assert str(outcome.reason).startswith(reason)
        assert outcome.error == "CheckFailed"


def test_a_message_names_the_value_and_field() -> None:
    check = rule(
        field="total", maximum=10, on_fail="reject", error="TooExpensive", message="{field}: {value}!"
    )
    outcome = rule_outcome(check, FIELDS, TODAY)
    assert (outcome.passed, outcome.error, outcome.reason) == (False, "TooExpensive", "total: 1234.50!")


def lookup(**spec: Any) -> LookupCheck:
    return LookupCheck.model_validate(
        {"type": "lookup", "name": "known", "field": "party.id", "table": "parties", **spec}
    )


def test_lookups_found_missing_and_without_a_key() -> None:
    check = lookup(message="party {value} is unknown")
    key = lookup_key(check, FIELDS)
    assert key == "C-7"
    found = lookup_outcome(check, key, LookupRecord(table="parties", key="C-7", found=True, row={"n": 1}))
    assert (found.passed, found.type, found.error, found.reason) == (True, "lookup", None, None)
    missing = lookup_outcome(check, key, LookupRecord(table="parties", key="C-7", found=False))
    assert (missing.passed, missing.on_fail, missing.error) == (False, "reject", "NotInReference")
    assert missing.reason == "party C-7 is unknown"
    plain = lookup_outcome(lookup(), key, LookupRecord(table="parties", key="C-7", found=False))
    assert plain.reason == "party.id C-7 is not in the reference table parties"
    assert lookup_key(lookup(field="absent"), FIELDS) is None
    nothing = lookup_outcome(lookup(field="absent"), None, None)
    assert (nothing.passed, nothing.reason) == (False, "absent is missing")


def outcome(name: str, passed: bool, on_fail: str, error: str | None = None) -> CheckOutcome:
    return CheckOutcome.model_validate(
        {"name": name, "type": "rule", "passed": passed, "on_fail": on_fail, "error": error,
         "reason": None if passed else f"{name} failed"}
    )  # fmt: skip


def test_the_outcome_reject_before_review_before_accepted() -> None:
    assert decide([]).status == "extracted"
    assert decide([outcome("a", True, "reject"), outcome("b", True, "review")]).status == "extracted"
    review = decide([outcome("a", False, "review", "Odd"), outcome("b", False, "review", "Late")])
    assert (review.status, review.error, review.reason) == ("review", None, "a failed; b failed")
    rejected = decide(
        [
            outcome("a", False, "review", "Odd"),
            outcome("b", False, "reject", "Bad"),
            outcome("c", False, "reject", "Worse"),
        ]
    )
    assert (rejected.status, rejected.error, rejected.reason) == ("rejected", "Bad", "b failed")


CLAIM: dict[str, JsonValue] = {
    "items": [{"amount": "100.00"}, {"amount": "20.50"}],
    "total": "120.50",
    "start": "2026-01-05",
    "end": "2026-01-04",
}


@pytest.mark.parametrize(
    ("expression", "passed", "reason"),
    [
        ("$sum(items.$number(amount)) = $number(total)", True, None),
        ("$sum(items.$number(amount)) > $number(total)", False, "is false"),
        ("end > start", False, "end > start is false"),
        ("$number(total) <= $number($policy.limit)", True, None),
        ("$number(total) <= $number($policy.excess)", False, "gave no value"),
        ("$count(items)", False, "gave 2, not true or false"),
        ("$number(start)", False, "the expression failed"),
    ],
)
def test_an_expression_rule_reads_every_field_and_the_attached_rows(
    expression: str, passed: bool, reason: str | None
) -> None:
    """#40: a rule compares fields with each other and with what a lookup attached (JSONata)."""
    check = rule(field="total", expression=expression, on_fail="reject", error="TotalsDisagree")
    outcome = rule_outcome(check, CLAIM, TODAY, {"policy": {"limit": "500.00"}})
    assert outcome.passed is passed
    if reason is None:
        assert outcome.reason is None and outcome.error is None
    else:
        assert reason in (outcome.reason or "") and outcome.error == "TotalsDisagree"


def test_an_expression_sees_only_the_lookups_before_it() -> None:
    lookup = LookupCheck.model_validate(
        {"type": "lookup", "name": "known", "field": "total", "table": "policies", "attach": "policy"}
    )
    within = rule(name="within", field="total", expression="$number(total) <= $number($policy.limit)")
    found = LookupRecord(table="policies", key="120.50", found=True, row={"limit": "100.00"})
    outcomes, _ = run_checks([within, lookup, within], CLAIM, TODAY, lambda check, key: found)
    assert [outcome.passed for outcome in outcomes] == [False, True, False]
    assert "gave no value" in (outcomes[0].reason or "") and "is false" in (outcomes[2].reason or "")


def test_an_expression_holds_in_a_warm_container_long_after_it_was_first_evaluated(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """jsonata-python starts an evaluator's 1 s time bound when it is compiled: an evaluator kept between
    documents (a warm Lambda container, the local cloud's workers) failed every rule a second later."""
    from jsonata import timebox  # noqa: PLC0415 (the library's clock, moved on below)

    check = rule(field="total", expression="$sum(items.$number(amount)) = $number(total)")
    assert rule_outcome(check, CLAIM, TODAY, {}).passed
    now = timebox.Timebox.current_milli_time()
    monkeypatch.setattr(timebox.Timebox, "current_milli_time", staticmethod(lambda: now + 60_000))
    assert rule_outcome(check, CLAIM, TODAY, {}).passed  # a minute on: the same rule, the same document
