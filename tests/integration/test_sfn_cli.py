"""The standard AWS CLI (awscli from PyPI) against the local cloud: what a new user tries first.

Each case is a documented Step Functions behaviour (AWS API reference pages named in the tests). The CLI
costs seconds per call on a loaded machine, so variations of one case go through boto3 and the CLI runs
once per behaviour."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

import pytest
from botocore.exceptions import ClientError

from docagent.localcloud.server import LocalCloud
from tests.integration.conftest import aws_cli, run_aws_cli

ROLE = "arn:aws:iam::123456789012:role/sfn"
PASS_MACHINE = {"StartAt": "Hello", "States": {"Hello": {"Type": "Pass", "End": True}}}


def create(cloud: LocalCloud, name: str, definition: dict[str, Any]) -> str:
    arn = aws_cli(
        cloud, "stepfunctions", "create-state-machine", "--name", name,
        "--definition", json.dumps(definition), "--role-arn", ROLE,
    )["stateMachineArn"]  # fmt: skip
    return str(arn)


def wait_closed(cloud: LocalCloud, execution_arn: str) -> dict[str, Any]:
    for _ in range(200):
        described: dict[str, Any] = aws_cli(
            cloud, "stepfunctions", "describe-execution", "--execution-arn", execution_arn
        )
        if described["status"] != "RUNNING":
            return described
        time.sleep(0.05)
    raise AssertionError(f"{execution_arn} still running")


@pytest.fixture(scope="module")
def sfn(aws: Any) -> Any:
    return aws("stepfunctions")


@pytest.fixture(scope="module")
def hello(sfn: Any) -> str:
    return str(
        sfn.create_state_machine(name="cli-hello", definition=json.dumps(PASS_MACHINE), roleArn=ROLE)[
            "stateMachineArn"
        ]
    )


def test_unnamed_starts_get_distinct_uuid_names(cloud: LocalCloud, hello: str) -> None:
    """StartExecution: without a name, Step Functions generates a UUID as the execution name."""
    first = aws_cli(cloud, "stepfunctions", "start-execution", "--state-machine-arn", hello)["executionArn"]
    second = aws_cli(cloud, "stepfunctions", "start-execution", "--state-machine-arn", hello)["executionArn"]
    names = [arn.rsplit(":", 1)[-1] for arn in (first, second)]
    assert names[0] != names[1]
    assert all(len(name) == 36 and name.count("-") == 4 for name in names)
    listed = aws_cli(cloud, "stepfunctions", "list-executions", "--state-machine-arn", hello)["executions"]
    assert {item["name"] for item in listed} >= set(names)


def test_an_invalid_execution_name_is_refused_with_invalid_name(cloud: LocalCloud, hello: str) -> None:
    code, _, stderr = run_aws_cli(
        cloud, "stepfunctions", "start-execution", "--state-machine-arn", hello, "--name", "a/b"
    )
    assert code != 0
    assert "InvalidName" in stderr


@pytest.mark.parametrize(
    "name", ["x" * 81, "has space", "hash#name", "tab\tname", "brace{", "semi;colon", "\u0085"]
)
def test_names_breaking_the_documented_rules_are_invalid_name(sfn: Any, hello: str, name: str) -> None:
    with pytest.raises(ClientError) as refused:
        sfn.start_execution(stateMachineArn=hello, name=name)
    assert refused.value.response["Error"]["Code"] == "InvalidName"


def test_an_eighty_character_name_is_accepted(sfn: Any, hello: str) -> None:
    name = "n" * 80
    assert sfn.start_execution(stateMachineArn=hello, name=name)["executionArn"].endswith(f":{name}")


def test_a_malformed_state_machine_arn_is_invalid_arn(sfn: Any) -> None:
    with pytest.raises(ClientError) as refused:
        sfn.start_execution(stateMachineArn="arn:aws:states:nope")
    assert refused.value.response["Error"]["Code"] == "InvalidArn"


@pytest.mark.parametrize(
    ("definition", "expected"),
    [
        ("not json at all", "INVALID_JSON_DESCRIPTION"),
        (json.dumps({"StartAt": "Nowhere", "States": PASS_MACHINE["States"]}), "MISSING_TRANSITION_TARGET"),
        (
            json.dumps({"StartAt": "A", "States": {"A": {"Type": "Pass", "Next": "B"}}}),
            "MISSING_TRANSITION_TARGET",
        ),
        (
            json.dumps({"StartAt": "A", "States": {"A": {"Type": "Pass"}}}),
            "exactly one of 'Next' or 'End: true'",
        ),
    ],
)
def test_an_invalid_definition_is_refused(sfn: Any, definition: str, expected: str) -> None:
    """CreateStateMachine: InvalidDefinition, with the problem named."""
    with pytest.raises(ClientError) as refused:
        sfn.create_state_machine(name="invalid", definition=definition, roleArn=ROLE)
    assert refused.value.response["Error"]["Code"] == "InvalidDefinition"
    assert expected in refused.value.response["Error"]["Message"]


def test_the_cli_sees_invalid_definition_on_create_and_update(cloud: LocalCloud, hello: str) -> None:
    broken = json.dumps({"StartAt": "Hello", "States": {"Hello": {"Type": "Pass", "Next": "Gone"}}})
    code, _, stderr = run_aws_cli(
        cloud,
        "stepfunctions",
        "create-state-machine",
        "--name",
        "cli-invalid",
        "--definition",
        broken,
        "--role-arn",
        ROLE,
    )
    assert code != 0
    assert "InvalidDefinition" in stderr
    code, _, stderr = run_aws_cli(
        cloud, "stepfunctions", "update-state-machine", "--state-machine-arn", hello, "--definition", broken
    )
    assert code != 0
    assert "InvalidDefinition" in stderr


def test_validate_state_machine_definition_reports_diagnostics(cloud: LocalCloud) -> None:
    """ValidateStateMachineDefinition: result FAIL with diagnostics (severity, code, message, location)."""
    definition = {
        "QueryLanguage": "JSONata",
        "StartAt": "A",
        "States": {
            "A": {"Type": "Pass", "InputPath": "$.x", "Next": "Missing"},
            "Orphan": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "End": True,
                       "Retry": [{"ErrorEquals": ["States.ALL"], "BackoffRate": 0.5}]},
        },
    }  # fmt: skip
    answer = aws_cli(
        cloud, "stepfunctions", "validate-state-machine-definition", "--definition", json.dumps(definition)
    )
    assert answer["result"] == "FAIL"
    found = {(item["code"], item["location"]) for item in answer["diagnostics"]}
    assert ("MISSING_TRANSITION_TARGET", "/States/A/Next") in found
    assert ("SCHEMA_VALIDATION_FAILED", "/States/A/InputPath") in found
    assert ("MISSING_TRANSITION_TARGET", "/States/Orphan") in found  # AWS's code (localstack#11978)
    assert ("SCHEMA_VALIDATION_FAILED", "/States/Orphan/Retry/0/BackoffRate") in found
    assert all(item["severity"] == "ERROR" and item["message"] for item in answer["diagnostics"])
    good = aws_cli(
        cloud, "stepfunctions", "validate-state-machine-definition", "--definition", json.dumps(PASS_MACHINE)
    )
    assert good == {"result": "OK", "diagnostics": [], "truncated": False}


JSONATA_MACHINE = {
    "QueryLanguage": "JSONata",
    "StartAt": "Prepare",
    "States": {
        "Prepare": {
            "Type": "Pass",
            "Assign": {"customerName": "{% $states.input.customer %}"},
            "Output": {
                "static": "Hello",
                "title": "{% $states.input.title %}",
                "count": "{% $count($states.input.items) %}",
                "not-evaluated": "$customerName",
            },
            "Next": "Route",
        },
        "Route": {
            "Type": "Choice",
            "Choices": [
                {
                    "Condition": "{% $states.input.count > 2 %}",
                    "Output": {"greeting": "{% $states.input.title & ' ' & $customerName %}", "size": "big"},
                    "Next": "Done",
                }
            ],
            "Default": "Done",
            "Output": {"greeting": "{% $customerName %}", "size": "small"},
        },
        "Done": {"Type": "Succeed"},
    },
}


def test_a_jsonata_pass_and_choice_through_the_cli(cloud: LocalCloud) -> None:
    """AWS "Transforming data with JSONata": Output, Assign, variables, Condition, $states.input."""
    arn = create(cloud, "cli-jsonata", JSONATA_MACHINE)
    document = {"customer": "María", "title": "Doctor", "items": [1, 2, 3]}
    started = aws_cli(
        cloud, "stepfunctions", "start-execution", "--state-machine-arn", arn, "--input", json.dumps(document)
    )
    described = wait_closed(cloud, started["executionArn"])
    assert described["status"] == "SUCCEEDED", described
    assert json.loads(described["output"]) == {"greeting": "Doctor María", "size": "big"}


def test_a_jsonata_choice_default_and_a_query_evaluation_error(sfn: Any) -> None:
    arn = sfn.create_state_machine(
        name="jsonata-default", definition=json.dumps(JSONATA_MACHINE), roleArn=ROLE
    )
    small = sfn.start_execution(
        stateMachineArn=arn["stateMachineArn"],
        input=json.dumps({"customer": "Bo", "title": "Mx", "items": []}),
    )
    described = wait_closed_boto(sfn, small["executionArn"])
    assert json.loads(described["output"]) == {"greeting": "Bo", "size": "small"}
    broken = sfn.start_execution(stateMachineArn=arn["stateMachineArn"], input=json.dumps({"customer": "Bo"}))
    failed = wait_closed_boto(sfn, broken["executionArn"])
    assert failed["status"] == "FAILED"
    assert failed["error"] == "States.QueryEvaluationError"


def wait_closed_boto(sfn: Any, execution_arn: str) -> dict[str, Any]:
    for _ in range(200):
        described: dict[str, Any] = sfn.describe_execution(executionArn=execution_arn)
        if described["status"] != "RUNNING":
            return described
        time.sleep(0.05)
    raise AssertionError(f"{execution_arn} still running")


FIRST_ATTEMPT_FAILS = """
def handler(event, context):
    if event["attempt"] == 0:
        raise RuntimeError("first attempt fails")
    return {"greeting": "hello " + event["name"], "attempt": event["attempt"]}
