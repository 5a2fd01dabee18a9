"""The document libraries (Pillow with pillow-heif, pypdf, python-docx with lxml, rapidfuzz) ship in a layer
built for the functions' platform, at constraints.txt's pins (stacks/document_layer.py): on AWS an image (a
HEIC too) is read, a PDF's pages are counted and sliced into windows, and a quote is grounded, as locally."""

from __future__ import annotations

import email
import re
from pathlib import Path
from typing import Any

import pytest
from packaging.utils import parse_wheel_filename

from app import build_app
from stacks.config import CONTEXT_KEY
from stacks.document_layer import REQUIREMENTS, install_layer, wheelhouse
from stacks.sdk_pins import (
    DOCUMENT_DISTRIBUTIONS,
    LAMBDA_PLATFORMS,
    constraint_pins,
    document_layer_description,
    document_pins,
)
from tests.infra.conftest import NO_BUNDLING, Synthesized, default_docagent_context

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
    assert {"pillow", "pillow-heif", "pypdf", "rapidfuzz", "python-docx", "google-re2"} <= set(pins)
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
    assert "_re2.cpython-313-x86_64-linux-gnu.so" in compiled, "a definition's patterns run in RE2"
    assert not [name for name in compiled if "cpython-311" in name]  # nothing of this interpreter's
    for package in ("PIL", "pillow_heif", "pypdf", "docx", "lxml", "rapidfuzz", "re2"):
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


# ------------------------------------------------------------------------------ wheels per architecture

MACHINES = {"x86_64": "x86_64", "arm64": "aarch64"}
LEGACY_MANYLINUX = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}


def glibc_of(platform: str, machine: str) -> tuple[int, int] | None:
    """The glibc a manylinux platform tag of ``machine`` needs (``manylinux_2_28_aarch64`` -> (2, 28)); None
    for another machine or platform."""
    match = re.fullmatch(rf"manylinux_(\d+)_(\d+)_{machine}", platform)
    if match:
        return int(match[1]), int(match[2])
    legacy = platform.removesuffix(f"_{machine}")
    return LEGACY_MANYLINUX.get(legacy) if legacy != platform else None


def wheel_problem(filename: str, architecture: str) -> str | None:
    """Why a wheel would not load on Lambda's python3.13 of ``architecture`` (None: it loads): every tag must
    be pure Python, or CPython 3.13 (or the stable ABI) on manylinux for the architecture's machine, needing
    no newer glibc than the platforms pip is given (stacks/sdk_pins.py LAMBDA_PLATFORMS)."""
    machine = MACHINES[architecture]
    newest = max(filter(None, (glibc_of(p, machine) for p in LAMBDA_PLATFORMS[architecture])))
    _, _, _, tags = parse_wheel_filename(filename)
    for tag in tags:
        if (tag.interpreter, tag.abi, tag.platform) == ("py3", "none", "any"):
            continue
        if tag.interpreter != "cp313" or tag.abi not in {"cp313", "abi3"}:
            return f"{filename}: {tag} is not for CPython 3.13"
        glibc = glibc_of(tag.platform, machine)
        if glibc is None:
            return f"{filename}: {tag.platform} is not manylinux on {machine}"
        if glibc > newest:
            return f"{filename}: {tag.platform} needs glibc {glibc}, newer than {newest}"
    return None


def test_the_wheel_check_refuses_another_machine_abi_or_glibc() -> None:
    ok = "pillow-13.0.0-cp313-cp313-manylinux_2_27_aarch64.manylinux_2_28_aarch64.whl"
    assert (
        wheel_problem(ok, "arm64") is None and wheel_problem("pypdf-7.1.0-py3-none-any.whl", "arm64") is None
    )
    assert wheel_problem("lxml-6.1.3-cp313-cp313-manylinux2014_x86_64.whl", "x86_64") is None
    assert "not manylinux on x86_64" in str(wheel_problem(ok, "x86_64"))
    assert "not for CPython 3.13" in str(wheel_problem(ok.replace("cp313", "cp311"), "arm64"))
    assert "newer than (2, 28)" in str(wheel_problem("x-1.0-cp313-cp313-manylinux_2_34_aarch64.whl", "arm64"))
    assert "not manylinux" in str(wheel_problem("x-1.0-cp313-cp313-macosx_11_0_arm64.whl", "arm64"))


