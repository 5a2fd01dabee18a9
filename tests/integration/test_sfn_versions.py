"""State machine versions and aliases on the local cloud.

Sources (read 2026-12-04): AWS API reference "PublishStateMachineVersion", "ListStateMachineVersions",
"DeleteStateMachineVersion", "StartExecution" (a version's or alias's ARN; the execution names
``stateMachineVersionArn`` and ``stateMachineAliasArn``), and LocalStack's AWS-validated snapshot
test_sfn_api_versioning (real AWS answers: an unchanged machine publishes the same version, versions
listed newest first, deleting a deleted version is no error, a version's execution listed under its
machine)."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

import pytest

pytestmark = pytest.mark.integration

ROLE = "arn:aws:iam::123456789012:role/local"
PASS = {"StartAt": "P", "States": {"P": {"Type": "Pass", "Result": "R1", "End": True}}}


def _done(sfn: Any, execution: str) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while (described := sfn.describe_execution(executionArn=execution))["status"] == "RUNNING":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    found: dict[str, Any] = described
    return found


def test_versions_are_published_listed_run_and_deleted(aws: Any) -> None:
    sfn = aws("stepfunctions")
    machine = sfn.create_state_machine(
        name=f"ver-{uuid.uuid4().hex[:8]}", definition=json.dumps(PASS), roleArn=ROLE
    )["stateMachineArn"]
    first = sfn.publish_state_machine_version(stateMachineArn=machine)["stateMachineVersionArn"]
    assert first == f"{machine}:1"
    assert sfn.publish_state_machine_version(stateMachineArn=machine)["stateMachineVersionArn"] == first
    second_definition = {"StartAt": "P", "States": {"P": {"Type": "Pass", "Result": "R2", "End": True}}}
    sfn.update_state_machine(stateMachineArn=machine, definition=json.dumps(second_definition))
    second = sfn.publish_state_machine_version(stateMachineArn=machine, description="v2")[
        "stateMachineVersionArn"
    ]
    listed = sfn.list_state_machine_versions(stateMachineArn=machine)["stateMachineVersions"]
    assert [item["stateMachineVersionArn"] for item in listed] == [second, first]

    run = _done(sfn, sfn.start_execution(stateMachineArn=first)["executionArn"])
    assert run["status"] == "SUCCEEDED", run
    assert json.loads(run["output"]) == "R1"  # the version's definition
    assert (run["stateMachineArn"], run["stateMachineVersionArn"]) == (machine, first)
    alias = sfn.create_state_machine_alias(
        name="live", routingConfiguration=[{"stateMachineVersionArn": second, "weight": 100}]
    )["stateMachineAliasArn"]
    through_alias = _done(sfn, sfn.start_execution(stateMachineArn=alias)["executionArn"])
    assert json.loads(through_alias["output"]) == "R2"
    assert (through_alias["stateMachineVersionArn"], through_alias["stateMachineAliasArn"]) == (second, alias)
    listed_runs = sfn.list_executions(stateMachineArn=machine)["executions"]
    assert {item["executionArn"] for item in listed_runs} == {
        run["executionArn"],
        through_alias["executionArn"],
    }

    sfn.delete_state_machine_version(stateMachineVersionArn=first)
    sfn.delete_state_machine_version(stateMachineVersionArn=first)  # gone already: no error
    listed = sfn.list_state_machine_versions(stateMachineArn=machine)["stateMachineVersions"]
    assert [item["stateMachineVersionArn"] for item in listed] == [second]
    with pytest.raises(sfn.exceptions.StateMachineDoesNotExist):
        sfn.start_execution(stateMachineArn=first)
