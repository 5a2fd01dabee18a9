"""variableReferences as recorded on AWS (LocalStack's AWS-validated snapshot
test_sfn_api_variable_references, read 2026-12-04): the shapes of its cases, each with the answer AWS gave;
the JSONata ``$name`` case (the last) is not recorded."""

from __future__ import annotations

from typing import Any

import pytest

from docagent.localcloud.stepfunctions.variable_references import variable_references


def _machine(**states: Any) -> dict[str, Any]:
    return {"StartAt": next(iter(states)), "States": states}


CHOICE = {
    "Type": "Choice",
    "Choices": [{"Variable": "$guess", "StringEqualsPath": "$answer", "Next": "Right"}],
    "Default": "Wrong",
}
INTRINSIC = {
    "Type": "Pass",
    "Parameters": {
        "a.$": "States.Format('Hello {} $notAVariable', $name)",
        "b.$": "States.JsonToString($json1)",
    },
    "End": True,
}
MAP = {
    "Type": "Map",
    "ItemsPath": "$PokemonList",
    "MaxConcurrencyPath": "$maxConcurrency",
    "ItemSelector": {"value.$": "$$.Map.Item.Value", "bucketName": "$bucket"},
    "ItemProcessor": {
        "StartAt": "Pass",
        "States": {"Pass": {"Type": "Pass", "Parameters": {"q.$": "$Question"}, "End": True}},
    },
    "End": True,
}
JSONATA_CHOICE = {
    "Type": "Choice",
    "QueryLanguage": "JSONata",
    "Choices": [{"Condition": "{% $not($states.input.result.done) %}", "Next": "Done"}],
}


@pytest.mark.parametrize(
    ("definition", "recorded"),
    [
        (_machine(CheckAnswer=CHOICE), {"CheckAnswer": ["answer", "guess"]}),
        (_machine(State1=INTRINSIC), {"State1": ["json1", "name"]}),
        (_machine(MapState=MAP), {"MapState": ["PokemonList", "maxConcurrency"], "Pass": ["Question"]}),
        (_machine(Fail={"Type": "Fail", "ErrorPath": "$errorVar", "CausePath": "$causeVar"}),
         {"Fail": ["causeVar", "errorVar"]}),
        (_machine(S={"Type": "Pass", "Assign": {"x.$": "$.value", "y": "$plain"}, "End": True}), {}),
        (_machine(CheckResult=JSONATA_CHOICE), {}),
        (_machine(S={"Type": "Pass", "Output": "{% $total + $count($list) %}", "End": True}),
         {"S": ["list", "total"]}),
    ],
)  # fmt: skip
def test_references_are_the_variables_a_state_reads(
    definition: dict[str, Any], recorded: dict[str, Any]
) -> None:
    assert variable_references(definition) == recorded
