"""A packet with a fax cover sheet, through the local cloud (issue #53; docs/defining-a-job.md, "Samples and
labels"): a copy of examples/claims with ``"unclassified_pages": "ignore"`` runs its claims packet behind a
cover page labelled of no class; the packet finishes extracted, its cover page kept as an ignored section."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from pypdf import PdfReader, PdfWriter

from docagent.drills.job_folder import JobFolder
from docagent.drills.scaffold import render_pdf_pages
from tests.support import run_folder_job

pytestmark = pytest.mark.integration
CLAIMS = Path(__file__).resolve().parents[2] / "examples" / "claims"


def cover_copy(folder: Path) -> Path:
    """examples/claims ignoring pages of no class, its only sample packet-0001 behind a cover sheet."""
    copy = folder / "claims"
    shutil.copytree(CLAIMS, copy)
    job = json.loads((copy / "job.json").read_text())
    (copy / "job.json").write_text(
        json.dumps({**job, "name": "claims-cover", "unclassified_pages": "ignore"})
    )
    samples = copy / "samples"
    packet, label = samples / "packet-0001.pdf", json.loads((samples / "packet-0001.label.json").read_text())
    writer = PdfWriter()
    writer.add_page(
        PdfReader(io.BytesIO(render_pdf_pages(["FAX COVER SHEET: 3 pages follow"], title="c"))).pages[0]
    )
    for page in PdfReader(packet).pages:
        writer.add_page(page)
    buffer = io.BytesIO()
    writer.write(buffer)
    shutil.rmtree(samples)
    samples.mkdir()
    (samples / "faxed.pdf").write_bytes(buffer.getvalue())
    sections = [
        {**section, "pages": [section["pages"][0] + 1, section["pages"][1] + 1]}
        for section in label["sections"]
    ]
    (samples / "faxed.label.json").write_text(
        json.dumps({"sections": [{"class": None, "pages": [1, 1]}, *sections]})
    )
    return copy


def test_a_packet_with_a_cover_page_of_no_class_finishes_extracted(
    cloud, deployed, docagent, tmp_path: Path
) -> None:
    folder = JobFolder.read(cover_copy(tmp_path))
    job, described = run_folder_job(cloud.endpoint, deployed, folder, "integration-cover")

    report = job.records.read_json(json.loads(described["output"])["report"]["report_key"])
    [row] = report["rows"]
    assert (row["document_id"], row["status"]) == ("faxed.pdf", "extracted"), row
    assert [(s["class_name"], s["status"], s.get("ignored", False)) for s in row["sections"]] == [
        (None, "rejected", True),
        ("claim-form", "extracted", False),
        ("repair-estimate", "extracted", False),
    ]
