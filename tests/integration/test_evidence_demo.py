"""Issue #42's done-when on the claims example, through the real pipeline on a local cloud: with every claim
form's incident date moved a day by the local model (``corrupt=incident_date:1.0``: valid for the schema,
absent from the document), every claim form ends in review with a reason naming incident_date, none accepted;
`eval --from-job` of that job reports the calibration and fits it. The job runs on the session cloud (the
model's faults set on it for the job alone), scored by the operator's commands in-process: the claims job with
a crash and a redrive is test_demo_job.py's (the demo's job, on the session cloud too), whose run also checks
that every extracted field's evidence offsets hold its quote; `demo --job` itself is test_walkthrough.py's.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from docagent import project
from docagent.cli import main
from docagent.drills.job_folder import JobFolder
from docagent.kit.loader import read_bundle
from docagent.localcloud.bedrock.model_faults import parse_model_faults, set_model_faults
from docagent.operations.json_shapes import validate_output
from docagent.operations.records import JobRecords
from functions.reading.documents import detect_format
from functions.reading.page_texts import page_texts
from tests.integration.test_ocr_experiment import read_ahead
from tests.support import run_folder_job

pytestmark = pytest.mark.integration
CLAIMS = Path(__file__).resolve().parents[2] / "examples" / "claims"


@dataclass
class ScoredJob:
    """What a job of the claims example left: its summary (of a demo), its review queue, each result with its
    document's page texts, and (when asked) `eval --from-job` of it, and `eval --calibrate` of it."""

    summary: dict
    queue: dict
    results: dict
    scored: dict | None
    calibrated: dict | None = None


def results_with_pages(records: JobRecords) -> dict[str, Any]:
    """Each result of the job, with its document's page texts as the operator's reader reads them."""
    entries = {entry.document_id: entry for entry in records.entries()}
    out = {}
    for document_id, result in records.results.items():
        data = records.document_bytes(entries[document_id], 5_000_000)
        assert data is not None, document_id
        out[document_id] = {
            "class_name": result.class_name,
            "status": result.status,
            "fields": result.fields,
            "evidence": {path: found.model_dump() for path, found in result.evidence.items()},
            "pages": page_texts(data, detect_format(data)),
        }
    return out


def operator(endpoint: str, stack_file: Path, *arguments: str) -> dict:
    """`docagent ARGS --endpoint ENDPOINT --json` in-process; it must succeed; its answer, checked against the
    command's documented shape."""
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(io.StringIO()) as out:
        patch.setattr(project, "LOCAL_STACK_FILE", stack_file)
        code = main([*arguments, "--endpoint", endpoint, "--json"])
    answer: dict = json.loads(out.getvalue())
    assert code == 0, answer
    validate_output(" ".join(arguments[:2]), answer)
    return answer


