"""What `demo --job` and `chaos --job` load from a definition folder before the job starts (its labelled
samples, its references/*.csv and the key column of each), and what the demo reports of its job."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docagent.cli import main
from docagent.drills.demo import call_groups
from docagent.kit.loader import read_bundle
from docagent.kit.reference_files import reference_files
from docagent.kit.samples import sample_documents
from functions import storage

CLAIMS = Path(__file__).resolve().parents[2] / "examples" / "claims"


def test_the_claims_policies_are_keyed_by_the_field_their_lookup_checks_look_up() -> None:
    (policies,) = reference_files(CLAIMS, read_bundle(CLAIMS))
    assert (policies.table, policies.path.name, policies.key_field) == (
        "policies",
        "policies.csv",
        "policy_number",
    )


def test_a_table_no_check_looks_up_is_keyed_by_its_first_column(tmp_path: Path) -> None:
    bundle = read_bundle(CLAIMS)
    (tmp_path / "references").mkdir()
    (tmp_path / "references" / "vendors.csv").write_text("code,label\nV-1,Acme\n", encoding="utf-8")
    (tmp_path / "references" / "policies.jsonl").write_text(
        '\n{"holder": "A", "policy_number": "POL-000001"}\n', encoding="utf-8"
    )
    (tmp_path / "references" / "notes.txt").write_text("not a table", encoding="utf-8")
    found = [(ref.table, ref.key_field) for ref in reference_files(tmp_path, bundle)]
    assert found == [("policies", "policy_number"), ("vendors", "code")]


def test_a_reference_file_without_columns_is_refused(tmp_path: Path) -> None:
    (tmp_path / "references").mkdir()
    (tmp_path / "references" / "empty.csv").write_text("", encoding="utf-8")
    with pytest.raises(ValueError, match=r"empty\.csv: no columns"):
        reference_files(tmp_path, read_bundle(CLAIMS))


def test_only_labelled_samples_are_run(tmp_path: Path) -> None:
    found = [path.relative_to(CLAIMS / "samples").as_posix() for path in sample_documents(CLAIMS)]
    assert len(found) == 11 and found[0] == "claim-form/claim-0001.pdf"
    assert "packet-0001.pdf" in found  # a packet: its label lists its sections
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
    pytest.importorskip(
        "docagent.localcloud.bedrock.labels", reason="kit-localmodel's labels are not merged yet"
    )
    job_folder = pytest.importorskip("docagent.drills.job_folder")

    folder = job_folder.JobFolder.read(CLAIMS)
    prefix = "incoming/demo-1/"
    results = []
    objects: dict[str, dict] = {}
    for document in folder.documents:
        label = json.loads(document.with_name(document.name.split(".")[0] + ".label.json").read_text())
        if "sections" in label:  # the packet: its sections' results stored apart, listed by its own
            sections = [
                {"section_id": f"s{a:04d}-{b:04d}", "pages": [a, b], "status": "extracted", "class_name": cls}
                for cls, (a, b) in ((part["class"], part["pages"]) for part in label["sections"])
            ]
            for part, section in zip(label["sections"], sections, strict=True):
                key = storage.section_result_key("demo-1", "packet", section["section_id"])
                objects[key] = {"fields": part["fields"]}
            key = folder.key(prefix, document)
            results.append({"key": key, "document_id": "packet", "status": "extracted", "sections": sections})
            continue
        if document.name == "claim-0002.docx":
            label = {**label, "total": "999.99"}  # one field the model read wrong
        status = "rejected" if document.name == "claim-0004.docx" else "extracted"
        results.append(
            {"key": folder.key(prefix, document), "status": status, "class_name": document.parent.name}
            | {"fields": label}
        )
    calls = {str(i): [{"purpose": "classify"}, {"purpose": "extract"}] for i in range(10)}
    report = {
        "versions": {"definition_sha256": folder.bundle.sha256},
        "totals": {"total-by-currency": {"EUR": "1.00"}},
        "actions": [{"name": "results-export", "outcome": "performed"}],
    }
    objects[storage.report_key("demo-1")] = report
    objects[storage.action_done_key("demo-1", "results-export")] = {"attempts": 1}
    summary = folder.summary(_Job("demo-1", _Records(results, calls, objects)), prefix)
    definition = summary["definition"]
    assert definition["pinned"] == definition["version"] == folder.bundle.sha256[:12]
    assert definition["fields_differing_from_label"] == ["samples/claim-form/claim-0002.docx"]
    assert definition["results_by_status"] == {"extracted": 10, "rejected": 1}
    assert definition["results_by_class"] == {"claim-form": 7, "repair-estimate": 5}  # the packet's sections
    assert (definition["sections"], definition["section_results"]) == (2, 2)
    assert definition["model_calls_by_purpose"] == {"classify": 10, "extract": 10}
    assert definition["actions"] == [{"name": "results-export", "outcome": "performed", "attempts": 1}]
    assert definition["actions_declared"] == ["results-export", "intake-finished"]
    assert summary["documents_by_format"] == {"docx": 3, "jpg": 1, "pdf": 6, "tif": 1}
    assert summary["extraction_accuracy_by_format"]["pdf"] == 1.0
    assert summary["extraction_accuracy_by_format"]["docx"] == round(
        22 / 23, 4
    )  # two claim forms of 8 fields, an estimate of 7


def test_a_documents_classify_and_extract_calls_are_not_repeats() -> None:
    journal = {
        "doc-1": [_Record({"purpose": "classify"}), _Record({"purpose": "extract"})],
        "doc-2": [_Record({"purpose": "extract"}), _Record({"purpose": "extract"})],  # one repeated
        "doc-3": [_Record({})],  # a journal written before classification: an extract call
        "doc-4": [  # a packet: one call a page window and a section
            _Record({"purpose": "classify-pages", "section_id": "w0001"}),
            _Record({"purpose": "extract", "section_id": "s0001-0001"}),
            _Record({"purpose": "extract", "section_id": "s0002-0003"}),
        ],
        "doc-5": [  # a long PDF: an extract call a page window (#41), none repeated
            _Record({"purpose": "extract", "window": "p0001-0020"}),
            _Record({"purpose": "extract", "window": "p0021-0030"}),
        ],
    }
    groups = call_groups(journal)  # type: ignore[arg-type]
    assert sorted(groups) == [
        ("doc-1", "classify"),
        ("doc-1", "extract"),
        ("doc-2", "extract"),
        ("doc-3", "extract"),
        ("doc-4", "classify-pages-w0001"),
        ("doc-4", "extract-s0001-0001"),
        ("doc-4", "extract-s0002-0003"),
        ("doc-5", "extract p0001-0020"),
        ("doc-5", "extract p0021-0030"),
    ]
    assert sum(len(calls) for calls in journal.values()) - len(groups) == 1
