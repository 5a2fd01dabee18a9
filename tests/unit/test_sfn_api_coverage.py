"""docs/sfn-api-coverage.md is what docagent/localcloud/stepfunctions/api_coverage.py generates from
botocore's service model and its table; every parameter the table names is one of botocore's; the guard
refuses what the table refuses."""

from __future__ import annotations

from docagent.localcloud.stepfunctions import api_coverage as sfn_api


def test_the_page_is_what_the_generator_writes() -> None:
    assert sfn_api.PAGE.read_text() == sfn_api.render(), (
        "run: python -m docagent.localcloud.stepfunctions.api_coverage --write"
    )


def test_every_declared_action_and_parameter_is_in_botocores_model() -> None:
    model = sfn_api.model_parameters()
    for action, parameters in sfn_api.SERVED.items():
        assert action in model, action
        assert set(parameters) == set(model[action]), (action, set(parameters) ^ set(model[action]))


def test_a_refused_parameter_is_named_and_an_honoured_one_passes() -> None:
    refused = sfn_api.refusal("DescribeExecution", {"executionArn": "a", "includedData": "METADATA_ONLY"})
    assert refused is not None and "'includedData'" in refused
    started = {"stateMachineArn": "arn", "name": "n", "input": "{}", "traceHeader": "Root=1"}
    assert sfn_api.refusal("StartExecution", started) is None
    assert sfn_api.refusal("DescribeExecution", {"executionArn": "a", "includedData": "ALL_DATA"}) is None
    assert sfn_api.refusal("DescribeExecution", {"executionArn": "a", "includedData": "METADATA_ONLY"})
    assert sfn_api.refusal("ListExecutions", {"mapRunArn": "m", "redriveFilter": "REDRIVEN"}) is None
    assert sfn_api.refusal("ListExecutions", {"stateMachineArn": "s", "redriveFilter": "REDRIVEN"}) is None
    assert sfn_api.refusal("ListMapRuns", {"executionArn": "e", "maxResults": 5}) is None
