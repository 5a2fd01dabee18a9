"""cdk-nag v3 acknowledgements, kept next to the resources they concern.

cdk-nag 3 runs as a CDK validation plugin; a finding is acknowledged with
``Validations.of(construct).acknowledge(...)``, which covers the construct and everything under it.
IAM5 findings must be acknowledged one wildcard at a time, by the exact text cdk-nag prints, so the
ids are computed from the same ARN expressions the policies use instead of being typed by hand.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from aws_cdk import Acknowledgment, Stack, Validations
from constructs import IConstruct

RULE_PACK = "AwsSolutions"


def acknowledge(construct: IConstruct, rule: str, reason: str) -> None:
    """Acknowledge one AwsSolutions rule (e.g. ``"S1"``) on a construct and its children."""
    Validations.of(construct).acknowledge(Acknowledgment(id=f"{RULE_PACK}-{rule}", reason=reason))


def acknowledge_wildcard_resources(construct: IConstruct, resources: Iterable[str], reason: str) -> None:
    """Acknowledge AwsSolutions-IAM5 for exactly these wildcard resource ARNs (tokens allowed)."""
    stack = Stack.of(construct)
    for resource in dict.fromkeys(resources):
        finding = f"Resource::{flatten_cfn_reference(stack.resolve(resource))}"
        acknowledge(construct, f"IAM5[{finding}]", reason)


def flatten_cfn_reference(node: Any) -> str:
    """Render a resolved CloudFormation value the way cdk-nag names it in findings.

    A port of cdk-nag's ``flattenCfnReference``: Fn::Join is joined, ``{"Fn::GetAtt": [id, attr]}``
    becomes ``<id.attr>`` and ``{"Ref": id}`` becomes ``<id>``.
    """
    if node is None:
        return ""
    if isinstance(node, str):
        return node.replace("${", "<").replace("}", ">")
    if isinstance(node, dict):
        if "Fn::Join" in node:
            delimiter, items = node["Fn::Join"]
            return str(delimiter).join(flatten_cfn_reference(item) for item in items)
        if "Fn::Sub" in node:
            return flatten_cfn_reference(node["Fn::Sub"])
        if "Fn::GetAtt" in node:
            resource, attribute = node["Fn::GetAtt"]
            return f"<{flatten_cfn_reference(resource)}.{flatten_cfn_reference(attribute)}>"
        if "Fn::ImportValue" in node:
            return flatten_cfn_reference(node["Fn::ImportValue"])
        if "Ref" in node:
            return f"<{flatten_cfn_reference(node['Ref'])}>"
    return json.dumps(node, separators=(",", ":"))
