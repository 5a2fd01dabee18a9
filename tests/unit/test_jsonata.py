"""JSONata in the local cloud: a sample of JSONata's own test suite, and the Step Functions functions
with the examples of AWS "Transforming data with JSONata in Step Functions" (as of 2026-11)."""

from __future__ import annotations

import hashlib
import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from docagent.localcloud.stepfunctions.jsonata_functions import UNDEFINED, QueryEvaluationError, evaluate

SAMPLE = json.loads((Path(__file__).parent / "fixtures" / "jsonata_suite_sample.json").read_text())


def _same(got: Any, expected: Any) -> bool:
    if isinstance(expected, float) or isinstance(got, float):
        return isinstance(got, (int, float)) and abs(got - expected) < 1e-9
    if isinstance(expected, list):
        return isinstance(got, list) and len(got) == len(expected) and all(map(_same, got, expected))
    if isinstance(expected, dict):
        return (
            isinstance(got, dict)
            and got.keys() == expected.keys()
            and all(_same(got[k], expected[k]) for k in expected)
        )
    return bool(got == expected and type(got) is type(expected))


@pytest.mark.parametrize("case", SAMPLE["cases"], ids=[case["case"] for case in SAMPLE["cases"]])
def test_jsonata_suite_sample(case: dict[str, Any]) -> None:
    """jsonata-js test/test-suite (every 25th case): result, undefinedResult or an error code."""
    data = case["data"] if "data" in case else SAMPLE["datasets"].get(case.get("dataset") or "", None)
    if "code" in case or "error" in case:
        with pytest.raises(QueryEvaluationError):
            evaluate(case["expr"], case.get("bindings") or {}, data)
        return
    got = evaluate(case["expr"], case.get("bindings") or {}, data)
    if case.get("undefinedResult"):
        assert got is UNDEFINED
    else:
        assert _same(got, case["result"]), got


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("$partition([1, 2, 3, 4, 5, 6, 7, 8, 9], 3)", [[1, 2, 3], [4, 5, 6], [7, 8, 9]]),
        ("$partition([1, 2, 3, 4], 3)", [[1, 2, 3], [4]]),
        ("$range(0, 10, 2)", [0, 2, 4, 6, 8, 10]),
        ("$range(10, 0, -5)", [10, 5, 0]),
        # AWS's answers (LocalStack's AWS-validated snapshot test_array_jsonata, read 2026-12-04): a range
        # of one is that number; a partition of one chunk stays an array of arrays.
        ("$range(1, 9, 9)", 1),
        ("$range(0, 10, 3)", [0, 3, 6, 9]),
        ("$partition([0], 5)", [[0]]),
        ("$parse('{\"a\": [1, null]}')", {"a": [1, None]}),
        ("$hash('abc', 'SHA-256')", hashlib.sha256(b"abc").hexdigest()),
        ("$hash('abc', 'MD5')", hashlib.md5(b"abc").hexdigest()),
        ("$random(42) = $random(42)", True),
    ],
)
def test_step_functions_functions(expression: str, expected: Any) -> None:
    assert evaluate(expression, {}) == expected


def test_uuid_is_a_version_4_uuid_and_random_is_in_unit_interval() -> None:
    assert uuid.UUID(evaluate("$uuid()", {})).version == 4
    assert 0 <= evaluate("$random()", {}) < 1


@pytest.mark.parametrize(
    "expression", ["$eval('1 + 1')", "$hash('a', 'SHA-3')", "$partition([1], 0)", "$parse('{')", "1 +"]
)
def test_what_step_functions_refuses_is_a_query_evaluation_error(expression: str) -> None:
    with pytest.raises(QueryEvaluationError):
        evaluate(expression, {})


def test_states_and_variables_bind_as_values() -> None:
    """The AWS conversion example: variables and $states.input in Arguments."""
    bindings = {"states": {"input": {"title": "Doctor"}}, "customerName": "María"}
    assert evaluate("$states.input.title", bindings) == "Doctor"
    assert evaluate("$customerName", bindings) == "María"
    tricky = {"quote": 'say "hi" \\ bye'}
    assert evaluate("$quote", tricky) == tricky["quote"]
    assert evaluate("$missing", {}) is UNDEFINED
    assert evaluate("$nothing", {"nothing": None}) is None