@pytest.mark.parametrize("architecture", sorted(LAMBDA_PLATFORMS))
def test_every_wheel_of_a_wheelhouse_is_for_its_architecture(
    synthesized: Synthesized, architecture: str
) -> None:
    """The wheelhouse of each architecture present (x86_64's is filled by `make setup` and the synth; arm64's
    by `make lambda-wheels ARCH=arm64` or a synth for arm64): each pinned library once, at its pin, and every
    wheel loads on Lambda's python3.13 of that architecture."""
    house = wheelhouse(architecture)
    wheels = sorted(path.name for path in house.glob("*.whl"))
    if architecture != "x86_64" and not wheels:
        pytest.skip(f"no {architecture} wheelhouse here ({house}): `make lambda-wheels ARCH={architecture}`")
    assert [problem for name in wheels if (problem := wheel_problem(name, architecture))] == []
    found = {}
    for name in wheels:
        distribution, version, _, _ = parse_wheel_filename(name)
        found.setdefault(str(distribution), set()).add(str(version))
    for name, version in document_pins().items():
        assert version in found.get(normalised(name), set()), (architecture, name, version)


def test_the_arm64_layer_installs_aarch64_binaries(tmp_path: Path) -> None:
    """The deploy path for arm64: the layer installed from its wheelhouse (offline) holds aarch64 binaries."""
    house, pins = wheelhouse("arm64"), document_pins()
    present = {str(parse_wheel_filename(path.name)[0]) for path in house.glob("*.whl")}
    if not {normalised(name) for name in pins} <= present:
        pytest.skip(f"no complete arm64 wheelhouse here ({house}): `make lambda-wheels ARCH=arm64`")
    install_layer(tmp_path, "arm64", pins)
    compiled = [path.name for path in (tmp_path / "python").rglob("*.so")]
    assert "_imaging.cpython-313-aarch64-linux-gnu.so" in compiled
    assert "_pillow_heif.cpython-313-aarch64-linux-gnu.so" in compiled
    assert not [name for name in compiled if "x86_64" in name], "nothing of another machine"
    for version, tags in installed(tmp_path / "python").values():
        assert version and all(tag == "py3-none-any" or tag.endswith("_aarch64") for tag in tags), tags


def test_an_arm64_deployment_has_arm64_functions_and_layers(tmp_path: Path) -> None:
    """cdk.json ``architecture: arm64``: every function, the document layer and the Powertools layer are
    arm64's (constructed with asset bundling skipped: the layer's content is the test above's)."""
    context = {
        CONTEXT_KEY: {**default_docagent_context(), "architecture": "arm64"},
        **NO_BUNDLING,
    }
    _, stack = build_app(context, outdir=str(tmp_path))
    functions = stack.functions
    layer = functions.document_layer.node.default_child
    assert stack.resolve(layer.compatible_architectures) == ["arm64"]  # type: ignore[union-attr]
    for function in functions.by_id.values():
        resource = function.node.default_child
        assert stack.resolve(resource.architectures) == ["arm64"]  # type: ignore[union-attr]
        layers = stack.resolve(resource.layers)  # type: ignore[union-attr]
        assert any("/powertools/python/arm64/python3.13/" in str(ref) for ref in layers), layers


def test_the_default_deployment_is_x86_64(synthesized: Synthesized) -> None:
    functions = synthesized.resources("AWS::Lambda::Function")
    assert {tuple(function["Properties"]["Architectures"]) for function in functions.values()} == {
        ("x86_64",)
    }
    layers = [str(function["Properties"]["Layers"]) for function in functions.values()]
    assert all("/powertools/python/x86_64/python3.13/" in refs for refs in layers)
