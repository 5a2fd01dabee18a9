"""More of Step Functions' documented behaviour, each expectation from the AWS documentation (looked up
2026-12-01): the Context object's times are ISO 8601 strings ("Accessing execution data from the Context
object": ``"StartTime": "2019-03-26T20:14:13.192Z"``), so an output holding them is described like any other;
each time a Distributed Map state runs it starts a Map Run (MapRunStarted), and only a redriven execution
redrives one (MapRunRedriven, "Redriving Map Runs")."""

from __future__ import annotations

import json
import re
import time
from typing import Any

import pytest
from botocore.exceptions import ClientError

from docagent.localcloud.server import LocalCloud
from tests.integration.conftest import aws_cli, run_aws_cli


def _run(
    sfn: Any, role_arn: str, name: str, definition: dict[str, Any], given: dict[str, Any]
) -> dict[str, Any]:
    machine = sfn.create_state_machine(name=name, definition=json.dumps(definition), roleArn=role_arn)
    execution = sfn.start_execution(stateMachineArn=machine["stateMachineArn"], input=json.dumps(given))
    for _ in range(400):
        described: dict[str, Any] = sfn.describe_execution(executionArn=execution["executionArn"])
        if described["status"] != "RUNNING":
            return described
        time.sleep(0.05)
    raise AssertionError(f"{name} still running")


def test_context_object_times_in_the_output_are_iso_strings(
    cloud: LocalCloud, aws: Any, role_arn: str
) -> None:
    definition = {
        "StartAt": "P",
        "States": {"P": {"Type": "Pass", "Parameters": {"started.$": "$$.Execution.StartTime"}, "End": True}},
    }
    described = _run(aws("stepfunctions"), role_arn, "context-times", definition, {})
    assert described["status"] == "SUCCEEDED"
    via_cli = aws_cli(
        cloud, "stepfunctions", "describe-execution", "--execution-arn", described["executionArn"]
    )
    started = json.loads(via_cli["output"])["started"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", started), started


def test_a_distributed_map_entered_again_in_a_loop_starts_a_new_map_run(aws: Any, role_arn: str) -> None:
    processor = {
        "ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"},
        "StartAt": "X",
        "States": {"X": {"Type": "Pass", "End": True}},
    }
    definition = {
        "StartAt": "Each",
        "States": {
            "Each": {"Type": "Map", "ItemsPath": "$.items", "ResultPath": None, "ItemProcessor": processor,
                     "Next": "Count"},
            "Count": {"Type": "Pass", "Parameters": {"items.$": "$.items", "n.$": "States.MathAdd($.n, 1)"},
                      "Next": "Again?"},
            "Again?": {"Type": "Choice", "Default": "Done",
                       "Choices": [{"Variable": "$.n", "NumericLessThan": 2, "Next": "Each"}]},
            "Done": {"Type": "Succeed"},
        },
    }  # fmt: skip
    sfn = aws("stepfunctions")
    described = _run(sfn, role_arn, "map-loop", definition, {"items": [1, 2], "n": 0})
    assert described["status"] == "SUCCEEDED"
    events = sfn.get_execution_history(executionArn=described["executionArn"])["events"]
    map_events = [event["type"] for event in events if event["type"].startswith("MapRun")]
    assert map_events == ["MapRunStarted", "MapRunSucceeded"] * 2
    runs = sfn.list_map_runs(executionArn=described["executionArn"])["mapRuns"]
    assert len({run["mapRunArn"] for run in runs}) == 2


