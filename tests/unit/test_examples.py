"""The example definitions (examples/*/): each loads as a bundle, each class's schema is valid JSON Schema
2020-12 using only the keywords the kit allows, and each sample's label is a valid answer of its class. The
claims example's samples give the outcomes its README promises."""

from __future__ import annotations

import csv
import datetime as dt
import importlib.util
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator, FormatChecker
from pypdf import PdfReader

from docagent.kit.loader import read_bundle
from docagent.kit.reference_files import reference_files
from docagent.kit.samples import LABEL_SUFFIX, label_path, read_label
from functions.definition.job_spec import SCHEMA_KEYWORDS, DefinitionBundle, LookupCheck, RuleCheck
from functions.reading.documents import document_input
from functions.reading.images import BEST_PIXELS

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
FOLDERS = sorted(path.parent for path in EXAMPLES.glob("*/job.json"))
SUBSCHEMA_MAPS = ("properties", "$defs")
SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf")
SUBSCHEMAS = ("items", "not", "additionalProperties")


def keywords(schema: Any, where: str = "") -> list[tuple[str, str]]:
    """Every (location, keyword) of a schema and its subschemas."""
    if not isinstance(schema, dict):
        return []
    found = [(where or "top", key) for key in schema]
    for key in SUBSCHEMA_MAPS:
        for name, sub in (schema.get(key) or {}).items():
            found += keywords(sub, f"{where}/{key}/{name}")
    for key in SUBSCHEMA_LISTS:
        for index, sub in enumerate(schema.get(key) or []):
            found += keywords(sub, f"{where}/{key}/{index}")
    for key in SUBSCHEMAS:
        found += keywords(schema.get(key), f"{where}/{key}")
    return found


def samples(folder: Path, bundle: DefinitionBundle) -> list[tuple[str, Path, dict[str, Any], str]]:
    """(class, document, label fields, name) of every labelled part: samples/CLASS/ with several classes,
    samples/ with one; each section of a packet (its label lists them) as ``NAME#SECTION``."""
    root = folder / "samples"
    if not root.is_dir():
        return []
    documents = [p for p in sorted(root.rglob("*")) if p.is_file() and not p.name.endswith(LABEL_SUFFIX)]
    found = []
    for path in documents:
        content = read_label(json.loads(label_path(path).read_text(encoding="utf-8")))
        assert not isinstance(content, str), f"{path}: {content}"
        for section in content.sections:
            assert section.class_name is not None
            found.append((section.class_name, path, section.fields, f"{path.name}#{section.section_id}"))
        if content.sections:
            continue
        only = next(iter(bundle.classes)) if len(bundle.classes) == 1 else None
        found.append((only or path.relative_to(root).parts[0], path, content.fields, path.name))
    return found


@pytest.mark.parametrize("folder", FOLDERS, ids=[folder.name for folder in FOLDERS])
def test_example_loads_and_its_schemas_and_labels_are_valid(folder: Path) -> None:
    bundle = read_bundle(folder)
    assert bundle.name == folder.name
    for name, class_bundle in bundle.classes.items():
        Draft202012Validator.check_schema(class_bundle.schema_)
        unknown = [
            (where, key) for where, key in keywords(class_bundle.schema_) if key not in SCHEMA_KEYWORDS
        ]
        assert unknown == [], f"{name}: keywords the kit does not allow"
        for check in class_bundle.spec.checks:
            top = check.field.split(".")[0]
            assert top in class_bundle.schema_["properties"], f"{name}: check {check.name} names no field"
    for class_name, document, label, _ in samples(folder, bundle):
        assert class_name in bundle.classes, f"{document}: no class {class_name}"
        validator = Draft202012Validator(bundle.classes[class_name].schema_, format_checker=FormatChecker())
        assert [error.message for error in validator.iter_errors(label)] == [], document


CLAIMS = EXAMPLES / "claims"


