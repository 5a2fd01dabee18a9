"""``docagent init``: the folder it writes loads as a definition, every sample has a label valid against the
class's schema and is a real document of its format; a non-empty folder or a bad name is refused (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import docx
import pytest
from jsonschema import Draft202012Validator, FormatChecker
from pypdf import PdfReader

from docagent import project
from docagent.cli import main
from docagent.kit.loader import read_bundle
from docagent.kit.samples import LABEL_SUFFIX, label_path
from functions import spend
from functions.reading.documents import detect_format
from stacks.config import (
    CONTEXT_KEY,
    DEFAULT_CHEAP_MODEL_ID,
    DEFAULT_MODEL_ID,
    cdk_json_context,
    load_config,
)


def test_init_writes_a_definition_that_loads_with_valid_labels(tmp_path: Path, capsys) -> None:
    folder = tmp_path / "expenses"
    assert main(["init", str(folder), "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["name"] == "expenses"
    bundle = read_bundle(folder)
    assert bundle.name == "expenses"
    (class_name,) = bundle.classes
    schema = bundle.classes[class_name].schema_
    assert bundle.classes[class_name].prompt
    documents = sorted(p for p in (folder / "samples").iterdir() if not p.name.endswith(LABEL_SUFFIX))
    assert [str(p.relative_to(folder)) for p in documents] == sorted(answer["samples"])
    assert len(documents) == 6
    assert {p.suffix for p in documents} == {".pdf", ".docx", ".txt"}
    validator = Draft202012Validator(schema, format_checker=FormatChecker())
    for document in documents:
        label = json.loads(label_path(document).read_text(encoding="utf-8"))
        assert [error.message for error in validator.iter_errors(label)] == [], document.name
    for document in documents:
        if document.name == "parking-scan.pdf":
            assert not PdfReader(document).pages[0].extract_text().strip(), "a scan has no text layer"
            continue
        if document.suffix == ".pdf":
            text = PdfReader(document).pages[0].extract_text()
        elif document.suffix == ".docx":
            text = "\n".join(p.text for p in docx.Document(str(document)).paragraphs)
        else:
            text = document.read_text(encoding="utf-8")
        merchant = json.loads(label_path(document).read_text(encoding="utf-8"))["merchant"]
        assert merchant in text, document.name  # the label answers what the document says
    assert (folder / "README.md").read_text(encoding="utf-8").startswith("# expenses")


def test_init_samples_are_what_their_extension_says(tmp_path: Path) -> None:
    assert main(["init", str(tmp_path / "receipts")]) == 0
    formats = {
        path.suffix: detect_format(path.read_bytes())
        for path in (tmp_path / "receipts" / "samples").iterdir()
        if not path.name.endswith(LABEL_SUFFIX)
    }
    assert formats == {".pdf": "pdf", ".docx": "docx", ".txt": "txt"}


@pytest.mark.parametrize("existing", ["file", "folder"])
def test_init_refuses_a_folder_that_is_not_empty(tmp_path: Path, existing: str, capsys) -> None:
    folder = tmp_path / "taken"
    folder.mkdir()
    (folder / "keep.txt").write_text("mine", encoding="utf-8")
    target = folder / "keep.txt" if existing == "file" else folder
    assert main(["init", str(target), "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["error_type"] == "BadRequest"
    assert sorted(p.name for p in folder.iterdir()) == ["keep.txt"]
    assert (folder / "keep.txt").read_text(encoding="utf-8") == "mine"


def test_init_refuses_a_name_that_is_no_definition_name(tmp_path: Path, capsys) -> None:
    assert main(["init", str(tmp_path / "My Receipts"), "--json"]) == 2
    assert "not a definition name" in json.loads(capsys.readouterr().out)["error"]
    assert not (tmp_path / "My Receipts").exists()


def test_init_into_an_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    assert main(["init", str(tmp_path / "empty")]) == 0
    assert read_bundle(tmp_path / "empty").name == "empty"


def test_init_and_the_default_definition_read_cheaply_first(tmp_path: Path) -> None:
    """Issue #54: the scaffold's job.json and the default definition (examples/invoices) name the cascade
    [cheap, strong], the cheap model one that reads text, images and documents, and the deployment's
    default config lets the functions call both (IAM, MODELS_ALLOWED, throttle alarm: extra_model_ids)."""
    folder = tmp_path / "expenses"
    assert main(["init", str(folder)]) == 0
    default = read_bundle(project.ROOT / "examples" / "invoices")
    for bundle in (read_bundle(folder), default):
        assert bundle.definition.models == [DEFAULT_CHEAP_MODEL_ID, DEFAULT_MODEL_ID]
    assert spend.model_price(DEFAULT_CHEAP_MODEL_ID).reads == spend.EVERYTHING
    assert (
        spend.model_price(DEFAULT_CHEAP_MODEL_ID).input_per_1000
        < spend.model_price(DEFAULT_MODEL_ID).input_per_1000
    )
    config = load_config({})
    assert set(default.definition.models or []) <= set(config.model_ids())
    assert load_config(cdk_json_context()[CONTEXT_KEY]).model_ids() == [
        DEFAULT_MODEL_ID,
        DEFAULT_CHEAP_MODEL_ID,
    ]