def test_create_state_machine_refuses_what_aws_refuses(cloud: LocalCloud, aws: Any, role_arn: str) -> None:
    """API reference "CreateStateMachine": idempotent for the same name and definition (a different role is
    ignored); a different definition is StateMachineAlreadyExists; a logging level without a destination is
    InvalidLoggingConfiguration; Express workflows support neither .waitForTaskToken nor .sync."""
    sfn = aws("stepfunctions")
    first = {"StartAt": "A", "States": {"A": {"Type": "Pass", "End": True}}}
    created = sfn.create_state_machine(name="create-rules", definition=json.dumps(first), roleArn=role_arn)
    again = sfn.create_state_machine(
        name="create-rules", definition=json.dumps(first), roleArn=role_arn + "-other"
    )
    assert again["stateMachineArn"] == created["stateMachineArn"]
    assert again["creationDate"] == created["creationDate"]

    other = {"StartAt": "B", "States": {"B": {"Type": "Pass", "End": True}}}
    code, _, stderr = run_aws_cli(
        cloud, "stepfunctions", "create-state-machine", "--name", "create-rules",
        "--definition", json.dumps(other), "--role-arn", role_arn,
    )  # fmt: skip
    assert code != 0 and "StateMachineAlreadyExists" in stderr

    with pytest.raises(ClientError) as refused:
        sfn.create_state_machine(
            name="create-log", definition=json.dumps(first), roleArn=role_arn,
            loggingConfiguration={"level": "ALL", "includeExecutionData": True},
        )  # fmt: skip
    assert refused.value.response["Error"]["Code"] == "InvalidLoggingConfiguration"

    callback = {
        "StartAt": "T",
        "States": {
            "T": {
                "Type": "Task",
                "Resource": "arn:aws:states:::sqs:sendMessage.waitForTaskToken",
                "Parameters": {"QueueUrl": "q", "MessageBody": {"t.$": "$$.Task.Token"}},
                "End": True,
            }
        },
    }
    with pytest.raises(ClientError) as refused:
        sfn.create_state_machine(
            name="create-express", definition=json.dumps(callback), roleArn=role_arn, type="EXPRESS"
        )
    assert refused.value.response["Error"]["Code"] == "InvalidDefinition"
    # AWS's words as recorded in LocalStack's AWS-validated snapshot test_sfn_api_express (2026-12-04).
    refusal = "Express state machine does not support '.waitForTaskToken' service integration  at "
    assert refusal + "/States/T/Resource" in refused.value.response["Error"]["Message"]
    assert sfn.create_state_machine(name="create-standard", definition=json.dumps(callback), roleArn=role_arn)


LOG_REFUSED = "Invalid Logging Configuration: "


def test_a_logging_configuration_is_checked_as_aws_checks_it(
    cloud: LocalCloud, aws: Any, role_arn: str
) -> None:
    """AWS's answers as recorded on AWS (LocalStack's AWS-validated snapshot stepfunctions/v2/
    test_sfn_api_logs, read 2026-12-04), on create and update: a level other than OFF without a destination,
    or two destinations, "Must specify exactly one Log Destination."; a log group that does not exist
    "Log Destination not found."; a configuration without a level is OFF. API reference
    "LoggingConfiguration" (2026-12-04): destinations "Limited to size 1. Required, if your log level is
    not set to OFF"."""
    sfn, logs = aws("stepfunctions"), aws("logs")
    definition = json.dumps({"StartAt": "A", "States": {"A": {"Type": "Pass", "End": True}}})
    group_arns = []
    for name in ("sfn-logs-a", "sfn-logs-b"):
        logs.create_log_group(logGroupName=name)
        group_arns.append(
            next(g["arn"] for g in logs.describe_log_groups(logGroupNamePrefix=name)["logGroups"])
        )
    one, two = ({"cloudWatchLogsLogGroup": {"logGroupArn": arn}} for arn in group_arns)
    missing = {
        "cloudWatchLogsLogGroup": {"logGroupArn": group_arns[0].replace("sfn-logs-a", "sfn-logs-gone")}
    }
    refusals = [
        ({"level": "ERROR"}, "Must specify exactly one Log Destination."),
        ({"level": "ALL", "destinations": [one, two]}, "Must specify exactly one Log Destination."),
        ({"level": "ALL", "destinations": [missing]}, "Log Destination not found."),
    ]
    for configuration, message in refusals:
        with pytest.raises(ClientError) as refused:
            sfn.create_state_machine(
                name="logs-refused",
                definition=definition,
                roleArn=role_arn,
                loggingConfiguration=configuration,
            )
        assert refused.value.response["Error"] == {
            "Code": "InvalidLoggingConfiguration",
            "Message": LOG_REFUSED + message,
        }

    arn = sfn.create_state_machine(
        name="logs-kept", definition=definition, roleArn=role_arn, loggingConfiguration={}
    )["stateMachineArn"]
    assert sfn.describe_state_machine(stateMachineArn=arn)["loggingConfiguration"]["level"] == "OFF"
    sfn.update_state_machine(
        stateMachineArn=arn, loggingConfiguration={"level": "ALL", "destinations": [one]}
    )
    assert sfn.describe_state_machine(stateMachineArn=arn)["loggingConfiguration"]["destinations"] == [one]
    code, _, stderr = run_aws_cli(
        cloud, "stepfunctions", "update-state-machine", "--state-machine-arn", arn,
        "--logging-configuration", json.dumps({"level": "ALL"}),
    )  # fmt: skip
    assert code != 0 and "InvalidLoggingConfiguration" in stderr and "Must specify exactly one" in stderr
