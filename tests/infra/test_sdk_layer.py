"""The functions run on the pinned SDK (stacks/sdk_pins.py), shipped in a layer, not on whatever boto3 the
python3.13 runtime bundles: the layer holds the versions of constraints.txt, and the botocore in it knows
every API feature the functions use."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any

import pytest

from stacks.sdk_pins import SDK_DISTRIBUTIONS, sdk_layer_description, sdk_versions
from tests.infra.conftest import Synthesized

REPO_ROOT = Path(__file__).resolve().parents[2]
FUNCTIONS_DIR = REPO_ROOT / "functions"


def layer(synthesized: Synthesized) -> dict[str, Any]:
    logical_id = synthesized.logical_id(synthesized.stack.functions.sdk_layer)
    resource: dict[str, Any] = synthesized.template_json["Resources"][logical_id]
    return resource


def layer_dir(synthesized: Synthesized) -> Path:
    key = layer(synthesized)["Properties"]["Content"]["S3Key"]
    return synthesized.outdir / f"asset.{key.removesuffix('.zip')}" / "python"


def service_model(root: Path, service: str) -> dict[str, Any]:
    (model,) = sorted((root / "botocore" / "data" / service).glob("*/service-2.json*"))[-1:]
    data = gzip.decompress(model.read_bytes()) if model.suffix == ".gz" else model.read_bytes()
    parsed: dict[str, Any] = json.loads(data)
    return parsed


def test_the_layer_holds_the_pinned_sdk(synthesized: Synthesized) -> None:
    constraints = (REPO_ROOT / "constraints.txt").read_text(encoding="utf-8")
    for name, version in sdk_versions().items():
        assert re.search(rf"^{re.escape(name)}=={re.escape(version)}$", constraints, re.M), name
    assert layer(synthesized)["Properties"]["Description"] == sdk_layer_description()
    assert layer(synthesized)["Properties"]["CompatibleRuntimes"] == ["python3.13"]
    root = layer_dir(synthesized)
    for package in (
        "boto3",
        "botocore",
        "s3transfer",
        "jmespath",
        "dateutil",
        "urllib3",
        "fastjsonschema",
        "jsonata",
    ):
        assert (root / package / "__init__.py").is_file(), package
    version = re.search(r"__version__ = '([^']+)'", (root / "botocore" / "__init__.py").read_text())
    assert version is not None and version[1] == sdk_versions()["botocore"]
    assert len(SDK_DISTRIBUTIONS) == 9  # pypdf is the document layer's (tests/infra/test_document_layer.py)


# Every newer API feature the functions use, with where: (service, shape path) in botocore's model.
FEATURES = {
    "S3 PutObject If-None-Match (conditional write: the ledger, prepare_job's parts)": (
        "s3",
        ["operations", "PutObject", "input", "IfNoneMatch"],
        r"IfNoneMatch=",
    ),
    "Bedrock Converse": ("bedrock-runtime", ["operations", "Converse"], r"\.converse\("),
    "Converse document content blocks": (
        "bedrock-runtime",
        ["ContentBlock", "document"],
        r'\{"document": \{"format"',
    ),
}


def lookup(model: dict[str, Any], path: list[str]) -> bool:
    if path[0] == "operations":
        operation = model["operations"].get(path[1])
        if operation is None or len(path) == 2:
            return operation is not None
        shape = model["shapes"][operation[path[2]]["shape"]]
        return path[3] in shape.get("members", {})
    return path[1] in model["shapes"].get(path[0], {}).get("members", {})


@pytest.mark.parametrize("feature", sorted(FEATURES))
def test_the_shipped_botocore_has_every_feature_the_functions_use(
    synthesized: Synthesized, feature: str
) -> None:
    service, path, used = FEATURES[feature]
    sources = "\n".join(p.read_text(encoding="utf-8") for p in FUNCTIONS_DIR.rglob("*.py"))
    assert re.search(used, sources), f"{feature}: no longer used? drop it from FEATURES"
    assert lookup(service_model(layer_dir(synthesized), service), path), feature
