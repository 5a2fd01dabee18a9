"""A packet is a case, through the local cloud (issue #53; docs/defining-a-job.md, "Cases"): a copy of
examples/claims given a case block (a claim form, a repair estimate, a claim at most 5 % above its estimates)
runs its claims packet (785.00 claimed against 725.00 estimated) and a packet of two claim forms: the report
and ``inspect`` show the first in review by the case rule and the second by the missing class."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from docagent.drills.job_folder import JobFolder
from tests.support import run_folder_job
from tests.unit.test_cases import WITHIN, case_block, claims_copy

pytestmark = pytest.mark.integration
PACKETS = ("packet-0001", "packet-0002")


def test_the_report_and_inspect_name_the_case_rule_and_the_missing_class(
    cloud, deployed, docagent, tmp_path: Path
) -> None:
    copy = claims_copy(tmp_path, case_block())
    samples = copy / "samples"
    for path in list(samples.iterdir()):  # the two packets are its only samples
        if path.is_dir():
            shutil.rmtree(path)
        elif not path.name.startswith(PACKETS):
            path.unlink()
    definition = json.loads((copy / "job.json").read_text())
    (copy / "job.json").write_text(json.dumps({**definition, "name": "claims-cases"}))
    folder = JobFolder.read(copy)
    job, described = run_folder_job(cloud.endpoint, deployed, folder, "integration-cases")

    report = job.records.read_json(json.loads(described["output"])["report"]["report_key"])
    rows = {row["document_id"]: row for row in report["rows"]}
    over, missing = rows["packet-0001.pdf"], rows["packet-0002.pdf"]
    assert (over["status"], over["case"]["status"]) == ("review", "review")
    assert over["reason"] == f"case rule {WITHIN}: the claim is over its repair estimates by more than 5 %"
    assert [section["status"] for section in over["sections"]] == ["extracted", "extracted"]
    assert missing["status"] == "review"
    assert missing["reason"].startswith("case requires repair-estimate: the case has no repair-estimate")

    code, inspected = docagent("inspect", job.job_id, "--all")
    assert code == 0, inspected
    shown = {found["document_id"]: found["result"] for found in inspected["document_details"]}
    assert shown["packet-0001.pdf"]["reason"] == over["reason"]
