"""What `demo --job` and `chaos --job` load from a definition folder before the job starts: its labelled
samples, and its references/*.csv as items of the deployment's one reference table (a moto DynamoDB)."""

from __future__ import annotations

import json
from pathlib import Path

import boto3
import pytest
from moto import mock_aws

from docagent.cli import main
from docagent.kit.reference_files import load_references, reference_items
from docagent.kit.scaffold import sample_documents
from functions import storage

CLAIMS = Path(__file__).resolve().parents[2] / "examples" / "claims"


def test_the_claims_references_are_items_keyed_by_table_and_key() -> None:
    items = reference_items(CLAIMS)
    assert len(items) == 5
    assert items[0] == {
        "table": "policies",
        "key": "POL-100234",
        "holder": "Maria Jensen",
        "product": "home",
        "currency": "EUR",
        "status": "active",
    }


def test_the_first_column_is_the_key_without_a_key_column(tmp_path: Path) -> None:
    (tmp_path / "references").mkdir()
    (tmp_path / "references" / "vendors.csv").write_text("code,label,note\nV-1,Acme,\n V-2 ,Globex,x\n")
    assert reference_items(tmp_path) == [
        {"table": "vendors", "key": "V-1", "label": "Acme"},
        {"table": "vendors", "key": "V-2", "label": "Globex", "note": "x"},
    ]


def test_a_row_without_its_key_is_refused_naming_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "references").mkdir()
    (tmp_path / "references" / "codes.csv").write_text("key,label\nA,first\n,second\n")
    with pytest.raises(ValueError, match=r"codes\.csv:3: the row has no key"):
        reference_items(tmp_path)


@mock_aws
def test_load_references_puts_every_row_in_the_reference_table() -> None:
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    dynamodb.create_table(
        TableName="refs",
        KeySchema=[
            {"AttributeName": "table", "KeyType": "HASH"},
            {"AttributeName": "key", "KeyType": "RANGE"},
        ],
        AttributeDefinitions=[
            {"AttributeName": "table", "AttributeType": "S"},
            {"AttributeName": "key", "AttributeType": "S"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    assert load_references(dynamodb, "refs", CLAIMS) == 5
    item = dynamodb.get_item(TableName="refs", Key={"table": {"S": "policies"}, "key": {"S": "POL-204415"}})
    assert item["Item"]["holder"] == {"S": "Aisha Rahman"}
    missing = dynamodb.get_item(
        TableName="refs", Key={"table": {"S": "policies"}, "key": {"S": "POL-999001"}}
    )
    assert "Item" not in missing  # the sample whose policy is unknown is rejected by its lookup check
    assert load_references(dynamodb, "refs", CLAIMS) == 5  # loading again leaves the same table
    assert dynamodb.scan(TableName="refs")["Count"] == 5


def test_only_labelled_samples_are_run(tmp_path: Path) -> None:
    found = [path.relative_to(CLAIMS / "samples").as_posix() for path in sample_documents(CLAIMS)]
    assert len(found) == 7 and found[0] == "claim-form/claim-0001.pdf"
    (tmp_path / "samples").mkdir()
    (tmp_path / "samples" / "a.txt").write_text("labelled")
    (tmp_path / "samples" / "a.label.json").write_text("{}")
    (tmp_path / "samples" / "b.txt").write_text("no label")
    assert [path.name for path in sample_documents(tmp_path)] == ["a.txt"]


@pytest.mark.parametrize(("drill", "option"), [("demo", "--crash-cloud"), ("chaos", "--cloud")])
def test_job_refuses_the_cloud_crash_drills(drill: str, option: str, capsys) -> None:
    assert main([drill, "--job", str(CLAIMS), option, "--json"]) == 2
    assert f"{option} runs the invoice example only" in json.loads(capsys.readouterr().out)["error"]


class _Record:
    def __init__(self, data: dict) -> None:
        self.data = data
        self.key = data.get("key")

    def model_dump(self, mode: str = "python") -> dict:
        return self.data


class _Records:
    def __init__(self, results: list[dict], calls: dict[str, list[dict]], objects: dict[str, dict]) -> None:
        self.results = {str(index): _Record(result) for index, result in enumerate(results)}
        self.model_calls = {doc: [_Record(call) for call in found] for doc, found in calls.items()}
        self.objects = objects

    def refresh(self) -> None:
        pass

    def read_json(self, key: str) -> dict | None:
        return self.objects.get(key)


class _Job:
    def __init__(self, job_id: str, records: _Records) -> None:
        self.job_id = job_id
        self.records = records


def test_the_demo_summary_of_a_job_folder_compares_results_with_labels(tmp_path: Path) -> None:
    pytest.importorskip("docagent.kit.registry", reason="kit-cli's definition publish is not merged yet")
    pytest.importorskip("docagent.localcloud.labels", reason="kit-localmodel's labels are not merged yet")
    job_folder = pytest.importorskip("docagent.drills.job_folder")

    folder = job_folder.JobFolder.read(CLAIMS)
    prefix = "incoming/demo-1/"
    results = []
    for document in folder.documents:
        label = json.loads(document.with_name(document.name.split(".")[0] + ".label.json").read_text())
        if document.name == "claim-0002.docx":
            label = {**label, "total": "999.99"}  # one field the model read wrong
        status = "rejected" if document.name == "claim-0004.docx" else "extracted"
        results.append(
            {"key": folder.key(prefix, document), "status": status, "class_name": document.parent.name}
            | {"fields": label}
        )
    calls = {str(i): [{"purpose": "classify"}, {"purpose": "extract"}] for i in range(7)}
    report = {
        "versions": {"definition_sha256": folder.bundle.sha256},
        "totals": {"total-by-currency": {"EUR": "1.00"}},
        "actions": [{"name": "results-export", "outcome": "performed"}],
    }
    objects = {
        storage.report_key("demo-1"): report,
        storage.action_done_key("demo-1", "results-export"): {"attempts": 1},
    }
    summary = folder.summary(_Job("demo-1", _Records(results, calls, objects)), prefix)
    definition = summary["definition"]
    assert definition["pinned"] == definition["version"] == folder.bundle.sha256[:12]
    assert definition["fields_differing_from_label"] == ["samples/claim-form/claim-0002.docx"]
    assert definition["results_by_status"] == {"extracted": 6, "rejected": 1}
    assert definition["results_by_class"] == {"claim-form": 4, "repair-estimate": 3}
    assert definition["model_calls_by_purpose"] == {"classify": 7, "extract": 7}
    assert definition["actions"] == [{"name": "results-export", "outcome": "performed", "attempts": 1}]
    assert definition["actions_declared"] == ["results-export", "intake-finished"]
    assert summary["documents_by_format"] == {"docx": 3, "pdf": 4}
    assert summary["extraction_accuracy_by_format"]["pdf"] == 1.0
    assert summary["extraction_accuracy_by_format"]["docx"] == round(
        22 / 23, 4
    )  # two claim forms of 8 fields, an estimate of 7
