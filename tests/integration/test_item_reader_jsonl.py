"""The local cloud's ItemReader reads JSON Lines, and lists keys S3's XML cannot carry raw
(docagent/localcloud/stepfunctions/item_reader.py, s3_listing.py). The definition is the AWS docs'
ItemReader example
("ItemReader (Map)", https://docs.aws.amazon.com/step-functions/latest/dg/input-output-itemreader.html, as of
2026-11) with InputType JSONL, one of the five types the page lists."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

from tests.integration.conftest import aws_cli
from tests.support import wait_for_execution

BUCKET = "jsonl-items"
ECHO = "def handler(event, context):\n    return event\n"


@pytest.fixture(scope="module")
def bucket(aws) -> str:
    aws("s3").create_bucket(Bucket=BUCKET)
    return BUCKET


def run_map(aws, role_arn: str, function_arn: str, key: str, reader_config: dict[str, Any]) -> dict[str, Any]:
    definition = {
        "StartAt": "Map",
        "States": {
            "Map": {
                "Type": "Map",
                "ItemReader": {
                    "ReaderConfig": reader_config,
                    "Resource": "arn:aws:states:::s3:getObject",
                    "Parameters": {"Bucket": BUCKET, "Key": key},
                },
                "ItemProcessor": {
                    "ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"},
                    "StartAt": "Echo",
                    "States": {
                        "Echo": {
                            "Type": "Task",
                            "Resource": "arn:aws:states:::lambda:invoke",
                            "Parameters": {"FunctionName": function_arn, "Payload.$": "$"},
                            "OutputPath": "$.Payload",
                            "End": True,
                        }
                    },
                },
                "End": True,
            }
        },
    }
    sfn = aws("stepfunctions")
    arn = sfn.create_state_machine(
        name=f"jsonl-{uuid.uuid4().hex[:8]}", definition=json.dumps(definition), roleArn=role_arn
    )["stateMachineArn"]
    execution = sfn.start_execution(stateMachineArn=arn, input="{}")["executionArn"]
    return wait_for_execution(sfn, execution, timeout=60)


@pytest.fixture
def echo_arn(aws, make_function) -> str:
    return str(aws("lambda").get_function(FunctionName=make_function(ECHO))["Configuration"]["FunctionArn"])


def test_each_line_of_a_jsonl_file_is_one_item(aws, role_arn, bucket, echo_arn):
    lines = [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}, {"id": 3, "name": "c"}]
    body = "".join(json.dumps(line) + "\n" for line in lines)
    aws("s3").put_object(Bucket=bucket, Key="items/three.jsonl", Body=body.encode())

    described = run_map(aws, role_arn, echo_arn, "items/three.jsonl", {"InputType": "JSONL"})
    assert described["status"] == "SUCCEEDED", described.get("cause")
    assert json.loads(described["output"]) == lines

    limited = run_map(aws, role_arn, echo_arn, "items/three.jsonl", {"InputType": "JSONL", "MaxItems": 2})
    assert json.loads(limited["output"]) == lines[:2]


def test_a_line_that_is_not_json_fails_the_item_reader(aws, role_arn, bucket, echo_arn):
    aws("s3").put_object(Bucket=bucket, Key="items/bad.jsonl", Body=b'{"id": 1}\n{"id": \n')
    described = run_map(aws, role_arn, echo_arn, "items/bad.jsonl", {"InputType": "JSONL"})
    assert described["status"] == "FAILED"
    assert described["error"] == "States.ItemReaderFailed"
    assert "Line 2" in described["cause"]


def test_a_key_with_a_control_character_lists_through_the_aws_cli(cloud, aws, bucket):
    """S3 sends such a key URL-encoded when asked (EncodingType=url; the CLI asks, and decodes)."""
    key = "odd/tab\there-\x01.txt"
    aws("s3").put_object(Bucket=bucket, Key=key, Body=b"x")
    listed = aws_cli(cloud, "s3api", "list-object-versions", "--bucket", bucket, "--prefix", "odd/")
    assert [version["Key"] for version in listed["Versions"]] == [key]
    page = aws("s3").list_object_versions(Bucket=bucket, Prefix="odd/", EncodingType="url")
    assert page["EncodingType"] == "url" and page["Versions"][0]["Key"] == "odd/tab%09here-%01.txt"
