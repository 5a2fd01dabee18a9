"""Issue #52's done-when through the local cloud: a job with summary and yes/no fields written without
``x-grounding`` (tests/unit/fixtures/references) sends to review only the documents its rules send there, its
labels registered with the local Bedrock, which quotes each summary and judgement by its label's
``_evidence`` (tests/unit/test_derived_fields_job.py proves the same at unit level, field by field)."""

from __future__ import annotations

from pathlib import Path

import pytest

from docagent.drills.job_folder import JobFolder
from tests.support import run_folder_job

pytestmark = pytest.mark.integration
FIXTURE = Path(__file__).resolve().parents[1] / "unit" / "fixtures" / "references"


def test_only_the_documents_its_rules_send_to_review_go_there(cloud, deployed) -> None:
    folder = JobFolder.read(FIXTURE)
    job, _ = run_folder_job(cloud.endpoint, deployed, folder, "integration-derived-fields")
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
