"""`docagent start`, `status`, `list`, `logs` (and the refusals of `redrive`/`inspect`) on the local cloud."""

from __future__ import annotations

import json

import pytest
from botocore.exceptions import ClientError

from docagent.cli import main
from docagent.drills.document_files import render
from docagent.operations.records import execution_arn_for
from functions.payloads.common import MAX_CONVERSE_DOCUMENT_BYTES
from tests import documents as files


def execution_exists(aws, deployed, job_id: str) -> bool:
    try:
        aws("stepfunctions").describe_execution(
            executionArn=execution_arn_for(deployed.outputs["StateMachineArn"], job_id)
        )
    except ClientError:
        return False
    return True


def test_start_refuses_a_bad_request_before_anything_starts(docagent, aws, deployed, tmp_path, documents_dir):
    bucket = deployed.outputs["BucketName"]
    empty = tmp_path / "empty"
    empty.mkdir()
    binary = documents_dir(2, name="binary")
    (binary / "photo.pdf").write_bytes(files.GZIP)
    missing = tmp_path / "missing.json"
    missing.write_text(json.dumps(["incoming/nowhere/a.txt"]))
    nothing = tmp_path / "nothing.json"
    nothing.write_text("[]")
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps(["s3://no-such-bucket-here/a.txt"]))
    mixed = documents_dir(2, name="mixed")
    (mixed / "scan.pdf").write_bytes(files.GZIP)  # an archive named .pdf: no format the model reads
    (mixed / "notes.txt").write_bytes("caf\xe9".encode("latin-1"))  # text, not UTF-8

    refusals = {
        "cli-refused-empty": (["--from-dir", str(empty)], "NoDocuments"),
        "cli-refused-prefix": (["--prefix", f"s3://{bucket}/incoming/no-such-prefix/"], "PrefixNotFound"),
        # Outside the source locations (incoming/ of the job bucket): refused before anything is read.
        "cli-refused-outside": (["--prefix", f"s3://{bucket}/jobs/"], "OutsideSourceLocations"),
        "cli-refused-bucket": (["--prefix", "s3://no-such-bucket-here/x/"], "OutsideSourceLocations"),
        "cli-refused-binary": (["--from-dir", str(binary)], "DocumentUnreadable"),
        "cli-refused-missing": (["--manifest", str(missing)], "DocumentMissing"),
        "cli-refused-nothing": (["--manifest", str(nothing)], "NoDocuments"),
        "cli-refused-elsewhere": (["--manifest", str(elsewhere)], "OutsideSourceLocations"),
        "cli-refused-mixed": (["--from-dir", str(mixed)], "DocumentUnreadable"),
        "cli-refused-fault": (["--from-dir", str(binary), "--fault", "{not json"], "InvalidJobRequest"),
    }
    for job_id, (source, error_type) in refusals.items():
        code, answer = docagent("start", "--job-id", job_id, *source)
        assert (code, answer["error_type"]) == (2, error_type), (job_id, answer)
        assert answer["exit_code"] == 2 and answer["error"]
        assert not execution_exists(aws, deployed, job_id), f"{job_id}: nothing may start"
        listed = aws("s3").list_objects_v2(Bucket=bucket, Prefix=f"incoming/{job_id}/")
        assert listed.get("KeyCount", 0) == 0, f"{job_id}: nothing may be uploaded"
    code, answer = docagent("start", "--job-id", "not a job id!", "--from-dir", str(empty))
    assert (code, answer["error_type"]) == (2, "InvalidJobId")
    code, answer = docagent("start", "--job-id=-looks-like-an-option", "--from-dir", str(empty))
    assert (code, answer["error_type"]) == (2, "InvalidJobId")
    code, answer = docagent("start", "--job-id", "cli-refused-elsewhere", "--manifest", str(elsewhere))
    assert "s3://no-such-bucket-here/a.txt" in answer["error"], "the key outside is named"
    code, answer = docagent("start", "--job-id", "cli-refused-mixed", "--from-dir", str(mixed))
    unreadable = sorted(answer["problems"]["DocumentUnreadable"])
    assert [name.split(" ")[0] for name in unreadable] == ["notes.txt", "scan.pdf"], "every one at once"
    assert "not valid UTF-8" in unreadable[0] and "gzip archive" in unreadable[1]
    refused = docagent("start", "--job-id", "cli-refused-binary", "--from-dir", str(binary))[1]["error"]
    assert "photo.pdf (the content is a gzip archive" in refused


@pytest.mark.parametrize("command", ["status", "inspect", "redrive", "logs"])
def test_an_unknown_job_is_not_found(docagent, command):
    code, answer = docagent(command, "cli-no-such-job")
    assert code == 3 and answer["exit_code"] == 3 and answer["error_type"] == "JobNotFound"