def _outcome(bundle: DefinitionBundle, class_name: str, label: dict[str, Any]) -> str:
    """The claims example's checks applied to a label (the kinds of condition it uses only)."""
    tables = {ref.table: ref for ref in reference_files(CLAIMS, bundle)}
    outcome = "extracted"
    for check in bundle.classes[class_name].spec.checks:
        value = label[check.field]
        if isinstance(check, LookupCheck):
            with tables[check.table].path.open(encoding="utf-8") as file:
                keys = {row[tables[check.table].key_field] for row in csv.DictReader(file)}
            passed = value in keys
        else:
            assert isinstance(check, RuleCheck)
            assert check.not_after in (None, "today")
            passed = (check.maximum is None or Decimal(value) <= check.maximum) and (
                check.not_after is None or dt.date.fromisoformat(value) <= dt.datetime.now(dt.UTC).date()
            )
        if not passed and check.on_fail == "reject":
            return "rejected"
        if not passed:
            outcome = "review"
    return outcome


def test_claims_samples_cover_each_outcome_of_both_classes() -> None:
    bundle = read_bundle(CLAIMS)
    assert set(bundle.classes) == {"claim-form", "repair-estimate"}
    found = {
        name: _outcome(bundle, class_name, label) for class_name, _, label, name in samples(CLAIMS, bundle)
    }
    assert found == {
        "claim-0001.pdf": "extracted",
        "claim-0002.docx": "extracted",
        "claim-0003.pdf": "review",
        "claim-0004.docx": "rejected",
        "estimate-0001.pdf": "extracted",
        "estimate-0002.docx": "extracted",
        "estimate-0003.pdf": "review",
        "claim-0005.pdf": "extracted",
        "claim-0006.jpg": "extracted",
        "estimate-0004.tif": "extracted",
        "packet-0001.pdf#s0001-0001": "extracted",
        "packet-0001.pdf#s0002-0003": "extracted",
    }
    assert {action.type for action in bundle.definition.actions} == {"export", "eventbridge"}
    assert bundle.classes["repair-estimate"].prompt is None  # made from the schema


def test_claims_estimates_are_multi_page_documents() -> None:
    pages = {
        path.name: len(PdfReader(path).pages)
        for path in (CLAIMS / "samples" / "repair-estimate").glob("*.pdf")
    }
    assert pages == {"estimate-0001.pdf": 2, "estimate-0003.pdf": 3}


def test_claims_intake_samples_are_a_scan_a_photo_and_a_fax_made_reproducibly() -> None:
    spec = importlib.util.spec_from_file_location("claims_samples", CLAIMS / "make_samples.py")
    assert spec is not None and spec.loader is not None
    make_samples = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_samples)
    for sample in make_samples.INTAKE_CLAIMS + make_samples.INTAKE_ESTIMATES:
        assert sample.render() == (CLAIMS / "samples" / sample.file_name).read_bytes(), sample.file_name
    scan = document_input((CLAIMS / "samples" / "claim-form" / "claim-0005.pdf").read_bytes(), "d")
    assert (scan.format, scan.pages, scan.visual) == ("pdf", 1, True), "no text layer: read visually"
    photo = document_input((CLAIMS / "samples" / "claim-form" / "claim-0006.jpg").read_bytes(), "d")
    [page] = photo.images
    assert photo.format == "jpeg" and page.width * page.height <= BEST_PIXELS, "scaled to the best size"
    fax = document_input((CLAIMS / "samples" / "repair-estimate" / "estimate-0004.tif").read_bytes(), "d")
    assert fax.format == "tiff" and [image.format for image in fax.images] == ["png", "png"]


def test_claims_packet_is_a_claim_form_and_its_estimate_in_one_pdf_made_reproducibly() -> None:
    spec = importlib.util.spec_from_file_location("claims_samples", CLAIMS / "make_samples.py")
    assert spec is not None and spec.loader is not None
    make_samples = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_samples)
    [packet] = make_samples.PACKETS
    path = CLAIMS / "samples" / packet.file_name
    assert packet.render() == path.read_bytes()
    texts = [page.extract_text() for page in PdfReader(path).pages]
    content = read_label(json.loads(label_path(path).read_text(encoding="utf-8")))
    assert not isinstance(content, str)
    assert [(section.class_name, section.pages) for section in content.sections] == [
        ("claim-form", (1, 1)),
        ("repair-estimate", (2, 3)),
    ]
    assert len(texts) == 3 and "CLAIM FORM" in texts[0] and all("ESTIMATE BSB-7912" in t for t in texts[1:])
    assert read_bundle(CLAIMS).definition.split == "pages"
