"""A packet's section is its own review item, through the local cloud (docs/design.md, "Review" and
"Packets"): examples/claims' packet (a claim form on page 1, a repair estimate on pages 2-3) in a job that
waits for its review queue, the local model moving every incident date a day (``corrupt=incident_date:1.0``:
the claim form's date is then not grounded, so that section goes to review); the reviewer decides the section
alone, the decision releases the job, and its report and export show the section decided and the packet
extracted."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from docagent.drills.job_folder import JobFolder
from docagent.drills.local_job import LocalJob
from docagent.localcloud.bedrock.model_faults import parse_model_faults, set_model_faults
from functions import storage
from tests.integration.test_review_wait import wait_for_review
from tests.support import EXAMPLES, wait_for_execution

pytestmark = pytest.mark.integration
DEFINITION = "claims-sections"
PACKET = "packet-0001.pdf"
CLAIM_FORM = f"{PACKET}#s0001-0001"


def packet_folder(tmp_path: Path, name: str) -> JobFolder:
    """The claims example with its packet as its only sample, under its own name, its jobs waiting for
    review."""
    copy = tmp_path / name
    shutil.copytree(EXAMPLES / "claims", copy)
    samples = copy / "samples"
    for path in list(samples.iterdir()):
        if path.is_dir():
            shutil.rmtree(path)
        elif not path.name.startswith("packet-0001."):
            path.unlink()
    job_file = copy / "job.json"
    definition = json.loads(job_file.read_text())
    definition["name"] = name
    definition["review"] = {"wait": True}
    job_file.write_text(json.dumps(definition))
    return JobFolder.read(copy)


def started_faulty(
    cloud, deployed, docagent, folder: JobFolder, *, job_id: str, faults: str
) -> tuple[LocalJob, dict[str, Any]]:
    """The folder's job started with the local model misbehaving as ``faults`` say until it waits for its
    review queue; the job and its status then."""
    job = LocalJob.on(cloud.endpoint, deployed, job_id)
    prefix = f"incoming/{job.job_id}/"
    set_model_faults(cloud.endpoint, parse_model_faults(faults))
    try:
        folder.seed(job, prefix)
        job.start({"job_id": job.job_id, "prefix": prefix, **folder.request()})
        return job, wait_for_review(docagent, job)
    finally:
        set_model_faults(cloud.endpoint, None)


@pytest.fixture
def folder(tmp_path: Path) -> JobFolder:
    return packet_folder(tmp_path, DEFINITION)


def test_a_packets_section_is_reviewed_alone_and_the_report_and_export_follow_it(
    cloud, deployed, docagent, folder: JobFolder
) -> None:
    job, status = started_faulty(
        cloud,
        deployed,
        docagent,
        folder,
        job_id="integration-section-review",
        faults="corrupt=incident_date:1.0",
    )
    assert (status["review_wait"]["documents"], status["review_wait"]["decided"]) == (1, 0)
    assert status["review_wait"]["undecided"] == [CLAIM_FORM]

    code, listed = docagent("review", "list", job.job_id)
    assert code == 0, listed
    [item] = listed["documents"]  # the claim form alone: the repair estimate was extracted
    assert (item["item"], item["document_id"], item["section_id"]) == (CLAIM_FORM, PACKET, "s0001-0001")
    assert (item["class_name"], item["pages"]) == ("claim-form", [1, 1])
    assert "incident_date is not grounded" in item["reason"]
    assert item["fields"]["incident_date"] != "2025-10-17" and item["confidence"] is not None  # moved
    assert item["evidence"]["incident_date"]["value_agrees"] is False

    code, refused = docagent("review", "accept", job.job_id, PACKET, "--by", "rita")
    assert code == 2 and refused["error_type"] == "NotInReview" and CLAIM_FORM in refused["error"]
    code, decided = docagent(
        "review", "accept", job.job_id, CLAIM_FORM, "--set", "incident_date=2025-10-17", "--by", "rita"
    )
    assert code == 0, decided
    assert decided["section_id"] == "s0001-0001" and decided["written"]
    assert decided["review_key"] == storage.section_review_key(job.job_id, PACKET, "s0001-0001")
    assert decided["review_wait"]["sent"] and decided["review_wait"]["status"] == "released", decided

    described = wait_for_execution(job.sfn, job.execution_arn, timeout=180)
    assert described["status"] == "SUCCEEDED", described.get("cause")
    output = json.loads(described["output"])
    report = job.records.read_json(output["report"]["report_key"])
    [row] = report["rows"]
    assert (row["status"], row["error"], report["review"], report["extracted"]) == ("extracted", None, 0, 1)
    claim_form, estimate = row["sections"]
    assert (claim_form["status"], claim_form["fields"]["incident_date"]) == ("extracted", "2025-10-17")
    assert estimate["status"] == "extracted"

    action = next(action for action in folder.bundle.definition.actions if action.type == "export")
    key = storage.export_key(job.job_id, action.name, "csv")
    exported = job.s3.get_object(Bucket=job.bucket, Key=key)["Body"].read().decode()
    [line] = list(csv.DictReader(io.StringIO(exported)))
    assert line["status"] == "extracted"
    assert [part["status"] for part in json.loads(line["sections"])] == ["extracted", "extracted"]
    assert json.loads(line["sections"])[0]["fields"]["incident_date"] == "2025-10-17"

    code, inspected = docagent("inspect", job.job_id, "--all")
    assert code == 0, inspected
    [document] = [found for found in inspected["document_details"] if found["document_id"] == PACKET]
    sections = document["result"]["sections"]
    assert sections[0]["review"]["verdict"] == "accepted" and sections[0]["review"]["decided_by"] == "rita"
    assert sections[1]["review"] is None
