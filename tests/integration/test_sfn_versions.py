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


def _distributed(name: str, next_state: str | None) -> dict[str, Any]:
    config = {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}
    inner = {f"{name}I": {"Type": "Pass", "End": True}}
    processor = {"ProcessorConfig": config, "StartAt": f"{name}I", "States": inner}
    state: dict[str, Any] = {"Type": "Map", "ItemProcessor": processor, "ResultPath": None}
    return {name: {**state, **({"Next": next_state} if next_state else {"End": True})}}


def test_versions_and_map_runs_are_paged_as_every_list(aws: Any) -> None:
    """maxResults/nextToken as the API reference pages every list; a token of another list is InvalidToken."""
    sfn = aws("stepfunctions")
    definition: dict[str, Any] = {
        "StartAt": "A",
        "States": {**_distributed("A", "B"), **_distributed("B", None)},
    }
    machine = sfn.create_state_machine(
        name=f"pg-{uuid.uuid4().hex[:8]}", definition=json.dumps(definition), roleArn=ROLE
    )["stateMachineArn"]
    versions = []
    for comment in ("one", "two", "three"):
        sfn.update_state_machine(
            stateMachineArn=machine, definition=json.dumps({**definition, "Comment": comment})
        )
        versions.append(sfn.publish_state_machine_version(stateMachineArn=machine)["stateMachineVersionArn"])
    first_page = sfn.list_state_machine_versions(stateMachineArn=machine, maxResults=2)
    assert [v["stateMachineVersionArn"] for v in first_page["stateMachineVersions"]] == versions[:0:-1]
    rest = sfn.list_state_machine_versions(
        stateMachineArn=machine, maxResults=2, nextToken=first_page["nextToken"]
    )
    assert [v["stateMachineVersionArn"] for v in rest["stateMachineVersions"]] == versions[:1]
    assert "nextToken" not in rest

    execution = sfn.start_execution(stateMachineArn=machine, input="[1, 2]")["executionArn"]
    assert _done(sfn, execution)["status"] == "SUCCEEDED"
    every_run = sfn.list_map_runs(executionArn=execution)["mapRuns"]
    assert len(every_run) == 2 and "nextToken" not in sfn.list_map_runs(executionArn=execution)
    one = sfn.list_map_runs(executionArn=execution, maxResults=1)
    other = sfn.list_map_runs(executionArn=execution, maxResults=1, nextToken=one["nextToken"])
    assert one["mapRuns"] + other["mapRuns"] == every_run and "nextToken" not in other
    with pytest.raises(sfn.exceptions.InvalidToken):
        sfn.list_map_runs(executionArn=execution, maxResults=1, nextToken=first_page["nextToken"])


def test_revisions_are_answered_and_a_stale_one_does_not_publish(aws: Any) -> None:
    """As recorded on AWS (test_sfn_api_versioning ``test_publish_state_machine_version``,
    ``test_empty_revision_with_publish_and_no_publish_on_creation``): no revisionId until an update changes
    the machine; publishing an unchanged machine again answers its version; a version keeps the revision it
    was published from; a stale revisionId is a ConflictException naming both revisions."""
    sfn = aws("stepfunctions")
    machine = sfn.create_state_machine(
        name=f"rev-{uuid.uuid4().hex[:8]}", definition=json.dumps(PASS), roleArn=ROLE
    )["stateMachineArn"]
    assert "revisionId" not in sfn.describe_state_machine(stateMachineArn=machine)
    unchanged = sfn.update_state_machine(stateMachineArn=machine, definition=json.dumps(PASS), publish=True)
    assert "revisionId" not in unchanged
    again = sfn.update_state_machine(stateMachineArn=machine, definition=json.dumps(PASS), publish=True)
    assert again["stateMachineVersionArn"] == unchanged["stateMachineVersionArn"] == f"{machine}:1"
    changed = {**PASS, "Comment": "R2"}
    second = sfn.update_state_machine(stateMachineArn=machine, definition=json.dumps(changed))["revisionId"]
    assert sfn.describe_state_machine(stateMachineArn=machine)["revisionId"] == second
    version = sfn.publish_state_machine_version(stateMachineArn=machine, revisionId=second)
    assert (
        sfn.describe_state_machine(stateMachineArn=version["stateMachineVersionArn"])["revisionId"] == second
    )
    third = sfn.update_state_machine(
        stateMachineArn=machine, definition=json.dumps({**PASS, "Comment": "R3"})
    )["revisionId"]
    assert third != second
    with pytest.raises(sfn.exceptions.ConflictException) as conflict:
        sfn.publish_state_machine_version(stateMachineArn=machine, revisionId=second)
    assert conflict.value.response["Error"]["Message"] == (
        f"Failed to publish the State Machine version for revision {second}. "
        f"The current State Machine revision is {third}."
    )


