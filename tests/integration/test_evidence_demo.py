"""Issue #42's done-when on the claims example, through the real pipeline on a local cloud:

- with every claim form's incident date moved a day by the local model (``corrupt=incident_date:1.0``: valid
  for the schema, absent from the document), every claim form ends in review with a reason naming
  incident_date, none accepted;
- without faults, every extracted field of every result has evidence with a page, and its offsets in the
  page's text (functions/reading/page_texts.py) hold its quote (whitespace and case normalised): checked on
  test_demo_job.py's run of the claims example (a crash and a redrive, which change no result).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from docagent.kit.loader import read_bundle
from tests.integration.test_demo import docagent

pytestmark = pytest.mark.integration
CLAIMS = Path(__file__).resolve().parents[2] / "examples" / "claims"
# Reads the kept cloud's results and each document's page texts, as the operator's reader does.
EVIDENCE_OF_JOB = """
import json, sys
from docagent.operations.context import OperatorContext
from docagent.operations.records import JobRecords
from functions.reading.documents import detect_format
from functions.reading.page_texts import page_texts
records = JobRecords(OperatorContext.resolve(None), sys.argv[1])
entries = {entry.document_id: entry for entry in records.entries()}
out = {}
for document_id, result in records.results.items():
    data = records.document_bytes(entries[document_id], 5_000_000)
    pages = page_texts(data, detect_format(data))
    out[document_id] = {"class_name": result.class_name, "status": result.status, "fields": result.fields,
                        "evidence": {p: e.model_dump() for p, e in result.evidence.items()}, "pages": pages}
print(json.dumps(out))
"""


@dataclass
class KeptDemo:
    """What a kept demo of the claims example left: its summary, its review queue, each result with its
    document's page texts, and (when asked) `eval --from-job` of its job."""

    summary: dict
    queue: dict
    results: dict
    scored: dict | None
    calibrated: dict | None = None


def kept_demo(
    state: Path, *arguments: str, scored: tuple[str, ...] | None = None, calibrate: Path | None = None
) -> KeptDemo:
    """`demo --job examples/claims --keep ARGS`, then what the kept cloud holds of it (with ``scored``:
    `eval --from-job JOB --job examples/claims SCORED` too; with ``calibrate``, a copy of the example:
    `eval --from-job JOB --job COPY --calibrate`); the cloud stopped after."""
    try:
        summary = docagent(state, "demo", "--job", str(CLAIMS), "--time-scale", "0.1", "--keep", *arguments)
        job_id = summary["job_id"]
        queue = docagent(state, "review", "list", job_id)
        score = None
        if scored is not None:
            score = docagent(state, "eval", "--from-job", job_id, "--job", str(CLAIMS), *scored)
        fit = None
        if calibrate is not None:
            shutil.copytree(CLAIMS, calibrate)
            fit = docagent(state, "eval", "--from-job", job_id, "--job", str(calibrate), "--calibrate")
        read = subprocess.run(
            [sys.executable, "-c", EVIDENCE_OF_JOB, summary["job_id"]],
            env={**os.environ, "DOCAGENT_STATE_DIR": str(state)},
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        return KeptDemo(summary, queue, json.loads(read.stdout), score, fit)
    finally:
        subprocess.run(
            [sys.executable, "-m", "docagent.cli", "local", "down"],
            env={**os.environ, "DOCAGENT_STATE_DIR": str(state)},
            capture_output=True,
            timeout=60,
            check=False,
        )


@pytest.fixture(scope="module")
def moved_dates(tmp_path_factory: pytest.TempPathFactory) -> tuple[KeptDemo, Path]:
    """Every claim form's incident date moved a day: the kept demo, scored by `eval --from-job` (its plots in
    the folder returned). One run for the two tests below (each claims run is ~5 s of CPU)."""
    state = tmp_path_factory.mktemp("moved-dates")
    faults = ("--no-crash", "--model-faults", "corrupt=incident_date:1.0")
    found = kept_demo(state, *faults, scored=("--out", str(state / "report")), calibrate=state / "claims")
    return found, state / "report"


def test_a_moved_incident_date_sends_every_claim_form_to_review_naming_it(
    moved_dates: tuple[KeptDemo, Path],
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


def scalar_paths(value: object, path: str = "") -> set[str]:
    if isinstance(value, dict):
        return {p for key, item in value.items() for p in scalar_paths(item, f"{path}.{key}".lstrip("."))}
    if isinstance(value, list):
        return {p for index, item in enumerate(value) for p in scalar_paths(item, f"{path}[{index}]")}
    return set() if value is None else {path}


def test_eval_reports_calibration_per_field_and_the_accept_rate_and_plots_it(
    moved_dates: tuple[KeptDemo, Path],
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
    moved_dates: tuple[KeptDemo, Path],
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
