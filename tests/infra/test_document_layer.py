"""The document libraries (Pillow with pillow-heif, pypdf, python-docx with lxml, rapidfuzz) ship in a layer
built for the functions' platform, at constraints.txt's pins (stacks/document_layer.py): on AWS an image (a
HEIC too) is read, a PDF's pages are counted and sliced into windows, and a quote is grounded, as locally."""

from __future__ import annotations

import email
import re
from pathlib import Path
from typing import Any

from stacks.document_layer import REQUIREMENTS
from stacks.sdk_pins import DOCUMENT_DISTRIBUTIONS, constraint_pins, document_layer_description, document_pins
from tests.infra.conftest import Synthesized

REPO_ROOT = Path(__file__).resolve().parents[2]


def layer(synthesized: Synthesized) -> dict[str, Any]:
    logical_id = synthesized.logical_id(synthesized.stack.functions.document_layer)
    resource: dict[str, Any] = synthesized.template_json["Resources"][logical_id]
    return resource


def asset_dir(synthesized: Synthesized) -> Path:
    key = layer(synthesized)["Properties"]["Content"]["S3Key"]
    return synthesized.outdir / f"asset.{key.removesuffix('.zip')}"


def normalised(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def installed(root: Path) -> dict[str, tuple[str, list[str]]]:
    """Distribution (normalised) -> (version, wheel tags), from each dist-info the layer holds."""
    found = {}
    for info in root.glob("*.dist-info"):
        metadata = email.message_from_string((info / "METADATA").read_text(encoding="utf-8"))
        wheel = email.message_from_string((info / "WHEEL").read_text(encoding="utf-8"))
        found[normalised(metadata["Name"])] = (metadata["Version"], wheel.get_all("Tag") or [])
    return found


def test_the_layer_requirements_are_the_pinned_document_libraries(synthesized: Synthesized) -> None:
    pins = document_pins()
    assert set(pins) == set(DOCUMENT_DISTRIBUTIONS)
    assert {"pillow", "pillow-heif", "pypdf", "rapidfuzz", "python-docx"} <= set(pins)
    constraints = (REPO_ROOT / "constraints.txt").read_text(encoding="utf-8")
    for name, version in pins.items():
        assert re.search(rf"^{re.escape(name)}=={re.escape(version)}$", constraints, re.M), name
    requirements = (asset_dir(synthesized) / REQUIREMENTS).read_text(encoding="utf-8").split()
    assert sorted(requirements) == sorted(f"{name}=={version}" for name, version in pins.items())
    properties = layer(synthesized)["Properties"]
    assert properties["Description"] == document_layer_description()
    assert properties["CompatibleRuntimes"] == ["python3.13"]
    assert properties["CompatibleArchitectures"] == ["x86_64"]


def test_the_layer_holds_wheels_for_lambdas_python_and_architecture(synthesized: Synthesized) -> None:
    root = asset_dir(synthesized) / "python"
    found = installed(root)
    for name, version in document_pins().items():
        assert found[normalised(name)][0] == version, name
        for tag in found[normalised(name)][1]:  # pure Python, or CPython 3.13 on manylinux x86_64
            assert tag == "py3-none-any" or re.fullmatch(r"cp313-cp313-manylinux\w*_x86_64", tag), (name, tag)
    compiled = [path.name for path in root.rglob("*.so")]
    assert any(re.fullmatch(r"_imaging\.cpython-313-x86_64-linux-gnu\.so", name) for name in compiled)
    assert any(name.startswith("etree.cpython-313-x86_64-linux-gnu") for name in compiled)
    assert "_pillow_heif.cpython-313-x86_64-linux-gnu.so" in compiled, "HEIC on Lambda: libheif bundled"
    assert not [name for name in compiled if "cpython-311" in name]  # nothing of this interpreter's
    for package in ("PIL", "pillow_heif", "pypdf", "docx", "lxml", "rapidfuzz"):
        assert (root / package / "__init__.py").is_file(), package


def test_every_function_has_the_document_layer(synthesized: Synthesized) -> None:
    ref = {"Ref": synthesized.logical_id(synthesized.stack.functions.document_layer)}
    functions = synthesized.resources("AWS::Lambda::Function")
    assert functions
    for logical_id, function in functions.items():
        assert ref in function["Properties"]["Layers"], logical_id


def test_an_unpinned_library_is_refused(tmp_path: Path) -> None:
    constraints = tmp_path / "constraints.txt"
    constraints.write_text("Pillow==13.0.0\npypdf==7.1.0 ; python_version >= '3.9'\n")
    assert constraint_pins(("pillow", "pypdf"), constraints) == {"pillow": "13.0.0", "pypdf": "7.1.0"}
    try:
        constraint_pins(("pillow", "rapidfuzz"), constraints)
    except ValueError as error:
        assert "rapidfuzz" in str(error)
    else:
        raise AssertionError("an unpinned distribution was accepted")
