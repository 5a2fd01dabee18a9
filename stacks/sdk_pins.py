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
import re
from pathlib import Path

# boto3 and what it imports, fastjsonschema (the functions validate model replies against a class's JSON
# Schema with it) and jsonata-python (a rule's expression): pure Python, so the same files serve 3.11 here and
# 3.13 on Lambda. pypdf (a packet's pages sliced into sections, functions/reading/pdf_pages.py; page windows;
# a PDF's page texts) is in the document layer below, which every function has.
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
)
SDK_LAYER_PREFIX = "docagent AWS SDK for Python: "


def sdk_versions() -> dict[str, str]:
    """Distribution -> installed version, of every distribution the layer holds."""
    return {name: importlib.metadata.version(name) for name in SDK_DISTRIBUTIONS}


def sdk_layer_description(versions: dict[str, str] | None = None) -> str:
    """The layer's description names its pins: ``docagent AWS SDK for Python: boto3==1.44.8 ...``."""
    pins = versions or sdk_versions()
    return SDK_LAYER_PREFIX + " ".join(f"{name}=={version}" for name, version in sorted(pins.items()))


# The document libraries the functions read documents with (functions/reading/images.py: Pillow, and
# pillow-heif for HEIC photos: its manylinux wheels bundle libheif, for cp313 on x86_64 and aarch64 (pip
# download
# --only-binary=:all: --platform manylinux_2_28_{x86_64,aarch64} --python-version 3.13 pillow-heif==1.9.0,
# 2026-12-04);
# functions/reading/page_texts.py and functions/reading/page_windows.py: pypdf, python-docx with lxml;
# functions/evidence/grounding.py: rapidfuzz; functions/checks/patterns.py: google-re2, whose manylinux_2_28
# wheels exist for cp313 on x86_64 and aarch64: pip download --only-binary=:all: --platform
# manylinux_2_28_{x86_64,aarch64} --python-version 3.13 google-re2==1.1.20251105, 2026-12-07), in a second
# layer. Pillow, rapidfuzz, lxml and google-re2 are compiled: the layer holds the wheels built for Lambda's
# platform, not the files installed here (3.11). Their pins are constraints.txt's (the suite tests with those
# versions).
DOCUMENT_DISTRIBUTIONS = (
    "pillow",
    "pillow-heif",
    "pypdf",
    "python-docx",
    "lxml",
    "rapidfuzz",
    "google-re2",
    "typing_extensions",
)
DOCUMENT_LAYER_PREFIX = "docagent document libraries: "
# The functions' runtime (stacks/lambdas.py RUNTIME): python3.13 runs on Amazon Linux 2023, glibc 2.34, which
# loads manylinux2014 (glibc 2.17) and manylinux_2_28 wheels (looked up 2026-12-04: AWS re:Post knowledge
# center "lambda-python-package-compatible", pip install --platform manylinux2014_x86_64 --only-binary=:all:
# for a package with compiled code; Powertools for AWS Lambda (Python) "Cross-platform builds": lxml and other
# compiled libraries must be built for the function's architecture, x86_64 or arm64). Pillow 13 publishes
# only manylinux_2_28 wheels for cp313, so both tags are accepted.
LAMBDA_PYTHON_VERSION = "3.13"
LAMBDA_PLATFORMS: dict[str, tuple[str, ...]] = {
    "x86_64": ("manylinux_2_28_x86_64", "manylinux2014_x86_64"),
    "arm64": ("manylinux_2_28_aarch64", "manylinux2014_aarch64"),
}
CONSTRAINTS = Path(__file__).resolve().parents[1] / "constraints.txt"


def constraint_pins(names: tuple[str, ...], constraints: Path = CONSTRAINTS) -> dict[str, str]:
    """Distribution -> version pinned in constraints.txt (names compared as PEP 503 normalises them); a name
    without a pin is an error, never an unpinned layer."""
    pins: dict[str, str] = {}
    for line in constraints.read_text(encoding="utf-8").splitlines():
        match = re.match(r"^([A-Za-z0-9._-]+)==([^\s;#]+)", line.strip())
        if match:
            pins.setdefault(_normalised(match[1]), match[2])
    missing = [name for name in names if _normalised(name) not in pins]
    if missing:
        raise ValueError(f"not pinned in {constraints.name}: {', '.join(missing)}")
    return {name: pins[_normalised(name)] for name in names}


def document_pins() -> dict[str, str]:
    """Distribution -> pinned version, of every distribution the document layer holds."""
    return constraint_pins(DOCUMENT_DISTRIBUTIONS)


def document_layer_description(pins: dict[str, str] | None = None) -> str:
    """``docagent document libraries: lxml==6.1.3 pillow==13.0.0 ...``."""
    chosen = pins or document_pins()
    return DOCUMENT_LAYER_PREFIX + " ".join(f"{name}=={version}" for name, version in sorted(chosen.items()))


def _normalised(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()
