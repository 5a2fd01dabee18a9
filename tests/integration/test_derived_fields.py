"""Issue #52's done-when through the local cloud: a job with summary and yes/no fields written without
``x-grounding`` (tests/unit/fixtures/references) sends to review only the documents its rules send there, its
labels registered with the local Bedrock, which quotes each summary and judgement by its label's
``_evidence`` (tests/unit/test_derived_fields_job.py proves the same at unit level, field by field)."""

from __future__ import annotations

from pathlib import Path

import pytest

from docagent.drills.job_folder import JobFolder
from docagent.drills.local_job import LocalJob
from tests.support import wait_for_execution

pytestmark = pytest.mark.integration
FIXTURE = Path(__file__).resolve().parents[1] / "unit" / "fixtures" / "references"


def test_only_the_documents_its_rules_send_to_review_go_there(cloud, deployed) -> None:
    folder = JobFolder.read(FIXTURE)
    job = LocalJob.on(cloud.endpoint, deployed, "integration-derived-fields")
    prefix = f"incoming/{job.job_id}/"
    folder.seed(job, prefix)
    job.start({"job_id": job.job_id, "prefix": prefix, **folder.request()})
    described = wait_for_execution(job.sfn, job.execution_arn, timeout=180)
    assert described["status"] == "SUCCEEDED", described.get("cause")
    job.records.refresh()
    results = {result.document_id: result for result in job.records.results.values()}
    assert {name: result.status for name, result in results.items()} == {
        "ada.txt": "extracted",
        "ben.txt": "review",
        "chen.txt": "review",
        "dana.txt": "extracted",
    }
    assert results["ben.txt"].reason == "the referee does not recommend the applicant"
    assert (results["chen.txt"].reason or "").startswith("letter_date is not grounded in the document")
    summary = results["dana.txt"].evidence["summary"]
    assert (summary.mode, summary.grounding, summary.page) == ("support", "grounded", 1)
