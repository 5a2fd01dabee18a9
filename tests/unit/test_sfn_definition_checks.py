"""What CreateStateMachine refuses before the ASL parser, with AWS's code, wording and JSON pointer.

Sources (looked up 2026-12-04): AWS API reference "ValidateStateMachineDefinitionDiagnostic" (codes, the
location as a JSON pointer); AWS answers quoted in localstack/localstack#11978 (MISSING_TRANSITION_TARGET
"State "pass2" is not reachable.") and in LocalStack's TestState test (``The field 'Type' should have one of
these values: [...]``); developer guide "Wait state" (Timestamp: RFC 3339 with an uppercase T and Z);
developer guide "Integrating services" (resources). A parser refusal never shows the parser's vocabulary."""

from __future__ import annotations

import json
from typing import Any

import pytest
from moto.stepfunctions.parser.api import InvalidDefinition

from docagent.localcloud.stepfunctions import resources, validation
from docagent.localcloud.stepfunctions.json_paths import is_valid


def _errors(definition: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    found = validation.diagnose(json.dumps(definition))
    return [(item.code, item.message, item.location) for item in found if item.severity == "ERROR"]


def _one(state: dict[str, Any]) -> dict[str, Any]:
    return {"StartAt": "S", "States": {"S": {**state, "End": True} if state.get("Type") != "Fail" else state}}


def test_a_field_the_state_type_does_not_take_is_named_with_its_pointer() -> None:
    assert _errors(_one({"Type": "Pass", "Credentials": {"RoleArn": "r"}})) == [
        ("SCHEMA_VALIDATION_FAILED", 'The field "Credentials" is not supported by Step Functions',
         "/States/S/Credentials"),
    ]  # fmt: skip
    task = {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Credentials": {"RoleArn": "r"}}
    assert _errors(_one(task)) == []


def test_an_unknown_type_lists_the_types() -> None:
    assert _errors(_one({"Type": "Pause"})) == [
        ("SCHEMA_VALIDATION_FAILED", "The field 'Type' should have one of these values: "
         "[Task, Wait, Pass, Succeed, Fail, Choice, Parallel, Map]", "/States/S/Type"),
    ]  # fmt: skip


def test_states_missing() -> None:
    """As recorded on AWS in LocalStack's AWS-validated snapshots test_sfn_api
    ``test_create_delete_invalid_sm`` and test_sfn_api_validation (read 2026-12-04): the required fields
    AWS misses, States first."""
    assert _errors({"StartAt": "S"}) == [
        ("SCHEMA_VALIDATION_FAILED", "These fields are required: [States]", "/")
    ]
    assert _errors({}) == [("SCHEMA_VALIDATION_FAILED", "These fields are required: [States, StartAt]", "/")]
    assert _errors({"States": {"S": {"Type": "Succeed"}}}) == [
        ("SCHEMA_VALIDATION_FAILED", "These fields are required: [StartAt]", "/")
    ]


@pytest.mark.parametrize(
    ("definition", "expected"),
    [
        (" ", {"severity": "ERROR", "code": "SCHEMA_VALIDATION_FAILED",
               "message": "Definition must be a valid JSON object"}),
        ("not a definition", {"severity": "ERROR", "code": "INVALID_JSON_DESCRIPTION",
                              "message": "Unrecognized token 'not': was expecting (JSON String, Number, "
                              "Array, Object or token 'null', 'true' or 'false')\n at [Source: (String)"
                              "\"not a definition\"; line: 1, column: 4]",
                              "location": '[Source: (String)"not a definition"; line: 1, column: 4]'}),
    ],
)  # fmt: skip
def test_a_definition_that_is_not_a_json_object(definition: str, expected: dict[str, str]) -> None:
    """As recorded on AWS (test_sfn_api_validation ``..._not_a_definition``): no location for a blank one;
    Jackson's words and source for a bare word."""
    assert [item.as_api() for item in validation.diagnose(definition)] == [expected]


def test_a_jsonpath_state_only_in_a_jsonata_whole_machine_is_refused() -> None:
    """As recorded on AWS (test_sfn_api_validation ``INVALID_DOWNGRADE_QUERY_LANGUAGE`` and
    ``VALID_QUERY_LANGUAGE_PASS``): refused at the state when the whole machine is JSONata; a JSONPath state
    inside a JSONata Map of a JSONPath machine is fine."""
    downgrade = {"QueryLanguage": "JSONata", "StartAt": "Pass",
                 "States": {"Pass": {"Type": "Pass", "End": True, "QueryLanguage": "JSONPath"}}}  # fmt: skip
    refused = "'QueryLanguage' can not be 'JSONPath' if set to 'JSONata' for whole state machine"
    assert _errors(downgrade) == [("SCHEMA_VALIDATION_FAILED", refused, "/States/Pass")]
    inner = {
        "StartAt": "Pass",
        "States": {"Pass": {"QueryLanguage": "JSONPath", "Type": "Pass", "End": True}},
    }
    nested = {"StartAt": "Map", "QueryLanguage": "JSONPath", "States": {"Map": {
        "Type": "Map", "QueryLanguage": "JSONata", "ItemProcessor": inner, "End": True}}}  # fmt: skip
    assert _errors(nested) == []


def test_an_unreachable_state() -> None:
    machine = {"StartAt": "A", "States": {"A": {"Type": "Succeed"}, "B": {"Type": "Succeed"}}}
    assert _errors(machine) == [("MISSING_TRANSITION_TARGET", 'State "B" is not reachable.', "/States/B")]


@pytest.mark.parametrize(
    ("stamp", "ok"),
    [("2026-12-04T10:00:00Z", True), ("2026-12-04T10:00:00.5+02:00", True), ("2026-12-04t10:00:00z", False),
     ("2026-13-01T00:00:00Z", False), ("2026-12-04", False), ("2026-12-04 10:00:00Z", False)],
)  # fmt: skip
def test_a_wait_timestamp_is_rfc3339(stamp: str, ok: bool) -> None:
    found = _errors(_one({"Type": "Wait", "Timestamp": stamp}))
    expected = [] if ok else [("SCHEMA_VALIDATION_FAILED",
                               "The value for the field 'Timestamp' must be a valid RFC3339 timestamp",
                               "/States/S/Timestamp")]  # fmt: skip
    assert found == expected


def test_a_path_field_must_be_a_jsonpath() -> None:
    assert _errors(_one({"Type": "Pass", "InputPath": "$.[bad"})) == [
        ("SCHEMA_VALIDATION_FAILED", "The value for the field 'InputPath' must be a valid JSONPath",
         "/States/S/InputPath"),
    ]  # fmt: skip
    assert [
        path for path in ("$", "$.a.b[0]", "$$.Execution.Id", "$var.x", "$.a[?(@.b > 1)]") if is_valid(path)
    ]
    assert not any(is_valid(path) for path in ("a.b", "$.[bad", ""))
    assert _errors(_one({"Type": "Pass", "OutputPath": None, "ResultPath": "$$.Execution.Input"})) == []


def test_an_integration_step_functions_does_not_have() -> None:
    resource = "arn:aws:states:::foo:bar"
    assert _errors(_one({"Type": "Task", "Resource": resource})) == [
        ("INVALID_RESOURCE", f"The resource provided {resource} is not recognized. The value is not a valid "
         "resource ARN, or the resource is not available in this region.", "/States/S/Resource"),
    ]  # fmt: skip
    known = [
        "arn:aws:states:::lambda:invoke",
        "arn:aws:states:::aws-sdk:s3:getObject",
        "arn:aws:states:::states:startExecution.sync:2",
        "arn:aws:lambda:us-east-1:123456789012:function:f",
        "arn:aws:states:::aws-sdk:sfn:startExecution",
    ]
    assert [resource for resource in known if not resources.known(resource)] == []
    assert not resources.known("arn:aws:states:::aws-sdk:nosuchservice:doIt")


def test_a_parser_refusal_is_in_aws_frame_without_the_parsers_vocabulary() -> None:
    leaked = 'ASLParserException line 1:50, at "Foo", mismatched input \'"Foo"\' expecting {...}'
    assert validation.parser_refusal(leaked) == (
        'Invalid State Machine Definition: \'SCHEMA_VALIDATION_FAILED: The value "Foo" is not supported by '
        "Step Functions at /'"
    )
    raised = "Error=ValueError Args=[\"The value is wrong\"] in definition '{}'."
    assert validation.parser_refusal(raised).endswith("'SCHEMA_VALIDATION_FAILED: The value is wrong at /'")


def test_create_refuses_before_the_parser() -> None:
    with pytest.raises(InvalidDefinition) as raised:  # what CreateStateMachine calls once installed
        validation._validate_definition(json.dumps(_one({"Type": "Pass", "Foo": 1})))
    assert str(raised.value.message) == (
        'Invalid State Machine Definition: \'SCHEMA_VALIDATION_FAILED: The field "Foo" is not supported by '
        "Step Functions at /States/S/Foo'"
    )


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        (r"States.Format('a\{b\} {}', $.x)", True),
        (r"States.Format('it\'s')", True),
        ("$$.Map.Item.Value", True),
        (r"States.Format('\q')", False),
        ("States.Array(1", False),
        ("not a path", False),
    ],
)
def test_a_payload_field_holds_a_jsonpath_or_an_intrinsic_call(value: str, ok: bool) -> None:
    r"""ASL "Intrinsic functions": only ', {, } and \ are escaped in a string literal."""
    found = _errors(_one({"Type": "Pass", "Parameters": {"nested": {"a.$": value}}}))
    message = "The value for the field 'a.$' must be a valid JSONPath or a valid intrinsic function call"
    expected = [] if ok else [("SCHEMA_VALIDATION_FAILED", message, "/States/S/Parameters/nested/a.$")]
    assert found == expected