def test_the_state_machine_for_a_version_execution_is_described_as_recorded(aws: Any) -> None:
    """As recorded on AWS (test_sfn_api ``test_describe_state_machine_for_execution``, test_sfn_api_versioning
    ``test_describe_state_machine_for_execution_of_version_with_revision``): the machine's ARN, its
    ``updateDate`` and ``revisionId``, no ``creationDate``/``status``/``type``, logging with
    ``includeExecutionData`` false."""
    sfn = aws("stepfunctions")
    machine = sfn.create_state_machine(
        name=f"dfe-{uuid.uuid4().hex[:8]}", definition=json.dumps(PASS), roleArn=ROLE
    )["stateMachineArn"]
    updated = sfn.update_state_machine(
        stateMachineArn=machine, definition=json.dumps({**PASS, "Comment": "R1"}), publish=True
    )
    assert updated["stateMachineVersionArn"] == f"{machine}:1"
    execution = sfn.start_execution(stateMachineArn=updated["stateMachineVersionArn"])["executionArn"]
    described = sfn.describe_state_machine_for_execution(executionArn=execution)
    assert described["stateMachineArn"] == machine and described["revisionId"] == updated["revisionId"]
    assert "updateDate" in described and not {"creationDate", "status", "type"} & set(described)
    assert json.loads(described["definition"])["Comment"] == "R1"
    assert described["loggingConfiguration"] == {"includeExecutionData": False, "level": "OFF"}
    assert "variableReferences" not in described  # PASS reads no variable


def test_variable_references_are_described(aws: Any) -> None:
    """As recorded on AWS (test_sfn_api_variable_references ``BASE_REFERENCE_IN_FAIL``)."""
    sfn = aws("stepfunctions")
    states = {
        "Start": {"Type": "Pass", "Assign": {"errorVar": "E", "causeVar": "C"}, "Next": "Fail"},
        "Fail": {"Type": "Fail", "ErrorPath": "$errorVar", "CausePath": "$causeVar"},
    }
    machine = sfn.create_state_machine(
        name=f"vr-{uuid.uuid4().hex[:8]}",
        definition=json.dumps({"StartAt": "Start", "States": states}),
        roleArn=ROLE,
    )["stateMachineArn"]
    described = sfn.describe_state_machine(stateMachineArn=machine)
    assert described["variableReferences"] == {"Fail": ["causeVar", "errorVar"]}
    execution = sfn.start_execution(stateMachineArn=machine)["executionArn"]
    assert _done(sfn, execution)["status"] == "FAILED"
    for_execution = sfn.describe_state_machine_for_execution(executionArn=execution)
    assert for_execution["variableReferences"] == described["variableReferences"]


def test_an_execution_is_described_and_listed_as_recorded(aws: Any) -> None:
    """As recorded on AWS (test_sfn_api ``test_describe_execution``, ``test_list_executions``): inputDetails
    beside the input, and every listed execution with its redriveCount."""
    sfn = aws("stepfunctions")
    machine = sfn.create_state_machine(
        name=f"dx-{uuid.uuid4().hex[:8]}", definition=json.dumps(PASS), roleArn=ROLE
    )["stateMachineArn"]
    described = _done(sfn, sfn.start_execution(stateMachineArn=machine, input='{"a": 1}')["executionArn"])
    assert (described["inputDetails"], described["outputDetails"]) == ({"included": True}, {"included": True})
    assert [item["redriveCount"] for item in sfn.list_executions(stateMachineArn=machine)["executions"]] == [
        0
    ]