"""


def test_redrive_of_a_jsonata_workflow_through_the_cli(
    cloud: LocalCloud, sfn: Any, make_function: Any
) -> None:
    """RedriveExecution (docs/semantics.md R1, R6): the failed JSONata Task runs again; variables and
    $states.context.Execution.RedriveCount are there."""
    function = make_function(FIRST_ATTEMPT_FAILS)
    definition = {
        "QueryLanguage": "JSONata",
        "StartAt": "Remember",
        "States": {
            "Remember": {"Type": "Pass", "Assign": {"name": "{% $states.input.name %}"}, "Next": "Greet"},
            "Greet": {
                "Type": "Task",
                "Resource": "arn:aws:states:::lambda:invoke",
                "Arguments": {
                    "FunctionName": function,
                    "Payload": {
                        "attempt": "{% $states.context.Execution.RedriveCount %}",
                        "name": "{% $name %}",
                    },
                },
                "Output": "{% $states.result.Payload %}",
                "End": True,
            },
        },
    }
    arn = sfn.create_state_machine(name="jsonata-redrive", definition=json.dumps(definition), roleArn=ROLE)
    execution = sfn.start_execution(stateMachineArn=arn["stateMachineArn"], input=json.dumps({"name": "Ada"}))
    assert wait_closed_boto(sfn, execution["executionArn"])["status"] == "FAILED"
    aws_cli(cloud, "stepfunctions", "redrive-execution", "--execution-arn", execution["executionArn"])
    described = wait_closed_boto(sfn, execution["executionArn"])
    assert described["status"] == "SUCCEEDED", described
    assert json.loads(described["output"]) == {"greeting": "hello Ada", "attempt": 1}
    assert described["redriveCount"] == 1


def test_docagent_list_copes_with_executions_it_did_not_start(
    cloud: LocalCloud, deployed: Any, docagent: Any
) -> None:
    """An unnamed start on the deployed workflow (a UUID name, no job records): `docagent list` shows it."""
    arn = deployed.outputs["StateMachineArn"]
    started = aws_cli(cloud, "stepfunctions", "start-execution", "--state-machine-arn", arn, "--input", "{}")
    name = started["executionArn"].rsplit(":", 1)[-1]
    code, listed = docagent("list", "--limit", "1000")
    assert code == 0
    assert name in [job["job_id"] for job in listed["jobs"]]


def test_request_errors_in_aws_words(aws: Any) -> None:
    """As recorded on AWS in LocalStack's AWS-validated snapshot test_sfn_api (read 2026-12-04): an ARN
    without the ``arn:`` prefix, a missing state machine or execution, a status filter outside the enum, a
    page size over 1000, a page token over its length, and execution input that is not JSON."""
    sfn = aws("stepfunctions")
    arn = sfn.create_state_machine(
        name=f"words-{uuid.uuid4().hex[:8]}", definition=json.dumps(PASS_MACHINE), roleArn=ROLE
    )["stateMachineArn"]
    missing_machine = arn + "-missing"
    missing_execution = arn.replace(":stateMachine:", ":execution:") + ":nope"
    cases = [
        (lambda: sfn.describe_state_machine(stateMachineArn="not_a_valid_arn"),
         "InvalidArn", "Invalid Arn: 'Invalid ARN prefix: not_a_valid_arn'"),
        (lambda: sfn.describe_execution(executionArn="invalid_execution_arn"),
         "InvalidArn", "Invalid Arn: 'Invalid ARN prefix: invalid_execution_arn'"),
        (lambda: sfn.list_executions(stateMachineArn=missing_machine),
         "StateMachineDoesNotExist", f"State Machine Does Not Exist: '{missing_machine}'"),
        (lambda: sfn.describe_execution(executionArn=missing_execution),
         "ExecutionDoesNotExist", f"Execution Does Not Exist: '{missing_execution}'"),
        (lambda: sfn.list_executions(stateMachineArn=arn, statusFilter="succeeded"), "ValidationException",
         "1 validation error detected: Value 'succeeded' at 'statusFilter' failed to satisfy constraint: "
         "Member must satisfy enum value set: [RUNNING, SUCCEEDED, FAILED, TIMED_OUT, ABORTED, "
         "PENDING_REDRIVE]"),
        (lambda: sfn.list_state_machines(maxResults=1001), "ValidationException",
         "1 validation error detected: Value '1001' at 'maxResults' failed to satisfy constraint: Member "
         "must have value less than or equal to 1000"),
        (lambda: sfn.list_executions(stateMachineArn=arn, nextToken="x" * 3097), "ValidationException",
         f"1 validation error detected: Value '{'x' * 3097}' at 'nextToken' failed to satisfy constraint: "
         "Member must have length less than or equal to 3096"),
        (lambda: sfn.start_execution(stateMachineArn=arn, input="{'not': 'json'"), "InvalidExecutionInput",
         "Invalid State Machine Execution Input: 'Unexpected character (''' (code 39)): was expecting "
         "double-quote to start field name'"),
        (lambda: sfn.start_execution(stateMachineArn=arn, input=""), "InvalidExecutionInput",
         "Invalid State Machine Execution Input: 'Invalid execution input.'"),
    ]  # fmt: skip
    for call, code, message in cases:
        with pytest.raises(ClientError) as refused:
            call()
        assert (refused.value.response["Error"]["Code"], refused.value.response["Error"]["Message"]) == (
            code,
            message,
        )
