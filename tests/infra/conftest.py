"""One synthesis of the real app per test session (jsii makes each one cost seconds), shared by every test.

Other configurations are only constructed, never synthesized: their CloudFormation values are read with
``stack.resolve`` on the L1 resources, which is what synthesis would write.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

from app import build_app
from stacks.config import CONTEXT_KEY, cdk_json_context
from stacks.docagent_stack import DocAgentStack
from stacks.nag import flatten_cfn_reference


@dataclass(frozen=True)
class Synthesized:
    app: cdk.App
    stack: DocAgentStack
    assembly: Any
    template: Template
    template_json: dict[str, Any]
    outdir: Path

    def resources(self, resource_type: str) -> dict[str, dict[str, Any]]:
        """Logical id -> resource, for every resource of the type."""
        return {
            logical_id: resource
            for logical_id, resource in self.template_json["Resources"].items()
            if resource["Type"] == resource_type
        }

    def logical_id(self, construct: cdk.CfnElement | Any) -> str:
        element = construct.node.default_child if not isinstance(construct, cdk.CfnElement) else construct
        return str(self.stack.resolve(element.logical_id))


@pytest.fixture(scope="session")
def synthesized(tmp_path_factory: pytest.TempPathFactory) -> Synthesized:
    outdir = tmp_path_factory.mktemp("cdk.out")
    app, stack = build_app(outdir=str(outdir))
    assembly = app.synth()
    template_json = assembly.get_stack_artifact(stack.artifact_id).template
    return Synthesized(
        app=app,
        stack=stack,
        assembly=assembly,
        template=Template.from_json(template_json),
        template_json=template_json,
        outdir=outdir,
    )


def default_docagent_context() -> dict[str, Any]:
    context: dict[str, Any] = cdk_json_context()[CONTEXT_KEY]
    return dict(context)


# CDK's own switch: no stack's assets are bundled. The document layer's bundling is two pip processes (an
# install of its wheels, about 3 CPU-s) at every construction; its asset hash is CUSTOM (the pins), so the
# template is the same without it. The session's one synthesis (``synthesized``) bundles it for real.
NO_BUNDLING: dict[str, Any] = {"aws:cdk:bundling-stacks": []}


def construct_stack(tmp_path: Path, **overrides: Any) -> DocAgentStack:
    """The app built (not synthesized, its assets not bundled) with cdk.json's docagent settings plus these
    overrides."""
    context = {CONTEXT_KEY: {**default_docagent_context(), **overrides}, **NO_BUNDLING}
    _, stack = build_app(context, outdir=str(tmp_path))
    return stack


@pytest.fixture(scope="session")
def express_inference_profile_stack(tmp_path_factory: pytest.TempPathFactory) -> DocAgentStack:
    """EXPRESS children and a cross-region inference profile: the knobs that change the template most."""
    return construct_stack(
        tmp_path_factory.mktemp("express"),
        stack_name="DocAgentExpress",
        child_execution_type="EXPRESS",
        model_id="us.anthropic.claude-3-5-haiku-20241022-v1:0",
        extra_model_ids=["anthropic.claude-3-haiku-20240307-v1:0"],  # a definition's cheap model
        actions={"destinations": {"tickets": "https://tickets.example.com/api/tickets"}},
        log_level="DEBUG",
        max_concurrency=25,
        source_locations=["incoming/", "s3://partner-drop/invoices/"],
    )


# The settings a few tests each prove to flow into the template; one stack holds them all (constructing a
# stack costs seconds of jsii): the actions' allow-list (test_action_targets.py), a geographic profile with
# a cheap model (test_model_grants.py), and the alarms' and workflow's numbers (test_observability.py,
# test_workflow.py). Each test reads only its own setting, so none hides another.
VARIANT_HAIKU = "anthropic.claude-haiku-4-5-20251001-v1:0"
VARIANT_CHEAP = "anthropic.claude-3-haiku-20240307-v1:0"
VARIANT_TOPIC_ARN = "arn:aws:sns:us-east-1:123456789012:jobs"
VARIANT_SECRET_ARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:docagent/ticket-api-AbCdEf"
VARIANT_URL_REFERENCE = "{{resolve:ssm:/docagent/local/ticket-api-url}}/tickets"
VARIANT_ACTIONS = {
    "destinations": {"tickets": VARIANT_URL_REFERENCE},
    "event_buses": ["jobs"],
    "topics": [VARIANT_TOPIC_ARN],
    "secrets": [VARIANT_SECRET_ARN, "ssm:/docagent/tokens/"],
}
VARIANT_SETTINGS: dict[str, Any] = {
    "stack_name": "DocAgentVariant",
    "actions": VARIANT_ACTIONS,
    "model_id": f"eu.{VARIANT_HAIKU}",
    "extra_model_ids": [VARIANT_CHEAP],
    "alert_email": "oncall@example.com",
    "model_throttle_alarm_threshold": 40,
    "approval_alarm_seconds": 3600,
    "job_timeout_seconds": 200_000,
    "approval_timeout_seconds": 120,
    "fault_injection_enabled": True,  # the fault drills' firings (test_functions.py)
}


@pytest.fixture(scope="session")
def variant_stack(tmp_path_factory: pytest.TempPathFactory) -> DocAgentStack:
    """The app constructed (not synthesized) with every setting of VARIANT_SETTINGS."""
    return construct_stack(tmp_path_factory.mktemp("variant"), **VARIANT_SETTINGS)


def resolved_policy_statements(stack: cdk.Stack, role: cdk.aws_iam.CfnRole) -> Iterator[dict[str, Any]]:
    """Every statement of the role's inline policies, resolved to CloudFormation values."""
    for policy in stack.resolve(role.policies) or []:
        yield from stack.resolve(policy["policyDocument"])["Statement"]


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def pretty(value: Any) -> str:
    return json.dumps(value, indent=1, sort_keys=True)


def grants(statements: Iterator[dict[str, Any]] | list[dict[str, Any]]) -> set[tuple[str, str]]:
    """(action, resource) pairs that the statements allow, resources written as cdk-nag prints them."""
    return {
        (action, flatten_cfn_reference(resource))
        for statement in statements
        if statement["Effect"] == "Allow"
        for action in as_list(statement["Action"])
        for resource in as_list(statement["Resource"])
    }


def template_role_grants(role: dict[str, Any]) -> set[tuple[str, str]]:
    return grants(
        [
            statement
            for policy in role["Properties"].get("Policies", [])
            for statement in policy["PolicyDocument"]["Statement"]
        ]
    )
