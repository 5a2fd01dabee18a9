"""m2: which model calls the roles that invoke a model allow, evaluated as IAM would (the statements'
resources, actions and conditions) for requests made in one Region: a geographic profile's model only in its
geography and only through the profile; a global profile's as AWS documents it (aws:RequestedRegion
"unspecified" for the Region-less model ARN)."""

from __future__ import annotations

import fnmatch
from typing import Any, cast

import pytest
from aws_cdk import aws_iam as iam

from stacks.docagent_stack import DocAgentStack
from stacks.nag import flatten_cfn_reference
from tests.infra.conftest import (
    VARIANT_CHEAP,
    VARIANT_HAIKU,
    Synthesized,
    as_list,
    resolved_policy_statements,
)

ACCOUNT = "123456789012"
HAIKU = VARIANT_HAIKU
CHEAP = VARIANT_CHEAP


def _render(value: Any, region: str) -> Any:
    if isinstance(value, dict) and not ({"Ref", "Fn::Join", "Fn::GetAtt", "Fn::Sub"} & value.keys()):
        return {key: _render(item, region) for key, item in value.items()}
    if isinstance(value, list):
        return [_render(item, region) for item in value]
    text = flatten_cfn_reference(value)
    return (
        text.replace("<AWS::Partition>", "aws")
        .replace("<AWS::Region>", region)
        .replace("<AWS::AccountId>", ACCOUNT)
    )


def _statements(stack: DocAgentStack, role_id: str, region: str) -> list[dict[str, Any]]:
    role = cast(iam.CfnRole, stack.functions.node.find_child(role_id).node.default_child)
    return [_render(statement, region) for statement in resolved_policy_statements(stack, role)]


def _holds(conditions: dict[str, dict[str, Any]], context: dict[str, str]) -> bool:
    tests = {"StringEquals": str.__eq__, "StringLike": fnmatch.fnmatchcase, "ArnEquals": str.__eq__}
    return all(
        key in context and any(tests[operator](context[key], str(value)) for value in as_list(expected))
        for operator, pairs in conditions.items()
        for key, expected in pairs.items()
    )


def allowed(statements: list[dict[str, Any]], resource: str, context: dict[str, str]) -> bool:
    return any(
        statement["Effect"] == "Allow"
        and "bedrock:InvokeModel" in as_list(statement["Action"])
        and any(fnmatch.fnmatchcase(resource, pattern) for pattern in as_list(statement["Resource"]))
        and _holds(statement.get("Condition", {}), context)
        for statement in statements
    )


def model(region: str, model_id: str = HAIKU) -> str:
    return f"arn:aws:bedrock:{region}::foundation-model/{model_id}"


def profile(region: str, profile_id: str) -> str:
    return f"arn:aws:bedrock:{region}:{ACCOUNT}:inference-profile/{profile_id}"


@pytest.fixture
def eu_stack(variant_stack: DocAgentStack) -> DocAgentStack:
    """The variant stack (conftest.py): the eu. profile of Haiku, the cheap model as an extra model."""
    assert (variant_stack.config.model_id, variant_stack.config.extra_model_ids) == (f"eu.{HAIKU}", [CHEAP])
    return variant_stack


@pytest.mark.parametrize("role_id", ["ProcessDocumentRole", "BatchInferenceServiceRole"])
def test_a_geographic_profile_reaches_its_model_only_in_its_geography(
    eu_stack: DocAgentStack, role_id: str
) -> None:
    statements = _statements(eu_stack, role_id, "eu-west-1")
    eu = profile("eu-west-1", f"eu.{HAIKU}")
    assert allowed(statements, eu, {"aws:RequestedRegion": "eu-west-1"})
    for destination in ("eu-west-1", "eu-central-1", "eu-north-1"):
        routed = {"aws:RequestedRegion": destination, "bedrock:InferenceProfileArn": eu}
        assert allowed(statements, model(destination), routed), destination
    # The residency the eu. profile promises: not in the US, and not called directly.
    assert not allowed(
        statements,
        model("us-east-1"),
        {"aws:RequestedRegion": "us-east-1", "bedrock:InferenceProfileArn": eu},
    )
    assert not allowed(statements, model("eu-central-1"), {"aws:RequestedRegion": "eu-central-1"})
    # extra_model_ids: a foundation model in the stack's Region.
    assert allowed(statements, model("eu-west-1", CHEAP), {"aws:RequestedRegion": "eu-west-1"})
    assert not allowed(statements, model("us-east-1", CHEAP), {"aws:RequestedRegion": "us-east-1"})


def test_the_global_profile_is_granted_as_aws_documents_it(synthesized: Synthesized) -> None:
    stack = synthesized.stack
    assert stack.config.model_id == f"global.{HAIKU}"
    statements = _statements(stack, "ProcessDocumentRole", "eu-west-1")
    glob = profile("eu-west-1", f"global.{HAIKU}")
    through = {"bedrock:InferenceProfileArn": glob}
    assert allowed(statements, glob, {"aws:RequestedRegion": "eu-west-1"})
    assert allowed(statements, model("eu-west-1"), {"aws:RequestedRegion": "eu-west-1", **through})
    assert allowed(statements, model(""), {"aws:RequestedRegion": "unspecified", **through})
    # Never the model directly, nor in another named Region.
    assert not allowed(statements, model("eu-west-1"), {"aws:RequestedRegion": "eu-west-1"})
    assert not allowed(statements, model("us-east-1"), {"aws:RequestedRegion": "us-east-1", **through})
    assert not allowed(statements, model(""), {"aws:RequestedRegion": "unspecified"})
