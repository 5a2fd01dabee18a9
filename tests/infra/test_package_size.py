"""Every function fits Lambda's size quota with all its layers: its code, the document layer, the SDK layer
and the public Powertools layer, unzipped, under 250 MB.

The quota (looked up 2026-12-04): "250 MB: the maximum size of the contents of a deployment package,
including layers and custom runtimes (unzipped)" (AWS Lambda developer guide, "Lambda quotas", quoted on
repost.aws/questions/QUt1Cc15fbTkWsVXPNmj6MNQ); CreateFunction and PublishLayerVersion answer "Unzipped size
must be smaller than 262144000 bytes" past it. The Powertools layer is not built here: its size is bounded
by POWERTOOLS_ALLOWANCE, and the second test checks that bound against what the layer holds (Powertools
with its ``all`` extra, which its layer ships; the AWS SDK it leaves to the runtime).
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement

from tests.infra.conftest import Synthesized

UNZIPPED_LIMIT = 262_144_000  # bytes: 250 MiB, the figure in Lambda's error message
POWERTOOLS_ALLOWANCE = 60_000_000  # bytes kept for the public Powertools layer (it measures about half)
RUNTIME_PROVIDED = {"boto3", "botocore", "s3transfer"}  # in the Lambda runtime, not in the layer
# A requirement not installed here (the `all` extra's aws-encryption-sdk and pyjwt: pure-Python wheels) is
# counted at this size, its own requirements with it.
NOT_INSTALLED_BYTES = 5_000_000


def directory_bytes(root: Path) -> int:
    return sum(path.stat().st_size for path in root.rglob("*") if path.is_file())


def asset_bytes(synthesized: Synthesized, content: dict[str, Any]) -> int:
    """The unzipped size of a function's code or a layer's content, from the synthesized asset directory."""
    asset = synthesized.outdir / f"asset.{content['S3Key'].removesuffix('.zip')}"
    assert asset.is_dir(), asset
    return directory_bytes(asset)


def installed_bytes(name: str, extras: set[str], seen: set[str]) -> int:
    """A distribution's installed files and its requirements' (with ``extras``), each counted once."""
    key = name.lower().replace("_", "-")
    if key in seen or key in RUNTIME_PROVIDED:
        return 0
    seen.add(key)
    try:
        distribution = importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return NOT_INSTALLED_BYTES
    total = sum(
        file.locate().stat().st_size for file in distribution.files or [] if Path(file.locate()).is_file()
    )
    for line in distribution.requires or []:
        requirement = Requirement(line)
        wanted = requirement.marker is None or any(
            requirement.marker.evaluate({"extra": extra}) for extra in extras or {""}
        )
        if wanted:
            total += installed_bytes(requirement.name, set(requirement.extras), seen)
    return total


def test_every_function_with_its_layers_fits_the_unzipped_quota(synthesized: Synthesized) -> None:
    layers = {
        logical_id: asset_bytes(synthesized, layer["Properties"]["Content"])
        for logical_id, layer in synthesized.resources("AWS::Lambda::LayerVersion").items()
    }
    assert len(layers) == 2  # the document layer and the SDK layer; Powertools' is public
    functions = synthesized.resources("AWS::Lambda::Function")
    assert functions
    for logical_id, function in functions.items():
        properties = function["Properties"]
        own = [ref["Ref"] for ref in properties["Layers"] if isinstance(ref, dict) and "Ref" in ref]
        assert sorted(own) == sorted(layers), logical_id
        total = asset_bytes(synthesized, properties["Code"]) + sum(layers.values()) + POWERTOOLS_ALLOWANCE
        assert total < UNZIPPED_LIMIT, (logical_id, total, layers)


def test_the_powertools_allowance_covers_the_layers_libraries() -> None:
    powertools = installed_bytes("aws-lambda-powertools", {"all"}, set())
    assert 0 < powertools < POWERTOOLS_ALLOWANCE, powertools
