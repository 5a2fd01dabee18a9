"""JSONata failures and string escapes on the local cloud, in AWS's words.

Every expected cause, location and event sequence here is what AWS recorded: LocalStack's AWS-validated
snapshots (``@markers.aws.validated``, recorded against real Step Functions; read 2026-12-04 at
github.com/localstack/localstack tests/aws/services/stepfunctions/v2/):
- assign/test_assign_reference_variables ``test_undefined_reference``: an expression that returns nothing;
- intrinsic_functions/test_math_operations_jsonata ``test_math_random_seeded``: ``$randomSeeded`` is no
  Step Functions function (JSONata's T1006);
- scenarios/test_base_scenarios ``test_map_state_items_eval_jsonata_fail``, ``test_escape_sequence_parsing``
  and assign/test_assign_reference_variables ``test_map_catch_error``.
The event's fields are API reference "EvaluationFailedEventDetails" (``location``: "The location of the
field in the state in which the evaluation error occurred")."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.integration.conftest import run_to_end

pytestmark = pytest.mark.integration

FRAME = "An error occurred while executing the state '{state}' (entered at the event id #{event}). "
PASS_THROUGH = {"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}}


def _jsonata(states: dict[str, Any], start: str = "State0") -> dict[str, Any]:
    return {"QueryLanguage": "JSONata", "StartAt": start, "States": states}


def _evaluation_failed(events: list[Any]) -> dict[str, Any]:
    (failed,) = [event for event in events if event["type"] == "EvaluationFailed"]
    return failed["evaluationFailedEventDetails"]  # type: ignore[no-any-return]


def _types(events: list[Any]) -> list[str]:
    return [event["type"] for event in events]


LAMBDA = "arn:aws:states:::lambda:invoke"
UNDEFINED = [
    ("Output", {"Type": "Pass", "Output": "{% $doesNotExist %}"}),
    ("Output/result", {"Type": "Pass", "Output": {"result": "{% $doesNotExist %}"}}),
    ("Assign/result", {"Type": "Pass", "Assign": {"result": "{% $doesNotExist %}"}}),
    ("Arguments", {"Type": "Task", "Resource": LAMBDA, "Arguments": "{% $doesNotExist %}"}),
    (
        "Arguments/FunctionName",
        {"Type": "Task", "Resource": LAMBDA, "Arguments": {"FunctionName": "{% $doesNotExist %}"}},
    ),
]


@pytest.mark.parametrize(("location", "state"), UNDEFINED, ids=[location for location, _ in UNDEFINED])
def test_an_expression_that_returns_nothing(aws: Any, location: str, state: dict[str, Any]) -> None:
    done, events = run_to_end(aws, _jsonata({"State0": {**state, "End": True}}))
    cause = FRAME.format(state="State0", event=2) + (
        f"The JSONata expression '$doesNotExist' specified for the field '{location}' returned nothing "
        "(undefined)."
    )
    assert (done["status"], done["error"], done["cause"]) == ("FAILED", "States.QueryEvaluationError", cause)
    entered = "PassStateEntered" if state["Type"] == "Pass" else "TaskStateEntered"
    assert _types(events) == ["ExecutionStarted", entered, "EvaluationFailed", "ExecutionFailed"]
    details = {
        "error": "States.QueryEvaluationError",
        "cause": cause,
        "location": location,
        "state": "State0",
    }
    assert _evaluation_failed(events) == details


def test_random_seeded_is_not_a_step_functions_function(aws: Any) -> None:
    """Step Functions adds ``$random`` (optionally seeded), not ``$randomSeeded``: JSONata's T1006."""
    output = {"FunctionResult": "{% $randomSeeded($states.input.FunctionInput.fst) %}"}
    machine = _jsonata({"State_0": {"Type": "Pass", "Output": output, "End": True}}, start="State_0")
    done, events = run_to_end(aws, machine, {"FunctionInput": "fst"})
    assert (done["status"], done["error"]) == ("FAILED", "States.QueryEvaluationError")
    assert done["cause"] == FRAME.format(state="State_0", event=2) + (
        "The JSONata expression '$randomSeeded($states.input.FunctionInput.fst)' specified for the field "
        "'Output/FunctionResult' threw an error during evaluation. T1006: Attempted to invoke a non-function"
    )
    assert _evaluation_failed(events)["location"] == "Output/FunctionResult"


@pytest.mark.parametrize(
    ("expression", "shown"),
    [
        ("1", "Expected 'array', but was 'number' for value: 1"),
        ("'string'", "Expected 'array', but was 'string' for value: \"string\""),
        ("true", "Expected 'array', but was 'boolean' for value: true"),
        ("{'foo': 'bar'}", "Expected 'array', but was 'object' for value: {\"foo\":\"bar\"}"),
        ("null", "Expected 'array', but was 'null' for value: null"),
    ],
)
def test_map_items_that_are_not_an_array(aws: Any, expression: str, shown: str) -> None:
    state = {"Type": "Map", "Items": f"{{% {expression} %}}", "ItemProcessor": PASS_THROUGH, "End": True}
    done, events = run_to_end(aws, _jsonata({"MapIterateState": state}, start="MapIterateState"))
    cause = FRAME.format(state="MapIterateState", event=2) + (
        f"The JSONata expression '{expression}' specified for the field 'Items' returned an unexpected "
        f"result type. {shown}"
    )
    assert (done["error"], done["cause"]) == ("States.QueryEvaluationError", cause)
    expected = [
        "ExecutionStarted",
        "MapStateEntered",
        "EvaluationFailed",
        "MapStateFailed",
        "ExecutionFailed",
    ]
    assert _types(events) == expected
    assert _evaluation_failed(events)["location"] == "Items"