@pytest.fixture(scope="module")
def moved_dates(
    cloud, deployed, stack_file: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[ScoredJob, Path]:
    """Every claim form's incident date moved a day: the claims example run as a job on the session cloud,
    its review queue, `eval --from-job` of it (its plots in the folder returned) and `eval --calibrate` of it
    on a copy of the example. One job for the three tests below."""
    state = tmp_path_factory.mktemp("moved-dates")
    # Its own id each setup: the xdist worker may split the module's tests and set the fixture up again on
    # the same session cloud, where a second StartExecution of one name is ExecutionAlreadyExists.
    job_id = f"integration-moved-dates-{uuid.uuid4().hex[:6]}"
    read_ahead(CLAIMS / "samples")  # the scans' pages, read before the job (see read_ahead)
    set_model_faults(cloud.endpoint, parse_model_faults("corrupt=incident_date:1.0"))
    try:
        job, _ = run_folder_job(cloud.endpoint, deployed, JobFolder.read(CLAIMS), job_id)
    finally:
        set_model_faults(cloud.endpoint, None)
    queue = operator(cloud.endpoint, stack_file, "review", "list", job_id)
    report = state / "report"
    scored = operator(
        cloud.endpoint, stack_file, "eval", "--from-job", job_id, "--job", str(CLAIMS), "--out", str(report)
    )
    copy = state / "claims"
    shutil.copytree(CLAIMS, copy)
    calibrated = operator(
        cloud.endpoint, stack_file, "eval", "--from-job", job_id, "--job", str(copy), "--calibrate"
    )
    job.records.refresh()
    return ScoredJob({"job_id": job_id}, queue, results_with_pages(job.records), scored, calibrated), report


def test_a_moved_incident_date_sends_every_claim_form_to_review_naming_it(
    moved_dates: tuple[ScoredJob, Path],
) -> None:
    queue, results = moved_dates[0].queue, moved_dates[0].results
    # The claim forms with a text layer (the scan, the photo and the fax are read visually: no page text)
    claim_forms = {
        doc: result
        for doc, result in results.items()
        if result["class_name"] == "claim-form" and result["pages"]
    }
    assert len(claim_forms) == 4
    assert {result["status"] for result in claim_forms.values()} == {"review"}, claim_forms
    reviewed = {item["document_id"]: item for item in queue["documents"]}
    for document_id in claim_forms:
        assert "incident_date is not grounded" in reviewed[document_id]["reason"], reviewed[document_id]
        assert reviewed[document_id]["evidence"]["incident_date"]["value_agrees"] is False
    confidences = [item["confidence"] for item in queue["documents"]]
    assert confidences == sorted(confidences)  # the least certain first
    # the packet's claim form (its date moved too) is a review item of its own, its repair estimate is not
    [section] = [item for item in queue["documents"] if item["section_id"] is not None]
    assert section["item"] == f"{section['document_id']}#s0001-0001" and section["pages"] == [1, 1]
    assert section["class_name"] == "claim-form" and "incident_date is not grounded" in section["reason"]


def test_eval_reports_calibration_per_field_and_the_accept_rate_and_plots_it(
    moved_dates: tuple[ScoredJob, Path],
) -> None:
    found, out = moved_dates[0].scored, moved_dates[1]
    assert found is not None
    calibration = found["run"]["calibration"]
    fields = {figures["name"]: figures for figures in calibration["fields"]}
    moved = fields["incident_date"]["bands"]
    # every moved date (the seven claim forms: four born-digital, the scan, the photo and the packet's) is
    # in the lowest band
    assert moved[0]["values"] == 7 and moved[0]["right"] == 0
    assert sum(band["values"] for band in fields["total"]["bands"][-1:]) >= 4
    rate = calibration["accept_without_review"]
    assert rate["target_precision"] == 0.99 and rate["documents"] == 12  # the packet's two sections are two
    assert rate["accepted"] == 5 and rate["precision"] == 1.0  # the five repair estimates, all right
    assert (out / "reliability.png").read_bytes()[:4] == b"\x89PNG"
    assert str(out / "reliability.png") in found["written"]


def test_eval_calibrate_fits_the_confidence_to_the_labels_and_lowers_its_error(
    moved_dates: tuple[ScoredJob, Path],
) -> None:
    """`eval --calibrate` (docs/evaluation.md, "Fitted confidence") on the moved dates: held out, the fitted
    confidence is better calibrated than the fixed table; calibration.json is written for the example's
    version, and the folder with it is a new version that validates."""
    found = moved_dates[0].calibrated
    assert found is not None
    figures = found["calibrated"]
    assert figures["documents"] == 12 and figures["validation"].startswith("5-fold cross-validation")
    assert figures["after"]["calibration_error"] < figures["before"]["calibration_error"]
    fit = json.loads(Path(figures["written"]).read_text())
    assert fit["definition_sha256"] == read_bundle(CLAIMS).uncalibrated_sha256
    # every moved date of a born-digital claim form: the value looked for on its page and not there (a value
    # read as printed carries its page only: docs/design.md, "A value without a quote"), never right
    assert fit["outcomes"]["not_found:disagrees"] < 0.25
    assert fit["outcomes"]["grounded"] > 0.9
    calibrated = read_bundle(Path(figures["written"]).parent)
    assert calibrated.class_bundle("claim-form").fit() is not None
    assert calibrated.sha256 != read_bundle(CLAIMS).sha256
