"""`docagent start --from-dir DIR` on a local cloud registers the labels beside the documents with the local
Bedrock before the job starts (and does not upload them): the job's results are the labels' fields."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from docagent.drills.synthetic import generate_documents
from docagent.localcloud.bedrock.labels import labels_of
from functions import storage


def test_start_from_dir_registers_the_labels_beside_the_documents(  # noqa: PLR0917 (pytest fixtures)
    docagent, aws, deployed, cloud, documents_dir, customers
):
    job_id = "cli-labelled"
    documents = documents_dir(2)
    truth = generate_documents(2, seed=7, customer_ids=customers)[0].truth.model_dump(mode="json")
    labelled = {**truth, "invoice_number": "LBL-2026-00001"}  # no reader would read this: the label says it
    (documents / "doc-00000.label.json").write_text(json.dumps(labelled))
    with (documents / "doc-00000.txt").open("a") as document:  # bytes no other test has labelled
        document.write(f"\nRef. {job_id}\n")
    held = labels_of(cloud.endpoint)["labels"]

    code, started = docagent("start", "--job-id", job_id, "--from-dir", str(documents), "--wait")

    assert code == 0, started
    assert started["source"]["uploaded"] == 2 and started["final"]["status"] == "SUCCEEDED"
    assert [item["path"] for item in started["source"]["skipped"]] == ["doc-00000.label.json"]
    assert labels_of(cloud.endpoint)["labels"] == held + 1
    bucket = deployed.outputs["BucketName"]

    def fields(document_id: str) -> dict:
        body = aws("s3").get_object(Bucket=bucket, Key=storage.result_key(job_id, document_id))["Body"]
        result = json.loads(body.read())
        found: dict = result.get("fields") or result.get("facts")  # the kit's shape, or today's
        return found

    assert fields("doc-00000.txt")["invoice_number"] == "LBL-2026-00001"
    assert fields("doc-00001.txt")["invoice_number"] != "LBL-2026-00001", "the reader answers the other"


def test_a_flat_inbox_of_several_classes_runs_each_with_the_class_its_label_says(
    docagent, aws, deployed, cloud, tmp_path
):
    """#40: no per-class folders: each label says its class ({"class": ..., "fields": ...}), and one says the
    document is of no class ({"class": null}), which ends with that outcome (UnknownDocumentClass)."""
    claims = Path(__file__).resolve().parents[2] / "examples" / "claims"
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    picked = {"claim-form": "claim-0001.pdf", "repair-estimate": "estimate-0001.pdf"}
    for class_name, name in picked.items():
        sample = claims / "samples" / class_name / name
        shutil.copy(sample, inbox / name)
        fields = json.loads(sample.with_name(sample.name.split(".")[0] + ".label.json").read_text())
        (inbox / name).with_suffix(".label.json").write_text(
            json.dumps({"class": class_name, "fields": fields})
        )
    (inbox / "menu.txt").write_text("Lunch menu of the Blue Heron, 4 December 2026: soup, bread, pie.\n")
    (inbox / "menu.label.json").write_text(json.dumps({"class": None}))

    code, started = docagent("start", "--job", str(claims), "--from-dir", str(inbox), "--wait")

    assert code == 0, started
    assert started["final"]["status"] == "SUCCEEDED"
    bucket, job_id = deployed.outputs["BucketName"], started["job_id"]

    def result(document_id: str) -> dict:
        body = aws("s3").get_object(Bucket=bucket, Key=storage.result_key(job_id, document_id))["Body"]
        found: dict = json.loads(body.read())
        return found

    for class_name, name in picked.items():
        assert result(name)["class_name"] == class_name, name
    menu = result("menu.txt")
    assert (
        menu["status"] == "rejected"
        and menu["error"] == "UnknownDocumentClass"
        and menu["class_name"] is None
    )