def test_a_job_starts_once_runs_and_is_reported(docagent, aws, deployed, documents_dir, tmp_path):
    job_id = "cli-clean"
    documents = documents_dir(6)
    spreadsheet = documents / "doc-00005.txt"  # one invoice as Excel writes it: --from-dir takes .xlsx too
    (documents / "doc-00005.xlsx").write_bytes(render(spreadsheet.read_text(), "xlsx"))
    spreadsheet.unlink()
    code, started = docagent("start", "--job-id", job_id, "--from-dir", str(documents), "--wait")
    assert code == 0, started
    assert started["started"] is True and started["source"]["uploaded"] == 6
    assert started["warnings"] == [], "the customers table holds the synthetic customers"
    assert started["final"]["status"] == "SUCCEEDED"
    assert started["final"]["documents"] == {
        "total": 6,
        "succeeded": 6,
        "rejected": 0,
        "review": 0,
        "failed": 0,
        "running": 0,
        "pending": 0,
        "results_stored": 6,
    }

    # The same job with the same input is the same execution; with another input it is refused.
    code, again = docagent("start", "--job-id", job_id, "--from-dir", str(documents))
    assert code == 0 and again["started"] is False
    assert again["execution_arn"] == started["execution_arn"] and again["status"] == "SUCCEEDED"
    code, other = docagent("start", "--job-id", job_id, "--from-dir", str(documents), "--require-approval")
    assert (code, other["error_type"]) == (2, "JobConflict") and "options" in other["differs_in"]
    (documents / "extra.txt").write_text("INVOICE extra")
    code, changed = docagent("start", "--job-id", job_id, "--from-dir", str(documents))
    assert (code, changed["error_type"]) == (2, "JobConflict")
    assert changed["new"] == [f"incoming/{job_id}/extra.txt"], "a file the job never had"
    assert (
        len(
            aws("s3").list_objects_v2(Bucket=deployed.outputs["BucketName"], Prefix=f"incoming/{job_id}/")[
                "Contents"
            ]
        )
        == 6
    )

    code, status = docagent("status", job_id)
    assert code == 0 and status["status"] == "SUCCEEDED" and status["current_state"] == "VerifyJob"
    assert status["documents"]["succeeded"] == 6 and status["redrive_count"] == 0
    assert status["elapsed_seconds"] > 0

    code, listed = docagent("list")
    assert code == 0
    row = next(job for job in listed["jobs"] if job["job_id"] == job_id)
    assert row["status"] == "SUCCEEDED" and row["documents"] == 6 and row["redrive_count"] == 0
    code, failed_only = docagent("list", "--status", "FAILED")
    assert code == 0 and job_id not in [job["job_id"] for job in failed_only["jobs"]]

    code, refused = docagent("redrive", job_id)
    assert code == 2 and refused["eligible"] is False
    assert [reason["code"] for reason in refused["reasons"]] == ["Succeeded"]

    code, report = docagent("inspect", job_id)
    assert code == 0 and report["last_committed_boundary"] == "verified"
    assert report["documents"]["committed"] == 6 and report["left"] == {
        "documents": [],
        "states": [],
        "conditional_states": [],
    }
    assert report["external_effects"]["model_calls"]["count"] == 6
    [ticket] = report["external_effects"]["actions"]
    assert (ticket["name"], ticket["outcome"]) == ("ticket", "performed") and report["uncertain"] == []

    code, logs = docagent("logs", job_id)
    assert code == 0 and logs["count"] > 0
    assert {line["function"] for line in logs["events"]} >= {"PrepareJob", "ProcessDocument", "RunActions"}
    document_id = "doc-00003.txt"
    code, one = docagent("logs", job_id, "--document", document_id)
    assert code == 0 and one["count"] > 0
    assert {line["document_id"] for line in one["events"]} == {document_id}
    assert "document result stored" in [line["message"] for line in one["events"]]
    code, unknown = docagent("logs", job_id, "--document", "no-such-document.txt")
    assert (code, unknown["error_type"]) == (3, "DocumentNotFound") and "no-such-document.txt" in unknown[
        "error"
    ]


def test_a_manifest_job_is_followed_by_status_watch(docagent, aws, deployed, documents_dir, tmp_path):
    bucket = deployed.outputs["BucketName"]
    documents = documents_dir(3, seed=11)
    keys = []
    for path in sorted(documents.iterdir()):
        keys.append(f"incoming/cli-manifest/{path.name}")
        aws("s3").put_object(Bucket=bucket, Key=keys[-1], Body=path.read_bytes())
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps([f"s3://{bucket}/{key}" for key in keys]))
    code, started = docagent("start", "--job-id", "cli-manifest", "--manifest", str(manifest))
    assert code == 0 and started["started"] is True
    assert started["request"]["documents"] == keys and started["source"]["kind"] == "manifest"
    code, watched = docagent("status", "cli-manifest", "--watch", "--interval", "0.2")
    assert code == 0 and watched["status"] == "SUCCEEDED" and watched["documents"]["results_stored"] == 3
    # a prefix without its slash names the folder; a dry run (a job of its own, never waited for, until
    # 2026-12-07: a real `start --prefix` runs in test_document_sizes.py)
    code, by_prefix = docagent(
        "start", "--job-id", "cli-prefix", "--prefix", f"s3://{bucket}/incoming/cli-manifest", "--dry-run"
    )
    assert code == 0 and by_prefix["request"]["prefix"] == "incoming/cli-manifest/"
    assert by_prefix["source"]["documents"] == 3 and by_prefix["dry_run"] is True


