"""Documents of real sizes (issues 20 and 41): PDFs of 263 KB to 4.7 MB are read (the 4.5 MB document limit
does not apply to a PDF on Claude 4 and later: functions/reading/block_limits.py), a text document over
Converse's 4.5 MB is THAT document's rejection (`DocumentTooLarge`, named in its result), never a refusal of
the job, whichever way the job starts: `--from-dir`, `--prefix`, a manifest (a console start: test_cli_jobs's
bad-documents test). The PDFs are read once (`--from-dir`); the other two starts hold the ordinary invoices
and the oversized text, whose rejection is what each start path must keep (a 4.7 MB PDF read three times
proved nothing the first read had not)."""

from __future__ import annotations

import json
from pathlib import Path

from docagent.drills.document_files import render_scanned_appendix_pdf
from functions.payloads.common import MAX_CONVERSE_DOCUMENT_BYTES
from functions.storage import incoming_prefix, uploaded_key
from tests import documents as files

SIZES = {  # name -> target bytes: an attachment-laden invoice, a scan bundle, a manual, a catalogue
    "invoice-263kb.pdf": 263_000,
    "scans-1mb.pdf": 1_000_000,
    "manual-4mb.pdf": 4_000_000,
    "catalogue-4.7mb.pdf": MAX_CONVERSE_DOCUMENT_BYTES + 200_000,
}
TOO_LARGE = "notes-4.7mb.txt"  # a text document: held to Converse's 4.5 MB


def _folder(documents_dir) -> tuple[Path, list[str]]:
    folder = documents_dir(3, name="sizes")
    ordinary = sorted(path.name for path in folder.iterdir())
    for index, (name, size) in enumerate(SIZES.items()):
        text = files.INVOICE.replace("00421", f"0060{index}")
        (folder / name).write_bytes(render_scanned_appendix_pdf(text, size, seed=index))
    (folder / TOO_LARGE).write_bytes((files.INVOICE + "x" * MAX_CONVERSE_DOCUMENT_BYTES).encode())
    return folder, ordinary


def _outcomes(docagent, job_id: str) -> dict[str, tuple[str, str | None, str | None]]:
    code, report = docagent("inspect", job_id, "--all")
    assert code == 0, report
    return {
        doc["key"].rsplit("/", 1)[-1]: (
            doc["result"]["status"],
            doc["result"].get("error"),
            doc["result"].get("reason"),
        )
        for doc in report["document_details"]
    }


def _check(docagent, job_id: str, started: dict, read: list[str]) -> None:
    """The job SUCCEEDED, the oversized text its one rejection, every document of ``read`` extracted."""
    final = started["final"]
    assert final["status"] == "SUCCEEDED", started
    documents = final["documents"]
    assert documents["rejected"] == 1 and documents["failed"] == 0, _outcomes(docagent, job_id)
    assert final["documents"]["total"] == len(read) + 1
    outcomes = _outcomes(docagent, job_id)
    status, error, reason = outcomes.pop(TOO_LARGE)
    assert (status, error) == ("rejected", "DocumentTooLarge")
    assert reason and f"over Converse's limit of {MAX_CONVERSE_DOCUMENT_BYTES} bytes per document" in reason
    assert {name: outcome[0] for name, outcome in outcomes.items()} == dict.fromkeys(read, "extracted"), (
        outcomes
    )


def test_pdfs_up_to_4_7_mb_are_read_and_a_text_too_large_is_its_own_rejection_on_every_path(
    docagent, aws, deployed, documents_dir, tmp_path
):
    folder, ordinary = _folder(documents_dir)
    bucket = deployed.outputs["BucketName"]

    code, started = docagent("start", "--job-id", "sizes-dir", "--from-dir", str(folder), "--wait")
    assert code == 0 and started["started"] is True, started
    assert started["source"]["uploaded"] == len(ordinary) + len(SIZES) + 1, (
        "the oversized file is uploaded too"
    )
    assert started["source"]["too_large"] == [], (
        "under MAX_DOCUMENT_BYTES: its kind's limit is the job's check"
    )
    _check(docagent, "sizes-dir", started, [*ordinary, *SIZES])

    # the other paths: the ordinary invoices and the oversized text, under a prefix of their own
    s3, uploaded, paths = aws("s3"), incoming_prefix("sizes-dir"), incoming_prefix("sizes-paths")
    for name in [*ordinary, TOO_LARGE]:
        source = {"Bucket": bucket, "Key": uploaded_key(uploaded, name)}
        s3.copy_object(Bucket=bucket, Key=uploaded_key(paths, name), CopySource=source)
    prefix = f"s3://{bucket}/{paths}"
    code, started = docagent("start", "--job-id", "sizes-prefix", "--prefix", prefix, "--wait")
    assert code == 0 and started["started"] is True, started
    assert started["source"]["too_large"] == []
    _check(docagent, "sizes-prefix", started, ordinary)

    manifest = tmp_path / "sizes.json"
    manifest.write_text(json.dumps([uploaded_key(paths, name) for name in [*ordinary, TOO_LARGE]]))
    code, started = docagent("start", "--job-id", "sizes-manifest", "--manifest", str(manifest), "--wait")
    assert code == 0 and started["started"] is True, started
    _check(docagent, "sizes-manifest", started, ordinary)
