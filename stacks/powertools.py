"""The Powertools layer of the pinned library version (no CDK import: the operator's preflight reads it too).

Powertools publishes each release's layer ARN as a public SSM parameter in every region it serves, named
/aws/service/powertools/python/{arch}/{runtime}/{version} (as of 2026-11, Powertools docs "Lambda Layers"
and its update_ssm workflow, github.com/aws-powertools/powertools-lambda-python). CloudFormation resolves
it in the deploying region and partition: the stack hard-codes no layer version number and no partition,
and the layer holds exactly the Powertools the code is pinned to (constraints.txt, installed here).
"""

from __future__ import annotations

import importlib.metadata

POWERTOOLS_VERSION = importlib.metadata.version("aws-lambda-powertools")
LAYER_RUNTIME = "python3.13"
# Powertools publishes a layer per architecture, x86_64 and arm64, under the same path with its name (as of
# 2026-12-04, its update_ssm workflow: /aws/service/powertools/python/arm64/python3.13/{version}).
LAYER_ARCHITECTURES = ("x86_64", "arm64")


def powertools_layer_parameter(version: str = POWERTOOLS_VERSION, architecture: str = "x86_64") -> str:
    """The public SSM parameter holding the Powertools (Python) v3 layer ARN of ``version`` for
    ``architecture`` (x86_64 or arm64)."""
    assert architecture in LAYER_ARCHITECTURES, architecture
    return f"/aws/service/powertools/python/{architecture}/{LAYER_RUNTIME}/{version}"


def powertools_layer_reference(version: str = POWERTOOLS_VERSION, architecture: str = "x86_64") -> str:
    """A CloudFormation dynamic reference to that layer ARN, resolved at deploy time in the stack's region."""
    return "{{resolve:ssm:" + powertools_layer_parameter(version, architecture) + "}}"