def test_bad_documents_are_each_rejected_and_inspect_says_why(  # noqa: PLR0917 (pytest fixtures)
    docagent, aws, deployed, documents_dir, cloud, capsys, monkeypatch
):
    """Through the deployed workflow, started as the console would (no operator check at all): every bad
    document is its own rejection with its reason, the job succeeds, inspect says why."""
    bucket, job_id = deployed.outputs["BucketName"], "cli-bad-documents"
    prefix = f"incoming/{job_id}/"
    good = documents_dir(2)
    uploads = {path.name: path.read_bytes() for path in good.iterdir()}
    uploads |= {
        "good.pdf": render(files.INVOICE, "pdf"),
        "good.docx": render(files.INVOICE.replace("00421", "00422"), "docx"),
        "corrupt.pdf": files.corrupt_pdf(),
        "encrypted.pdf": files.encrypted_pdf(),
        "scanned.pdf": files.scanned_pdf(),
        "empty.pdf": files.empty_pdf(),
        "bomb.docx": files.docx_zip_bomb(),
        "photo.pdf": files.TRUNCATED_PNG,
        "oversized.txt": (files.INVOICE + "x" * MAX_CONVERSE_DOCUMENT_BYTES).encode(),
        "../../etc/passwd.txt": files.INVOICE.replace("00421", "00423").encode(),
        "ctl\tred\x7f\u202eexe.txt": files.INVOICE.replace("00421", "00424").encode(),
        "n" * 1000 + ".txt": files.INVOICE.replace("00421", "00425").encode(),
    }
    for name, data in uploads.items():
        aws("s3").put_object(Bucket=bucket, Key=f"{prefix}{name}", Body=data)

    aws("stepfunctions").start_execution(
        stateMachineArn=deployed.outputs["StateMachineArn"],
        name=job_id,
        input=json.dumps({"job_id": job_id, "prefix": prefix}),
    )
    code, watched = docagent("status", job_id, "--watch", "--interval", "0.5")

    assert code == 0 and watched["status"] == "SUCCEEDED", watched
    code, report = docagent("inspect", job_id, "--all")
    assert code == 0
    results = {doc["key"][len(prefix) :]: doc["result"] for doc in report["document_details"]}
    rejected = {
        name: (result["error"], result["reason"])
        for name, result in results.items()
        if result["status"] == "rejected"
    }
    expected = {
        "corrupt.pdf": ("DocumentUnreadable", "the PDF is corrupt"),
        "encrypted.pdf": ("DocumentUnreadable", "encrypted or password-protected"),
        "empty.pdf": ("DocumentUnreadable", "has no pages"),
        "bomb.docx": ("DocumentUnreadable", "zip bomb"),
        "scanned.pdf": ("ExtractionFailed", "does not match the class's schema"),
        "photo.pdf": ("DocumentUnreadable", "the PNG image is corrupt or truncated"),
        "oversized.txt": (
            "DocumentTooLarge",
            f"over Converse's limit of {MAX_CONVERSE_DOCUMENT_BYTES} bytes",
        ),
    }
    assert {name: error for name, (error, _) in rejected.items()} == {
        name: error for name, (error, _) in expected.items()
    }
    for name, (_, reason) in expected.items():
        assert reason in rejected[name][1], (name, rejected[name])
    assert len(results) - len(rejected) == 7, "the good documents and the hostile names are all extracted"
    monkeypatch.setenv("COLUMNS", "400")
    capsys.readouterr()
    assert main(["inspect", job_id, "--endpoint", cloud.endpoint]) == 0
    table = capsys.readouterr().out
    for name, (error, _) in expected.items():  # the table folds long reasons: the JSON above has them whole
        assert name in table and f"{error}: " in table, table


def test_reference_load_fills_a_local_reference_table(docagent, aws, deployed, tmp_path):
    path = tmp_path / "customers.csv"
    path.write_text("customer_id,name,country\nLOAD-1,Loaded One,DE\nLOAD-2,Loaded Two,\n", encoding="utf-8")
    code, out = docagent("reference", "load", str(path), "--table", "customers", "--key", "customer_id")
    assert code == 0, out
    assert (out["rows"], out["written"]) == (2, 2)
    table = deployed.outputs["ReferenceTableName"]
    assert out["table_name"] == table
    key = {"table": {"S": "customers"}, "key": {"S": "LOAD-2"}}
    item = aws("dynamodb").get_item(TableName=table, Key=key)["Item"]
    assert item == {**key, "customer_id": {"S": "LOAD-2"}, "name": {"S": "Loaded Two"}}
