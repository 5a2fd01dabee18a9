"""The SDK layer (stacks/sdk_pins.py): the pinned boto3 and botocore, built at synth from this environment.

Local bundling copies the installed files of each distribution (its RECORD) into ``python/``: no network, and
exactly the versions the suite ran with. Where the distributions are not installed, CDK falls back to
``pip install`` of the same pins in the python3.13 build image (Docker).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import shutil
from pathlib import Path
from typing import Any

import jsii
from aws_cdk import AssetHashType, BundlingOptions, ILocalBundling
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from stacks.sdk_pins import SDK_DISTRIBUTIONS, sdk_layer_description, sdk_versions

SOURCE = Path(__file__).resolve().parent / "sdk_layer"


def copy_installed(output_dir: Path, distributions: tuple[str, ...] = SDK_DISTRIBUTIONS) -> int:
    """Copy each installed distribution's files (not its scripts) to ``output_dir/python``; files copied."""
    target = output_dir / "python"
    copied = 0
    for name in distributions:
        distribution = importlib.metadata.distribution(name)
        for file in distribution.files or []:
            if file.suffix == ".pyc" or ".." in file.parts or file.parts[0].endswith(".dist-info"):
                continue
            destination = target / file
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(Path(str(distribution.locate_file(file))), destination)
            copied += 1
    return copied


@jsii.implements(ILocalBundling)
class _CopyInstalled:
    def try_bundle(self, output_dir: str, *_: Any, **__: Any) -> bool:
        try:
            copy_installed(Path(output_dir))
        except importlib.metadata.PackageNotFoundError:
            return False  # CDK bundles in Docker instead
        return True


def sdk_layer(scope: Construct, construct_id: str) -> lambda_.LayerVersion:
    versions = sdk_versions()
    pins = [f"{name}=={version}" for name, version in sorted(versions.items())]
    code = lambda_.Code.from_asset(
        str(SOURCE),
        asset_hash=hashlib.sha256(" ".join(pins).encode()).hexdigest(),
        asset_hash_type=AssetHashType.CUSTOM,
        bundling=BundlingOptions(
            image=lambda_.Runtime.PYTHON_3_13.bundling_image,
            command=["bash", "-c", "pip install --no-deps -t /asset-output/python " + " ".join(pins)],
            local=_CopyInstalled(),
        ),
    )
    return lambda_.LayerVersion(
        scope,
        construct_id,
        code=code,
        description=sdk_layer_description(versions),
        compatible_runtimes=[lambda_.Runtime.PYTHON_3_13],
    )
