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
LAYER_ARCHITECTURE = "x86_64"


def powertools_layer_parameter(version: str = POWERTOOLS_VERSION) -> str:
    """The public SSM parameter holding the Powertools (Python) v3 layer ARN of ``version``."""
    return f"/aws/service/powertools/python/{LAYER_ARCHITECTURE}/{LAYER_RUNTIME}/{version}"


def powertools_layer_reference(version: str = POWERTOOLS_VERSION) -> str:
    """A CloudFormation dynamic reference to that layer ARN, resolved at deploy time in the stack's region."""
    return "{{resolve:ssm:" + powertools_layer_parameter(version) + "}}"
