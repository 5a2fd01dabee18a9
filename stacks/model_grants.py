"""Who may invoke which model: the InvokeModel statements of the roles that call a model (ProcessDocument's,
the batch inference service role), for every model the deployment's functions may call (``model_id``,
``extra_model_ids``), in the form AWS documents for each kind of model id (looked up 2026-12-07, Bedrock
User Guide "Geographic cross-Region inference" and "Global cross-Region inference", "IAM policy
requirements"):

- a foundation model id: the model in the stack's Region;
- a geographic profile (``us.``, ``eu.``, ``apac.``, ...): the profile in the stack's Region, and the
  foundation model in whichever Region the profile routes to, but only through that profile
  (``bedrock:InferenceProfileArn``) and only in the geography's Regions (``aws:RequestedRegion``), so an
  ``eu.`` profile's grant cannot serve a call of the model anywhere else;
- a global profile (``global.``): the profile and the foundation model in the stack's Region
  (``aws:RequestedRegion`` the Region), and the Region-less foundation model ARN
  ``arn:aws:bedrock:::foundation-model/ID`` with ``aws:RequestedRegion`` ``unspecified``, each only through
  that profile: the routing to any commercial Region is the global profile's, never a direct call.
- an ARN (an application inference profile): that ARN.

Until 2026-12-07 a profile's model was granted as ``arn:aws:bedrock:*::foundation-model/ID`` without a
condition: callable in any Region, directly, which undid a geographic profile's residency.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import Stack
from aws_cdk import aws_iam as iam

from stacks.config import INFERENCE_PROFILE_PREFIXES, PROFILE_SOURCE_REGIONS, DocAgentConfig

INVOKE = ["bedrock:InvokeModel"]
GLOBAL = "global"
# aws:RequestedRegion of the Region-less foundation model a global profile routes to (AWS docs, "Global
# cross-Region inference", looked up 2026-12-07).
UNSPECIFIED_REGION = "unspecified"


def granted_model_arns(stack: Stack, config: DocAgentConfig) -> list[str]:
    """The ARNs of every model the deployment's functions may call (``model_id``, ``extra_model_ids``): the
    resources of the batch job calls (CreateModelInvocationJob names the model), without conditions."""
    return list(
        dict.fromkeys(arn for model_id in config.model_ids() for arn in bedrock_model_arns(stack, model_id))
    )


def bedrock_model_arns(stack: Stack, model_id: str) -> list[str]:
    """The ARNs a model id stands for: the profile and its foundation model in any Region, or the model."""
    if model_id.startswith("arn:"):
        return [model_id]
    geography, _, base = model_id.partition(".")
    if base and geography in INFERENCE_PROFILE_PREFIXES:
        return [_profile_arn(stack, model_id), _model_arn(stack, base, region="*")]
    return [_model_arn(stack, model_id)]


def model_invoke_statements(stack: Stack, config: DocAgentConfig) -> list[iam.PolicyStatement]:
    """bedrock:InvokeModel on every model of the deployment, as the module docstring says."""
    direct: list[str] = []
    conditioned: list[iam.PolicyStatement] = []
    for index, model_id in enumerate(config.model_ids()):
        geography, _, base = model_id.partition(".")
        if model_id.startswith("arn:"):
            direct.append(model_id)
        elif not base or geography not in INFERENCE_PROFILE_PREFIXES:
            direct.append(_model_arn(stack, model_id))
        elif geography == GLOBAL:
            conditioned += _global_profile(stack, index, model_id, base)
        else:
            direct.append(_profile_arn(stack, model_id))
            conditioned.append(_geographic_model(stack, index, model_id, base, geography))
    return (
        [iam.PolicyStatement(sid="InvokeModel", actions=INVOKE, resources=direct), *conditioned]
        if direct
        else conditioned
    )


def _geographic_model(
    stack: Stack, index: int, profile: str, base: str, geography: str
) -> iam.PolicyStatement:
    regions = [
        prefix + "*" if prefix.endswith("-") else prefix for prefix in PROFILE_SOURCE_REGIONS[geography]
    ]
    return _statement(
        f"InvokeModel{index}InGeography",
        _model_arn(stack, base, region="*"),
        {
            "StringEquals": {"bedrock:InferenceProfileArn": _profile_arn(stack, profile)},
            "StringLike": {"aws:RequestedRegion": regions},
        },
    )


def _global_profile(stack: Stack, index: int, profile: str, base: str) -> list[iam.PolicyStatement]:
    through = {"bedrock:InferenceProfileArn": _profile_arn(stack, profile)}
    return [
        _statement(
            f"InvokeModel{index}GlobalProfile",
            _profile_arn(stack, profile),
            {"StringEquals": {"aws:RequestedRegion": stack.region}},
        ),
        _statement(
            f"InvokeModel{index}GlobalInRegion",
            _model_arn(stack, base),
            {"StringEquals": {"aws:RequestedRegion": stack.region, **through}},
        ),
        _statement(
            f"InvokeModel{index}GlobalAnyRegion",
            _model_arn(stack, base, region=""),
            {"StringEquals": {"aws:RequestedRegion": UNSPECIFIED_REGION, **through}},
        ),
    ]


def _statement(sid: str, resource: str, conditions: dict[str, Any]) -> iam.PolicyStatement:
    return iam.PolicyStatement(sid=sid, actions=INVOKE, resources=[resource], conditions=conditions)


def _profile_arn(stack: Stack, profile: str) -> str:
    return stack.format_arn(service="bedrock", resource="inference-profile", resource_name=profile)


def _model_arn(stack: Stack, model: str, *, region: str | None = None) -> str:
    return stack.format_arn(
        service="bedrock", region=region, account="", resource="foundation-model", resource_name=model
    )
