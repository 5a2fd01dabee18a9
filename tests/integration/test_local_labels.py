"""The local Bedrock answers any job definition from its samples' labels
(docagent/localcloud/bedrock/labels.py):
extract and classify calls by the document's sha256, a clear refusal without a label, labels kept across a
restart and forgotten by a fresh start, a reader for unlabelled documents of its class, faults on top."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import boto3
import pytest
from botocore.exceptions import ClientError

from docagent.cli import main
from docagent.localcloud.bedrock.labels import document_sha256, labels_of, load_reader, register_labels
from docagent.localcloud.bedrock.model_faults import ModelFaults
from docagent.localcloud.bedrock.recordings import RecordedReply, Recording, write_recordings
from docagent.localcloud.server import REGION, LocalCloud
from functions.errors import DocumentNotLabelled
from functions.inference.converse import document_refusal
from functions.inference.evidence import split
from functions.inference.instructions import classify_instruction, extract_instruction
from functions.reading.documents import DocumentInput
from tests.integration.conftest import INVOICE_READER

# One local cloud per process: these start their own (`make test` runs them apart from the session cloud).
pytestmark = pytest.mark.own_cloud

MODEL = "us.anthropic.claude-haiku-4-5-20251001-v1:0"
LETTER = b"Dear Ms Rowe,\nyour claim C-118 of 2026-03-04 is received.\n"
FORM = b"# Change of address\n\nPolicy: P-9001\nNew street: 4 Elm Row\n"


def write_definition(root: Path) -> Path:
    """A two-class definition with one labelled sample per class and one unlabelled document."""
    (root / "classes").mkdir(parents=True)
    for name, properties in {
        "letter": {"claim": {"type": "string"}, "received": {"type": "string"}},
        "form": {"policy": {"type": "string"}, "street": {"type": "string"}},
    }.items():
        schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"}
        (root / "classes" / f"{name}.schema.json").write_text(
            json.dumps({**schema, "properties": properties})
        )
    classes = {
        name: {"description": f"a {name}", "schema": f"classes/{name}.schema.json"}
        for name in ("letter", "form")
    }
    (root / "job.json").write_text(json.dumps({"name": "claims", "classes": classes}))
    for class_name, stem, data, label in [
        ("letter", "rowe", LETTER, {"claim": "C-118", "received": "2026-03-04"}),
        ("form", "move", FORM, {"policy": "P-9001", "street": "4 Elm Row"}),
    ]:
        folder = root / "samples" / class_name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{stem}.txt").write_bytes(data)
        (folder / f"{stem}.label.json").write_text(json.dumps(label))
    (root / "samples" / "letter" / "stray.txt").write_bytes(b"No label beside this one.\n")
    return root


def converse(endpoint: str, data: bytes, instruction: str) -> str:
    client = boto3.session.Session(
        aws_access_key_id="local", aws_secret_access_key="local", region_name=REGION
    ).client("bedrock-runtime", endpoint_url=endpoint)
    document = {"document": {"format": "txt", "name": "document-00001", "source": {"bytes": data}}}
    reply = client.converse(
        modelId=MODEL, messages=[{"role": "user", "content": [document, {"text": instruction}]}]
    )
    return str(reply["output"]["message"]["content"][0]["text"])


def extract(endpoint: str, data: bytes, class_name: str) -> dict:
    """The fields of the local model's extract reply; its quotes (docagent/localcloud/bedrock/evidence.py)
    quote the line of the document that holds each value."""
    answer: dict = json.loads(converse(endpoint, data, extract_instruction(class_name, "document-00001")))
    fields, quotes = split(answer)
    assert set(quotes) >= {name for name, value in fields.items() if isinstance(value, str)}, quotes
    return fields


def test_labels_answer_extract_and_classify_and_survive_a_restart(tmp_path: Path):
    definition = write_definition(tmp_path / "claims")
    state = tmp_path / "state"
    with LocalCloud(state) as cloud:
        assert register_labels(cloud.endpoint, definition) == 2
        assert extract(cloud.endpoint, LETTER, "letter") == {"claim": "C-118", "received": "2026-03-04"}
        replied = json.loads(
            converse(cloud.endpoint, LETTER, extract_instruction("letter", "document-00001"))
        )
        assert {quote.quote for quote in split(replied)[1].values()} == {
            "your claim C-118 of 2026-03-04 is received."
        }
        assert extract(cloud.endpoint, FORM, "form") == {"policy": "P-9001", "street": "4 Elm Row"}
        classified = converse(cloud.endpoint, FORM, classify_instruction("document-00001"))
        assert json.loads(classified) == {"class": "form"}
    with LocalCloud(state) as restarted:
        assert labels_of(restarted.endpoint)["labels"] == 2
        assert json.loads(converse(restarted.endpoint, LETTER, classify_instruction("d"))) == {
            "class": "letter"
        }
    with (
        LocalCloud(state, fresh=True) as fresh,
        pytest.raises(ClientError, match="no label for this document"),
    ):
        extract(fresh.endpoint, LETTER, "letter")


def test_a_document_without_a_label_is_refused_saying_how_to_add_one(tmp_path: Path):
    definition = write_definition(tmp_path / "claims")
    stray = (definition / "samples" / "letter" / "stray.txt").read_bytes()
    with LocalCloud(tmp_path / "state", persist=False) as cloud:
        register_labels(cloud.endpoint, definition)
        with pytest.raises(ClientError) as raised:
            extract(cloud.endpoint, stray, "letter")
    # The production provider's reading of the refusal: that document's rejection, with the reason.
    refusal = document_refusal(raised.value, DocumentInput(stray, "txt", "document-00001"))
    # Its own outcome (#40): the document is fine, its label is missing; the reason says which file to add.
    assert isinstance(refusal, DocumentNotLabelled) and refusal.error_name == "DocumentNotLabelled"
    reason = str(refusal)
    assert f"no label for this document (sha256 {hashlib.sha256(stray).hexdigest()})" in reason
    assert (
        "NAME.label.json beside the document NAME.EXT" in reason and "`docagent local labels DIR`" in reason
    )


def test_the_reader_answers_unlabelled_documents_of_its_class_only(tmp_path: Path):
    invoice = (
        b"INVOICE\nInvoice number: INV-2026-00001\nCustomer ID: CUST-00042\nDate: 2026-02-03\n"
        b"Total: 10.00 EUR\n"
    )
    reader = load_reader(INVOICE_READER)
    with LocalCloud(tmp_path / "state", persist=False, reader=reader) as cloud:
        fields = extract(cloud.endpoint, invoice, "invoice")
        assert (fields["invoice_number"], fields["customer_id"], fields["amount"]) == (
            "INV-2026-00001",
            "CUST-00042",
            "10.00",
        )
        with pytest.raises(ClientError, match="no label for this document"):
            extract(cloud.endpoint, invoice, "letter")


def test_the_corrupt_fault_changes_a_labelled_answer(tmp_path: Path):
    definition = write_definition(tmp_path / "claims")
    with LocalCloud(tmp_path / "state", persist=False, model_faults=ModelFaults(corrupt="claim")) as cloud:
        register_labels(cloud.endpoint, definition)
        assert extract(cloud.endpoint, LETTER, "letter") == {"claim": "C-119", "received": "2026-03-04"}


def test_local_labels_command_registers_a_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    definition = write_definition(tmp_path / "claims")
    with LocalCloud(tmp_path / "state", persist=False) as cloud:
        code = main(["local", "labels", str(definition), "--endpoint", cloud.endpoint, "--json"])
        answer = json.loads(capsys.readouterr().out)
        assert code == 0 and answer["registered"] == 2 and answer["labels"] == 2
        bad = tmp_path / "bad"
        bad.mkdir()
        (bad / "lonely.label.json").write_text("{}")
        assert main(["local", "labels", str(bad), "--endpoint", cloud.endpoint, "--json"]) != 0
        assert "lonely.label.json: no document named lonely.EXT beside it" in capsys.readouterr().out


def test_a_recorded_reply_is_replayed_before_the_label(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    definition = write_definition(tmp_path / "claims")
    recorded = Recording(
        sha256=document_sha256(LETTER),
        replies=[
            RecordedReply(purpose="classify", reply='{"class": "letter"}'),
            RecordedReply(
                purpose="extract", class_name="letter", reply='{"claim": "C-118", "received": null}'
            ),
        ],
    )
    write_recordings(definition / "recorded", [recorded])
    with LocalCloud(tmp_path / "state") as cloud:
        code = main(["local", "labels", str(definition), "--endpoint", cloud.endpoint, "--json"])
        answer = json.loads(capsys.readouterr().out)
        assert code == 0 and (answer["registered"], answer["labels"], answer["recordings"]) == (3, 2, 1)
        # a recording is replayed as the model gave it: no evidence is added to it, unlike a label's answer
        replayed = converse(cloud.endpoint, LETTER, extract_instruction("letter", "document-00001"))
        assert json.loads(replayed) == {"claim": "C-118", "received": None}
        assert extract(cloud.endpoint, FORM, "form") == {"policy": "P-9001", "street": "4 Elm Row"}, "a label"
    with LocalCloud(tmp_path / "state") as restarted:
        assert labels_of(restarted.endpoint) == {"labels": 2, "recordings": 1, "reader": None}
        assert converse(restarted.endpoint, LETTER, classify_instruction("d")) == '{"class": "letter"}'
