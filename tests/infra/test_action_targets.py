"""The actions' deployment: the allow-list as the functions' ACTIONS_ALLOWED (a deploy-time reference left
for CloudFormation), and as IAM: RunActions may put events on the allowed buses, publish to the allowed topics
and read the allowed secrets and parameters; VerifyJob the secrets and parameters only (its http lookups); no
other function any of them, and nothing at all when the deployment allows none."""

from __future__ import annotations

import json
from pathlib import Path
from typing import cast

import pytest
from aws_cdk import aws_iam as iam
from cdk_nag import AwsSolutionsChecks

from stacks.docagent_stack import DocAgentStack
from stacks.lambdas import function_environment
from tests.infra.conftest import (
    VARIANT_SECRET_ARN,
    VARIANT_TOPIC_ARN,
    VARIANT_URL_REFERENCE,
    Synthesized,
    grants,
    resolved_policy_statements,
)

TARGET_ACTIONS = ("events:", "sns:", "secretsmanager:", "ssm:")


@pytest.fixture
def actions_stack(variant_stack: DocAgentStack) -> DocAgentStack:
    """The stack whose deployment allows conftest's VARIANT_ACTIONS: the variant stack."""
    return variant_stack


def target_grants(stack: DocAgentStack, function_id: str) -> set[tuple[str, str]]:
    role = cast(iam.CfnRole, stack.functions.node.find_child(f"{function_id}Role").node.default_child)
    statements = list(resolved_policy_statements(stack, role))
    return {grant for grant in grants(statements) if grant[0].startswith(TARGET_ACTIONS)}


def test_the_allow_list_reaches_the_environment_with_its_reference_unresolved(
    actions_stack: DocAgentStack,
) -> None:
    variables = function_environment(actions_stack.config, actions_stack.storage, code_version="0123456789ab")
    allowed = json.loads(variables["ACTIONS_ALLOWED"])
    assert allowed["destinations"] == {"tickets": VARIANT_URL_REFERENCE}, (
        "left for CloudFormation to resolve at deploy"
    )
    assert allowed["topics"] == [VARIANT_TOPIC_ARN]


def test_only_run_actions_may_reach_the_targets_and_verify_job_read_the_secrets(
    actions_stack: DocAgentStack,
) -> None:
    secrets = {
        ("secretsmanager:GetSecretValue", VARIANT_SECRET_ARN),
        (
            "ssm:GetParameter",
            "arn:<AWS::Partition>:ssm:<AWS::Region>:<AWS::AccountId>:parameter/docagent/tokens/*",
        ),
    }
    bus = "arn:<AWS::Partition>:events:<AWS::Region>:<AWS::AccountId>:event-bus/jobs"
    expected = {
        "RunActions": secrets | {("events:PutEvents", bus), ("sns:Publish", VARIANT_TOPIC_ARN)},
        "VerifyJob": secrets,
    }
    for function_id in actions_stack.functions.by_id:
        assert target_grants(actions_stack, function_id) == expected.get(function_id, set()), function_id


def test_without_targets_nothing_is_granted(synthesized: Synthesized) -> None:
    for function_id in synthesized.stack.functions.by_id:
        assert target_grants(synthesized.stack, function_id) == set(), function_id


def test_the_actions_stack_passes_cdk_nag(actions_stack: DocAgentStack, tmp_path: Path) -> None:
    report = AwsSolutionsChecks(verbose=True).validate_scope(actions_stack)
    assert [(finding.rule_name, finding.severity) for finding in report.violations] == []