def test_map_items_that_are_a_function(aws: Any) -> None:
    state = {
        "Type": "Map",
        "Items": "{% $fn := function($x){$x} %}",
        "ItemProcessor": PASS_THROUGH,
        "End": True,
    }
    done, _ = run_to_end(aws, _jsonata({"MapIterateState": state}, start="MapIterateState"))
    assert done["cause"] == FRAME.format(state="MapIterateState", event=2) + (
        "The JSONata expression '$fn := function($x){$x}' specified for the field 'Items' returned an "
        "unsupported result type."
    )


def test_an_iterations_evaluation_failure_fails_the_map_with_it(aws: Any) -> None:
    """The Map fails with the inner state's States.QueryEvaluationError and cause (framed with the inner
    state's name and event), after EvaluationFailed and MapIterationFailed."""
    fallback = {"Type": "Pass", "Output": {"error": "{% $stateError %}"}, "End": True}
    processor = {"StartAt": "Fallback", "States": {"Fallback": fallback}}
    state = {"Type": "Map", "Items": [1], "ItemProcessor": processor, "End": True}
    done, events = run_to_end(aws, _jsonata({"M": state}, start="M"))
    assert (done["status"], done["error"]) == ("FAILED", "States.QueryEvaluationError")
    assert done["cause"] == FRAME.format(state="Fallback", event=5) + (
        "The JSONata expression '$stateError' specified for the field 'Output/error' returned nothing "
        "(undefined)."
    )
    assert _types(events)[-4:] == [
        "EvaluationFailed",
        "MapIterationFailed",
        "MapStateFailed",
        "ExecutionFailed",
    ]


ESCAPES = {'Test\\""Name"': 'Value"\\'}  # the snapshot's execution input


def test_a_string_output_compares_equal_in_jsonata(aws: Any) -> None:
    machine = _jsonata({"Pass": {"Type": "Pass", "Output": '"', "Next": "Check"},
                        "Check": {"Type": "Pass", "Output": "{% $states.input = '\"' %}", "End": True}},
                       start="Pass")  # fmt: skip
    done, _ = run_to_end(aws, machine, ESCAPES)
    assert (done["status"], done["output"]) == ("SUCCEEDED", "true")


def test_an_assigned_string_keeps_its_escapes_decoded(aws: Any) -> None:
    """``"Assign": {"var": "\\""}`` assigns one double quote: ``$var = '"'`` is true, and the history's
    assignedVariables holds it as JSON (``"\\""``)."""
    machine = _jsonata({"Pass": {"Type": "Pass", "Assign": {"var": '"'}, "Next": "Check"},
                        "Check": {"Type": "Pass", "Output": "{% $var = '\"' %}", "End": True}},
                       start="Pass")  # fmt: skip
    done, events = run_to_end(aws, machine, ESCAPES)
    assert (done["status"], done["output"]) == ("SUCCEEDED", "true")
    (exited, *_) = [event for event in events if event["type"] == "PassStateExited"]
    assert exited["stateExitedEventDetails"]["assignedVariables"] == {"var": '"\\""'}


def test_a_states_assignments_take_effect_when_it_leaves(aws: Any) -> None:
    """AWS's run of LocalStack's AWS-validated ``test_state_assign_evaluation_order``
    (assign/test_assign_base, read 2026-12-04): InputPath and OutputPath of the state that assigns
    ``answer`` read its earlier value."""
    machine = {
        "StartAt": "State0",
        "States": {
            "State0": {"Type": "Pass", "Result": {"theQuestion": "What is the answer?"},
                       "Assign": {"question.$": "$.theQuestion", "answer": 42}, "Next": "State1"},
            "State1": {"Type": "Pass", "InputPath": "$answer", "ResultPath": "$.theAnswer",
                       "OutputPath": "$answer", "Assign": {"answer": "<omitted>"}, "End": True},
        },
    }  # fmt: skip
    done, events = run_to_end(aws, machine)
    assert (done["status"], done["output"]) == ("SUCCEEDED", "42")
    exited = [event["stateExitedEventDetails"] for event in events if event["type"] == "PassStateExited"]
    assert exited[-1]["assignedVariables"] == {"answer": '"<omitted>"'}


def test_a_jsonata_output_reads_the_variables_as_entered_unconfirmed(aws: Any) -> None:
    """The recorded rule above, in a JSONata state (no AWS recording of this one: unconfirmed): Output and
    Assign both see ``$x`` as it was (1); the next state sees 2."""
    machine = _jsonata({"A": {"Type": "Pass", "Assign": {"x": 1}, "Next": "B"},
                        "B": {"Type": "Pass", "Assign": {"x": "{% $x + 1 %}"}, "Output": {"seen": "{% $x %}"},
                              "Next": "C"},
                        "C": {"Type": "Pass", "End": True,
                              "Output": {"before": "{% $states.input.seen %}", "now": "{% $x %}"}}},
                       start="A")  # fmt: skip
    done, _ = run_to_end(aws, machine)
    assert json.loads(done["output"]) == {"before": 1, "now": 2}
