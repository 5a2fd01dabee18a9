"""The AWS SDK for Python the functions run on: the pinned one, in a layer (no CDK import: the local deploy
reads it too).

Lambda's python3.13 runtime bundles a boto3 whose version "depends on the runtime version and your AWS
Region" and changes without notice (looked up 2026-12, AWS Lambda developer guide, "Building Lambda
functions with Python", Runtime-included SDK versions; AWS recommends including the SDK in the deployment
package when the code depends on its features). The functions use newer API features than an old bundled
SDK may know (S3 PutObject ``IfNoneMatch`` conditional writes, Bedrock Converse ``document`` content blocks),
so the stack ships the SDK of constraints.txt, installed here, as a layer: layers come before the runtime's
own packages on ``sys.path``.
"""

from __future__ import annotations

import importlib.metadata

# boto3 and what it imports, fastjsonschema (the functions validate model replies against a class's JSON
# Schema with it), jsonata-python (a rule's expression) and pypdf (a packet's pages sliced into sections,
# functions/pdf_pages.py; a PDF's page texts for the grounding): pure Python, so the same files serve 3.11
# here and 3.13 on Lambda.
SDK_DISTRIBUTIONS = (
    "boto3",
    "botocore",
    "s3transfer",
    "jmespath",
    "python-dateutil",
    "urllib3",
    "six",
    "fastjsonschema",
    "jsonata-python",
    "pypdf",
)
SDK_LAYER_PREFIX = "docagent AWS SDK for Python: "


def sdk_versions() -> dict[str, str]:
    """Distribution -> installed version, of every distribution the layer holds."""
    return {name: importlib.metadata.version(name) for name in SDK_DISTRIBUTIONS}


def sdk_layer_description(versions: dict[str, str] | None = None) -> str:
    """The layer's description names its pins: ``docagent AWS SDK for Python: boto3==1.44.8 ...``."""
    pins = versions or sdk_versions()
    return SDK_LAYER_PREFIX + " ".join(f"{name}=={version}" for name, version in sorted(pins.items()))
