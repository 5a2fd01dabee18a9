"""What the local cloud does not honour is refused, naming it, never silently ignored and never an HTTP 500
(docs/sfn-api-coverage.md, generated from botocore's model by
docagent/localcloud/stepfunctions/api_coverage.py)."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from docagent.localcloud.server import REGION, LocalCloud
from docagent.localcloud.stepfunctions import api_coverage as sfn_api
from tests.integration.conftest import run_aws_cli

PASS = {"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}}


@pytest.fixture(scope="module")
def machine(aws: Any, role_arn: str) -> str:
    created = aws("stepfunctions").create_state_machine(
        name="guarded", definition=json.dumps(PASS), roleArn=role_arn
    )
    return str(created["stateMachineArn"])


def test_a_refused_parameter_is_a_validation_exception_naming_it(cloud: LocalCloud, machine: str) -> None:
    code, _, stderr = run_aws_cli(
        cloud,
        "stepfunctions",
        "describe-execution",
        "--execution-arn",
        machine.replace(":stateMachine:", ":execution:") + ":any",
        "--included-data",
        "METADATA_ONLY",
    )
    assert code != 0
    assert "ValidationException" in stderr and "includedData" in stderr


def test_an_action_not_served_is_named_not_a_server_error(
    cloud: LocalCloud, machine: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every action is served since #43 (versions, activities): the guard is shown on one taken out of the
    table (the local cloud serves from this process)."""
    monkeypatch.delitem(sfn_api.SERVED, "ListStateMachineVersions")
    sfn = boto3.client(
        "stepfunctions", endpoint_url=cloud.endpoint, region_name=REGION, aws_access_key_id="local",
        aws_secret_access_key="local", config=Config(inject_host_prefix=False, retries={"max_attempts": 1}),
    )  # fmt: skip
    with pytest.raises(ClientError) as refused:
        sfn.list_state_machine_versions(stateMachineArn=machine)
    error = refused.value.response
    assert error["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert error["Error"]["Code"] == "UnknownOperationException"
    assert "ListStateMachineVersions" in error["Error"]["Message"]
