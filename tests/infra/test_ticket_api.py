"""The HTTP ticket adapter's deployment: the URL as an SSM dynamic reference, and the token's secret granted
to the two functions that call the ticket API, on that secret only, and only when it is configured."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pytest
from aws_cdk import aws_iam as iam
from cdk_nag import AwsSolutionsChecks

from stacks.config import ConfigError, load_config
from stacks.docagent_stack import DocAgentStack
from stacks.functions import function_environment
from tests.infra.conftest import Synthesized, construct_stack, grants, resolved_policy_statements

SECRET_ARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:docagent/ticket-api-AbCdEf"
URL_REFERENCE = "{{resolve:ssm:/docagent/local/ticket-api-url}}"
TICKET_FUNCTIONS = {"CreateTicket", "VerifyJob"}


@pytest.fixture(scope="module")
def http_stack(tmp_path_factory: pytest.TempPathFactory) -> DocAgentStack:
    return construct_stack(
        tmp_path_factory.mktemp("http-tickets"),
        stack_name="DocAgentHttpTickets",
        ticket_adapter="http",
        ticket_api_url=URL_REFERENCE,
        ticket_api_secret_arn=SECRET_ARN,
    )


def secret_grants(stack: DocAgentStack, function_id: str) -> set[tuple[str, str]]:
    role = cast(iam.CfnRole, stack.functions.node.find_child(f"{function_id}Role").node.default_child)
    statements = list(resolved_policy_statements(stack, role))
    return {grant for grant in grants(statements) if grant[0].startswith("secretsmanager:")}


def test_an_ssm_dynamic_reference_is_a_valid_ticket_api_url() -> None:
    config = load_config({"ticket_adapter": "http", "ticket_api_url": URL_REFERENCE})
    assert config.ticket_api_url == URL_REFERENCE


@pytest.mark.parametrize(
    "url",
    ["{{resolve:secretsmanager:x}}", "{{resolve:ssm:}}", "{{resolve:ssm:/a b}}", "prefix{{resolve:ssm:/a}}"],
)
def test_other_dynamic_references_are_refused(url: str) -> None:
    with pytest.raises(ConfigError, match="ticket_api_url"):
        load_config({"ticket_adapter": "http", "ticket_api_url": url})


@pytest.mark.parametrize("arn", ["docagent/ticket-api", "arn:aws:s3:::bucket", SECRET_ARN + "*"])
def test_a_malformed_secret_arn_is_refused(arn: str) -> None:
    with pytest.raises(ConfigError, match="ticket_api_secret_arn"):
        load_config({"ticket_api_secret_arn": arn})


def test_the_url_reference_and_the_secret_reach_the_environment(http_stack: DocAgentStack) -> None:
    variables = function_environment(http_stack.config, http_stack.storage, code_version="0123456789ab")
    assert variables["TICKET_API_URL"] == URL_REFERENCE, "left for CloudFormation to resolve at deploy"
    assert variables["TICKET_API_SECRET_ARN"] == SECRET_ARN


def test_only_the_ticket_functions_may_read_the_token_and_only_that_secret(http_stack: DocAgentStack) -> None:
    for function_id in http_stack.functions.by_id:
        expected = (
            {("secretsmanager:GetSecretValue", SECRET_ARN)} if function_id in TICKET_FUNCTIONS else set()
        )
        assert secret_grants(http_stack, function_id) == expected, function_id


def test_without_a_secret_nothing_is_granted(synthesized: Synthesized) -> None:
    for function_id in synthesized.stack.functions.by_id:
        assert secret_grants(synthesized.stack, function_id) == set(), function_id


def test_the_http_adapter_stack_passes_cdk_nag(http_stack: DocAgentStack, tmp_path: Path) -> None:
    report = AwsSolutionsChecks(verbose=True).validate_scope(http_stack)
    assert [(finding.rule_name, finding.severity) for finding in report.violations] == []
