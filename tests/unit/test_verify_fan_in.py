"""VerifyJob by fan-in (functions/logic/verify_partition.py, verify_job.py): each partition verified in
bounded memory by a VerifyPartitions child, the verdicts merged; the checks find what they found before."""

from __future__ import annotations

import json
from typing import Any

import pytest

from docagent.drills.fan_in_job import SyntheticJob
from functions import s3_json, storage
from functions.errors import JobVerificationFailed
from functions.handlers.verify_job import handler as verify_handler
from functions.logic.report_fan_in import partitions_of
from functions.logic.verify_job import verify_job
from functions.logic.verify_partition import SAMPLE_SIZE, rank
from functions.payloads.verification import VerifyJobEvent
from tests.fakes import FakeLambdaContext
from tests.moto_state import build_once
from tests.support import BUCKET, s3
from tests.unit.test_report_fan_in import fan_in, synthetic_job


def clean_job(job_id: str, documents: int = 160, before_report: Any = None, **sizes: Any) -> SyntheticJob:
    """A finished job that verifies: every document extracted, a definition without actions."""
    sizes = {"part_size": 40, "entries_per_file": 70, **sizes}
    job = synthetic_job(job_id, documents, actions=[], clean=True, **sizes)
    if before_report is not None:
        before_report(job)
    fan_in(job)
    return job


@pytest.fixture
def clean(cloud: None) -> SyntheticJob:
    """The clean job of 160 documents (parts of 40), built once per process and restored for each test that
    changes it (tests/moto_state.py): the job is the same for every test of its checks."""
    return build_once("verify_fan_in.clean", lambda: clean_job("job-verify-clean"))


def verify(job: SyntheticJob, *, partitions: bool = True) -> dict[str, str]:
    """VerifyPartitions (one child per partition, through the handler), then VerifyJob."""
    manifest = s3_json.get_manifest(job.job_id)
    assert manifest is not None
    if partitions:
        for partition in partitions_of(job.job_id, manifest):
            event = {"action": "verify_partition", "job_id": job.job_id, "partition": partition.model_dump()}
            assert verify_handler(event, FakeLambdaContext())["partition"] == partition.partition
    report = s3_json.get_json(storage.report_key(job.job_id))
    summary = {name: report[name] for name in ("documents", "extracted", "review", "rejected")}
    event = VerifyJobEvent.model_validate(
        {"job_id": job.job_id, "report": {"report_key": storage.report_key(job.job_id), **summary}}
    )
    try:
        return verify_job(event).checks
    except JobVerificationFailed as failed:
        return {"failed": str(failed)}


def test_a_clean_job_verifies_through_its_partitions(clean: SyntheticJob) -> None:
    job = clean
    assert verify(job) == {
        "one_result_per_document": "ok",
        "results_valid": "ok",
        "model_calls_journalled": "ok",
        "report_matches": "ok",
        "actions_done_once": "ok",
    }
    verdicts = s3_json.list_objects(storage.verify_root(job.job_id))
    assert len(list(verdicts)) == 4  # 160 documents in parts of 40


def test_above_the_inline_cap_the_partitions_read_the_table(cloud: None, monkeypatch: Any) -> None:
    monkeypatch.setattr("functions.logic.report_fan_in.INLINE_ROWS_MAX", 100)
    job = clean_job("job-verify-table", 120)
    assert s3_json.get_json(storage.report_key(job.job_id))["rows"] == []
    assert verify(job)["report_matches"] == "ok"
    s3_json.put_bytes(storage.report_table_key(job.job_id, "jsonl"), b"", content_type="application/jsonl")
    assert "report_matches: its rows do not cover exactly" in verify(job, partitions=True)["failed"]


@pytest.mark.parametrize("partitions", [True, False], ids=["by-the-map", "in-place"])
def test_missing_orphan_and_unjournalled_results_are_found(clean: SyntheticJob, partitions: bool) -> None:
    job = clean
    client = s3()
    client.delete_object(Bucket=BUCKET, Key=storage.result_key(job.job_id, "doc-0000120.pdf"))
    # Orphans inside a partition's range, before the first name and after the last.
    for orphan in ("doc-0000100x.pdf", "a-first.pdf", "zz-last.pdf"):
        client.put_object(Bucket=BUCKET, Key=storage.result_key(job.job_id, orphan), Body=b"{}")
    client.delete_object(
        Bucket=BUCKET, Key=storage.model_call_key(job.job_id, "doc-0000050.pdf", "call-0000050")
    )
    message = verify(job, partitions=partitions)["failed"]
    assert "one_result_per_document: 1 document(s) without a result: doc-0000120.pdf" in message
    assert (
        "3 result(s) for documents not in the manifest: a-first.pdf, doc-0000100x.pdf, zz-last.pdf" in message
    )
    assert "model_calls_journalled: results without a journalled model call: doc-0000050.pdf" in message
    assert "report_matches: 1 row(s) without a stored result: doc-0000120.pdf" in message


def test_the_sample_is_the_jobs_lowest_ranks_whichever_partition_holds_them(clean: SyntheticJob) -> None:
    job = clean
    ids = [f"doc-{index:07d}.pdf" for index in range(160)]
    sampled = sorted(ids, key=lambda document_id: rank(job.job_id, document_id))[:SAMPLE_SIZE]
    not_sampled = sorted(ids, key=lambda document_id: rank(job.job_id, document_id))[SAMPLE_SIZE]
    client = s3()
    for document_id in (sampled[-1], not_sampled):
        key = storage.result_key(job.job_id, document_id)
        result = json.loads(client.get_object(Bucket=BUCKET, Key=key)["Body"].read())
        client.put_object(Bucket=BUCKET, Key=key, Body=json.dumps({**result, "job_id": "other-job"}))
    message = verify(job)["failed"]
    assert f"results_valid: invalid results: {sampled[-1]}" in message
    assert not_sampled not in message


def test_documents_whose_ids_do_not_follow_the_parts_still_verify(cloud: None) -> None:
    """Parts whose ids interleave (keys renamed to ids out of their order): every result is still looked at
    by exactly one partition and the orphan candidates resolve against the manifest."""

    def swap(job: SyntheticJob) -> None:
        manifest = s3_json.get_manifest(job.job_id)
        assert manifest is not None
        parts = [s3_json.get_bytes(key).decode().splitlines() for key in manifest.parts]
        # Swap the first documents of parts 0 and 2 (indexes stay): each one's id lies in the other's range.
        first, third = (json.loads(parts[n][0]) for n in (0, 2))
        parts[0][0] = json.dumps({**third, "index": first["index"]})
        parts[2][0] = json.dumps({**first, "index": third["index"]})
        for key, lines in zip(manifest.parts, parts, strict=True):
            s3_json.put_bytes(key, ("\n".join(lines) + "\n").encode(), content_type="application/jsonl")

    job = clean_job("job-verify-shuffled", 150, before_report=swap, part_size=50)
    checks = verify(job)
    assert checks == verify(job, partitions=False)
    assert set(checks.values()) == {"ok"}
    s3().put_object(Bucket=BUCKET, Key=storage.result_key(job.job_id, "doc-0000099a.pdf"), Body=b"{}")
    assert "1 result(s) for documents not in the manifest: doc-0000099a.pdf" in verify(job)["failed"]
