"""`docagent start --from-dir DIR` on a local cloud registers the labels beside the documents with the local
Bedrock before the job starts (and does not upload them): the job's results are the labels' fields."""

from __future__ import annotations

import json

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
