"""The document layer (stacks/sdk_pins.py, DOCUMENT_DISTRIBUTIONS): Pillow with pillow-heif, pypdf,
python-docx with lxml and rapidfuzz, built for the functions' platform (python3.13, manylinux, the functions'
architecture: cdk.json ``architecture``, x86_64 or arm64).

Local bundling runs this interpreter's pip with ``--platform ... --only-binary=:all: --python-version
3.13 --implementation cp --target``: wheels only, never a build, and only the platform's. It installs from
the wheelhouse ``build/lambda-wheels/cp313-{architecture}/`` (filled by ``make setup`` for the architecture
cdk.json names: ``python -m stacks.document_layer``; ``make lambda-wheels ARCH=arm64`` for another) without
the network; a wheel missing there (an architecture set up later) is downloaded into it first at synth (pip,
from the package index).
Without pip, CDK falls back to the same ``pip install`` in the python3.13 build image (Docker). The layer's
``requirements.txt`` (beside ``python/``, not importable) names what it holds.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsii
from aws_cdk import AssetHashType, BundlingOptions, ILocalBundling
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from stacks.config import CONTEXT_KEY, cdk_json_context, load_config
from stacks.sdk_layer import SOURCE
from stacks.sdk_pins import LAMBDA_PLATFORMS, LAMBDA_PYTHON_VERSION, document_layer_description, document_pins

WHEELHOUSE = Path(__file__).resolve().parents[1] / "build" / "lambda-wheels"
REQUIREMENTS = "requirements.txt"


def requirements(pins: dict[str, str]) -> list[str]:
    return [f"{name}=={version}" for name, version in sorted(pins.items())]


def platform_args(architecture: str) -> list[str]:
    """pip's options for wheels that load on Lambda's python3.13 of ``architecture`` (x86_64 or arm64)."""
    args = ["--only-binary=:all:", "--no-deps", "--implementation", "cp"]
    args += ["--python-version", LAMBDA_PYTHON_VERSION]
    for platform in LAMBDA_PLATFORMS[architecture]:
        args += ["--platform", platform]
    return args


def wheelhouse(architecture: str, root: Path = WHEELHOUSE) -> Path:
    return root / f"cp{LAMBDA_PYTHON_VERSION.replace('.', '')}-{architecture}"


def _pip(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet", *args]
    return subprocess.run(command, capture_output=True, text=True, check=False)


def download_wheels(architecture: str, pins: dict[str, str], root: Path = WHEELHOUSE) -> Path:
    """The pinned wheels for ``architecture`` in the wheelhouse (downloaded by pip when one is missing)."""
    house = wheelhouse(architecture, root)
    house.mkdir(parents=True, exist_ok=True)
    offline = _pip(
        "download",
        "--no-index",
        "--find-links",
        str(house),
        "-d",
        str(house),
        *platform_args(architecture),
        *requirements(pins),
    )
    if offline.returncode == 0:
        return house
    online = _pip("download", "-d", str(house), *platform_args(architecture), *requirements(pins))
    if online.returncode != 0:
        raise RuntimeError(f"pip could not download the document layer's wheels: {online.stderr.strip()}")
    return house


def install_layer(output_dir: Path, architecture: str, pins: dict[str, str], root: Path = WHEELHOUSE) -> None:
    """The layer's content in ``output_dir``: ``python/`` (the wheels installed for Lambda) and
    ``requirements.txt``."""
    house = download_wheels(architecture, pins, root)
    installed = _pip(
        "install",
        "--no-index",
        "--find-links",
        str(house),
        "--target",
        str(output_dir / "python"),
        "--no-compile",
        *platform_args(architecture),
        *requirements(pins),
    )
    if installed.returncode != 0:
        raise RuntimeError(f"pip could not install the document layer: {installed.stderr.strip()}")
    (output_dir / REQUIREMENTS).write_text("\n".join(requirements(pins)) + "\n", encoding="utf-8")


@jsii.implements(ILocalBundling)
class _InstallWheels:
    def __init__(self, architecture: str, pins: dict[str, str]) -> None:
        self.architecture, self.pins = architecture, pins

    def try_bundle(self, output_dir: str, *_: Any, **__: Any) -> bool:
        if _pip("--version").returncode != 0:
            return False  # no pip here: CDK bundles in Docker instead
        install_layer(Path(output_dir), self.architecture, self.pins)
        return True


def document_layer(
    scope: Construct, construct_id: str, architecture: lambda_.Architecture
) -> lambda_.LayerVersion:
    pins = document_pins()
    arch = architecture.name
    pip_install = " ".join(
        ["pip install --target /asset-output/python", *platform_args(arch), *requirements(pins)]
    )
    write_requirements = f"printf '%s\\n' {' '.join(requirements(pins))} > /asset-output/{REQUIREMENTS}"
    code = lambda_.Code.from_asset(
        str(SOURCE),
        asset_hash=hashlib.sha256(" ".join([arch, *requirements(pins)]).encode()).hexdigest(),
        asset_hash_type=AssetHashType.CUSTOM,
        bundling=BundlingOptions(
            image=lambda_.Runtime.PYTHON_3_13.bundling_image,
            command=["bash", "-c", f"{pip_install} && {write_requirements}"],
            local=_InstallWheels(arch, pins),
        ),
    )
    return lambda_.LayerVersion(
        scope,
        construct_id,
        code=code,
        description=document_layer_description(pins),
        compatible_runtimes=[lambda_.Runtime.PYTHON_3_13],
        compatible_architectures=[architecture],
    )


def configured_architecture() -> str:
    """The functions' architecture cdk.json names (``architecture``; default x86_64)."""

    return load_config(cdk_json_context().get(CONTEXT_KEY)).architecture


if __name__ == "__main__":  # make setup: the wheels the synth installs offline, for cdk.json's architecture
    for name in sys.argv[1:] or [configured_architecture()]:
        print(download_wheels(name, document_pins()))
