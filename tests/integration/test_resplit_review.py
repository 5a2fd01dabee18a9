"""A reviewer re-splits a packet the model split wrong, through the local cloud (issue #53; docs/design.md,
"Re-splitting a packet"): examples/claims' packet (a claim form on page 1, a repair estimate on pages 2-3)
in a job that waits for its review queue, the local model giving the last page no class (``split=unplace``):
the estimate's first page alone is no labelled document (rejected) and its last page a section of no class (in
review). The reviewer gives pages 2-3 the estimate's class: only that section is extracted again (one model
call, counted from the journal; the claim form's call and the page classification are not repeated), the
case is checked again, the job is released and its report shows the packet extracted."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from docagent.drills.job_folder import JobFolder
from docagent.drills.local_job import LocalJob
from docagent.operations.records import JobRecords
from functions import storage
from tests.integration.test_section_review import packet_folder, started_faulty
from tests.support import wait_for_execution

pytestmark = pytest.mark.integration
DEFINITION = "claims-resplit"
PACKET = "packet-0001.pdf"


@pytest.fixture
def folder(tmp_path: Path) -> JobFolder:
    return packet_folder(tmp_path, DEFINITION)


def calls_by_section(job: LocalJob) -> Counter[tuple[str, str | None]]:
    """The packet's finished model calls (the journal), by purpose and section."""
    calls = JobRecords(job.records.ctx, job.job_id).model_calls.get(PACKET, [])  # read now, not cached
    return Counter((call.purpose, call.section_id) for call in calls)


def test_a_reviewer_moves_a_boundary_and_only_the_changed_section_runs_again(
    cloud, deployed, docagent, folder: JobFolder
) -> None:
    job, status = started_faulty(
        cloud, deployed, docagent, folder, job_id="integration-resplit", faults="split=unplace"
    )
    assert status["review_wait"]["undecided"] == [f"{PACKET}#s0003-0003"]  # the page of no class
    code, inspected = docagent("inspect", job.job_id, "--all")
    assert code == 0, inspected
    [document] = [found for found in inspected["document_details"] if found["document_id"] == PACKET]
    assert [(s["section_id"], s["class_name"], s["status"]) for s in document["result"]["sections"]] == [
        ("s0001-0001", "claim-form", "extracted"),
        ("s0002-0002", "repair-estimate", "rejected"),  # one page of the estimate: no labelled document
        ("s0003-0003", None, "review"),
    ]
    # eval measures the split: the claim form matched, the estimate not; a spurious boundary on page 3
    code, measured = docagent("eval", "--job", str(folder.path), "--from-job", job.job_id)
    splits = measured["run"]["splits"]
    assert (splits["sections_labelled"], splits["sections_matched"], splits["boundary_errors"]) == (2, 1, 1)
    assert (splits["boundary_precision"], splits["boundary_recall"]) == (0.5, 1.0)
    [wrong] = splits["errors"]
    assert (wrong["packet"], wrong["missed"], wrong["spurious"]) == (PACKET, [], [3])
    before = calls_by_section(job)
    assert before[("classify-pages", "w0001")] == before[("extract", "s0001-0001")] == 1

    code, refused = docagent("review", "split", job.job_id, PACKET, "--pages", "1=claim-form")
    assert code == 2 and refused["error_type"] == "InvalidSplit", refused
    code, split = docagent(
        "review", "split", job.job_id, PACKET, "--pages", "2-3=repair-estimate", "--by", "rita"
    )
    assert code == 0, split
    assert (split["kept"], split["replaced"], split["added"]) == (
        ["s0001-0001"],
        ["s0002-0002", "s0003-0003"],
        ["s0002-0003-r1"],
    )
    assert split["split_key"] == storage.split_decision_key(job.job_id, PACKET) and split["written"]
    assert split["rerun"]["status"] == "extracted", split["rerun"]
    assert [(s["section_id"], s["status"]) for s in split["rerun"]["sections"]] == [
        ("s0001-0001", "extracted"),
        ("s0002-0003-r1", "extracted"),
    ]
    after = calls_by_section(job)
    assert after - before == Counter({("extract", "s0002-0003-r1"): 1})  # the changed section's call alone
    assert split["review_wait"]["sent"] and split["review_wait"]["status"] == "released", split

    code, again = docagent(
        "review", "split", job.job_id, PACKET, "--pages", "2-3=repair-estimate", "--by", "rita"
    )
    assert code == 0 and not again["written"] and calls_by_section(job) == after  # nothing repeated
    code, other = docagent("review", "split", job.job_id, PACKET, "--pages", "1-2=claim-form")
    assert code == 2 and other["error_type"] == "AlreadyReviewed", other

    described = wait_for_execution(job.sfn, job.execution_arn, timeout=180)
    assert described["status"] == "SUCCEEDED", described.get("cause")
    report = job.records.read_json(json.loads(described["output"])["report"]["report_key"])
    [row] = report["rows"]
    assert (row["status"], report["extracted"], report["review"]) == ("extracted", 1, 0)
    assert [section["section_id"] for section in row["sections"]] == ["s0001-0001", "s0002-0003-r1"]
    assert row["case"]["status"] == "extracted"  # checked again over the new sections
    assert row["sections"][1]["fields"]["estimate_number"] == "BSB-7912"
    code, measured = docagent("eval", "--job", str(folder.path), "--from-job", job.job_id)
    assert code == 0 and measured["run"]["splits"]["sections_matched"] == 2, measured["run"]["splits"]
    assert measured["run"]["splits"]["errors"] == []
