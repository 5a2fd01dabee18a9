"""GetExecutionHistory as AWS documents it (API reference "GetExecutionHistory", looked up 2026-12-01):
ascending order by default, ``reverseOrder`` for the latest first, pages of ``maxResults`` (0: the default
of 100) joined by ``nextToken`` (a token it did not hand out: HTTP 400 InvalidToken), and
``includeExecutionData=false`` leaving the events' input and output out."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from botocore.exceptions import ClientError

from docagent.localcloud.server import LocalCloud
from tests.integration.conftest import aws_cli

STEPS = {
    "StartAt": "One",
    "States": {
        "One": {"Type": "Pass", "Result": {"secret": 1}, "Next": "Two"},
        "Two": {"Type": "Pass", "Next": "Three"},
        "Three": {"Type": "Pass", "End": True},
    },
}


@pytest.fixture(scope="module")
def finished(aws: Any, role_arn: str) -> str:
    sfn = aws("stepfunctions")
    machine = sfn.create_state_machine(name="history-paging", definition=json.dumps(STEPS), roleArn=role_arn)
    execution = str(
        sfn.start_execution(stateMachineArn=machine["stateMachineArn"], input='{"x": 1}')["executionArn"]
    )
    for _ in range(200):
        if sfn.describe_execution(executionArn=execution)["status"] != "RUNNING":
            return execution
        time.sleep(0.05)
    raise AssertionError("the execution did not finish")


def test_the_cli_reverse_order_max_items_1_gives_the_last_event(cloud: LocalCloud, finished: str) -> None:
    events = aws_cli(
        cloud, "stepfunctions", "get-execution-history", "--execution-arn", finished,
        "--reverse-order", "--max-items", "1",
    )["events"]  # fmt: skip
    assert [event["type"] for event in events] == ["ExecutionSucceeded"]


def test_pages_of_max_results_join_into_the_whole_history(aws: Any, finished: str) -> None:
    sfn = aws("stepfunctions")
    whole = sfn.get_execution_history(executionArn=finished)["events"]
    assert whole[0]["type"] == "ExecutionStarted"
    assert [event["id"] for event in whole] == sorted(event["id"] for event in whole)
    for reverse in (False, True):
        pages, token = [], None
        while True:
            asked = {"nextToken": token} if token else {}
            answer = sfn.get_execution_history(
                executionArn=finished, maxResults=2, reverseOrder=reverse, **asked
            )
            assert len(answer["events"]) <= 2
            pages.extend(answer["events"])
            token = answer.get("nextToken")
            if token is None:
                break
        assert pages == (whole[::-1] if reverse else whole)
    assert len(sfn.get_execution_history(executionArn=finished, maxResults=0)["events"]) == len(whole)


def test_a_token_from_other_arguments_or_made_up_is_invalid_token(aws: Any, finished: str) -> None:
    sfn = aws("stepfunctions")
    token = sfn.get_execution_history(executionArn=finished, maxResults=1)["nextToken"]
    for asked in ({"nextToken": "made-up"}, {"nextToken": token, "reverseOrder": True}):
        with pytest.raises(ClientError) as refused:
            sfn.get_execution_history(executionArn=finished, maxResults=1, **asked)
        assert refused.value.response["Error"]["Code"] == "InvalidToken"
        assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_include_execution_data_false_leaves_input_and_output_out(aws: Any, finished: str) -> None:
    sfn = aws("stepfunctions")
    full = sfn.get_execution_history(executionArn=finished)["events"]
    bare = sfn.get_execution_history(executionArn=finished, includeExecutionData=False)["events"]
    assert [event["type"] for event in bare] == [event["type"] for event in full]
    assert "input" in full[0]["executionStartedEventDetails"]
    for event in bare:
        for key, value in event.items():
            if key.endswith("EventDetails"):
                assert not {"input", "output"} & set(value), event
