"""Reading labels for the local Bedrock (docagent/localcloud/bedrock/labels.py) and the invoice example's
reader."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from docagent import project
from docagent.drills.synthetic import generate_documents
from docagent.localcloud.bedrock.labels import (
    LabelsInvalid,
    LabelStore,
    document_sha256,
    load_reader,
    read_labels,
    read_recordings,
)
from docagent.localcloud.bedrock.recordings import recordings_of, write_recordings

FIELDS = ("customer_id", "invoice_number", "invoice_date", "amount", "currency", "category")
READER = project.ROOT / "examples" / "invoices" / "local_reader.py"


def test_a_samples_folder_gives_each_label_its_documents_sha256_and_folder_class(tmp_path: Path):
    (tmp_path / "letter").mkdir()
    (tmp_path / "letter" / "a.txt").write_bytes(b"A letter")
    (tmp_path / "letter" / "a.label.json").write_text('{"x": 1}')
    (tmp_path / "top.md").write_bytes(b"# top")
    (tmp_path / "top.label.json").write_text('{"y": "z"}')
    (tmp_path / "unlabelled.txt").write_bytes(b"left out")
    labels = {label.source.rsplit("/", 1)[-1]: label for label in read_labels(tmp_path)}
    assert sorted(labels) == ["a.txt", "top.md"]
    assert (labels["a.txt"].class_name, labels["a.txt"].fields) == ("letter", {"x": 1})
    assert labels["a.txt"].sha256 == document_sha256(b"A letter")
    assert (labels["top.md"].class_name, labels["top.md"].fields) == (None, {"y": "z"})


def test_the_invoice_examples_samples_are_of_its_one_class(tmp_path: Path):
    definition = tmp_path / "invoices"
    for path in (project.ROOT / "examples" / "invoices").rglob("*"):
        if path.is_file():
            target = definition / path.relative_to(project.ROOT / "examples" / "invoices")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())
    (definition / "samples").mkdir(exist_ok=True)
    (definition / "samples" / "one.txt").write_bytes(b"INVOICE 1")
    (definition / "samples" / "one.label.json").write_text('{"invoice_number": "A-1"}')
    (definition / "samples" / "two.txt").write_bytes(b"INVOICE 2")
    (definition / "samples" / "two.label.json").write_text('{"colour": "red"}')
    with pytest.raises(LabelsInvalid) as raised:
        read_labels(definition)
    assert raised.value.problems == [
        "two.label.json: fields not in the schema: colour (known: amount, category, currency, customer_id, "
        "invoice_date, invoice_number, summary)"
    ]
    (definition / "samples" / "two.label.json").unlink()
    assert [label.class_name for label in read_labels(definition)] == ["invoice"]


def test_every_bad_label_is_named(tmp_path: Path):
    (tmp_path / "lonely.label.json").write_text("{}")
    (tmp_path / "broken.txt").write_bytes(b"x")
    (tmp_path / "broken.label.json").write_text("{not json")
    (tmp_path / "list.txt").write_bytes(b"y")
    (tmp_path / "list.label.json").write_text("[1, 2]")
    with pytest.raises(LabelsInvalid) as raised:
        read_labels(tmp_path)
    problems = raised.value.problems
    assert len(problems) == 3
    assert problems[0].startswith("broken.label.json: not JSON")
    assert problems[1].startswith("list.label.json: a label is a JSON object")
    assert problems[2] == "lonely.label.json: no document named lonely.EXT beside it"


def test_the_label_store_keeps_its_labels_in_its_file(tmp_path: Path):
    (tmp_path / "a.txt").write_bytes(b"A")
    (tmp_path / "a.label.json").write_text('{"x": 1}')
    store = LabelStore()
    store.attach(tmp_path / "state" / "labels.json")
    assert store.add(read_labels(tmp_path)) == 1
    again = LabelStore()
    again.attach(tmp_path / "state" / "labels.json")
    found = again.get(document_sha256(b"A"))
    assert found is not None and found.fields == {"x": 1}
    again.clear()
    fresh = LabelStore()
    fresh.attach(tmp_path / "state" / "labels.json")
    assert fresh.counts() == {"labels": 0, "recordings": 0}


def test_a_file_without_a_reader_is_refused(tmp_path: Path):
    path = tmp_path / "reader.py"
    path.write_text("CLASS_NAME = 3\n")
    with pytest.raises(ValueError, match="defines CLASS_NAME"):
        load_reader(path)
    with pytest.raises(ValueError, match="no such Python file"):
        load_reader(tmp_path / "missing.py")


def test_the_invoice_reader_reads_200_synthetic_invoices():
    reader = load_reader(READER)
    assert reader.class_name == "invoice"
    documents = generate_documents(200, seed=42)
    correct = 0
    for document in documents:
        read = json.loads(reader.reply(document.text))
        truth = document.truth.model_dump(mode="json")
        correct += sum(str(read[name]) == str(truth[name]) for name in FIELDS)
    accuracy = correct / (len(documents) * len(FIELDS))
    assert accuracy >= 0.95, accuracy


class KitResult(BaseModel):
    key: str
    sha256: str | None


class KitCall(BaseModel):
    purpose: str
    class_name: str | None
    fields: dict[str, Any] | None


def test_a_jobs_calls_become_recordings_that_read_back(tmp_path: Path):
    digest = document_sha256(b"claim")
    results = {
        "claim.pdf": KitResult(key="incoming/j/claim.pdf", sha256=digest),
        "unread.pdf": KitResult(key="incoming/j/unread.pdf", sha256=None),
    }
    calls = {
        "claim.pdf": [
            KitCall(purpose="classify", class_name=None, fields={"class": "letter"}),
            KitCall(purpose="extract", class_name="letter", fields=None),  # a bad reply: nothing to replay
            KitCall(purpose="extract", class_name="letter", fields={"claim": "C-1"}),
        ],
        "unread.pdf": [KitCall(purpose="extract", class_name="letter", fields={"claim": "C-2"})],
    }
    (recording,) = recordings_of(results, calls)
    assert recording.sha256 == digest and recording.source == "incoming/j/claim.pdf"
    assert recording.reply_to("classify", None).reply == '{"class": "letter"}'
    assert recording.reply_to("extract", "letter").reply == '{"claim": "C-1"}'
    assert recording.reply_to("extract", "form") is None
    (path,) = write_recordings(tmp_path / "recorded", [recording])
    assert path.name == f"claim-{digest[:12]}.recording.json"
    assert read_recordings(tmp_path / "recorded") == [recording]
    path.write_text('{"sha256": "nope", "replies": []}')
    with pytest.raises(LabelsInvalid, match=r"claim-.*\.recording\.json: sha256: String should match"):
        read_recordings(tmp_path / "recorded")
