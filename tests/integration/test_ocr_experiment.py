"""Issue #52's experiment through the local cloud (its Textract answered by a real OCR engine reading the page
images: docagent/localcloud/textract/): in a copy of examples/claims, the labels of a text PDF, two image-only
PDF claim forms and two phone photos say an incident date one day off (the local model then reads and quotes
the wrong date, as a model misreading the page would); each of the five goes to review naming
``incident_date``. The unchanged two-page fax's stored fields are grounded against its OCR text (none
"unverified"), each with its box on its page, and its OCR record is stored once (docs/design.md, "Page text by
OCR")."""

from __future__ import annotations

import datetime as dt
import io
import json
import shutil
from pathlib import Path

import pytest

from docagent.drills.job_folder import JobFolder
from functions import storage
from functions.reading.documents import document_input
from functions.reading.ocr.page_images import page_image, pages_without_text
from tests.support import run_folder_job

pytestmark = pytest.mark.integration
CLAIMS = Path(__file__).resolve().parents[2] / "examples" / "claims"
DEFINITION = "claims-ocr"


def rendered(pdf: Path, *, turned: float = 0.0) -> object:
    """The first page of ``pdf`` as a grey image (a scan of it; ``turned``: degrees, as a phone photo)."""
    import pypdfium2  # noqa: PLC0415 (the local extra's)

    document = pypdfium2.PdfDocument(pdf.read_bytes())
    image = document[0].render(scale=1.5).to_pil().convert("L")
    document.close()
    return image.rotate(turned, expand=True, fillcolor=255) if turned else image


def moved(label: Path, to: Path) -> None:
    """``label`` copied to ``to`` with its incident date one day later."""
    data = json.loads(label.read_text())
    data["incident_date"] = (dt.date.fromisoformat(data["incident_date"]) + dt.timedelta(days=1)).isoformat()
    to.write_text(json.dumps(data))


def read_ahead(samples: Path) -> None:
    """Each page without a text layer read once here by the local Textract's engine, which answers a page it
    has read (the same image bytes) from memory: the session cloud runs in this process at a quarter of real
    time (a function times out after 30 s), and a page takes several seconds of OCR on a busy 2-core machine.
    The job's calls still go through Textract's API and its answers (docagent/localcloud/textract/)."""
    from docagent.localcloud.textract import engine  # noqa: PLC0415 (the local extra's OCR engine)

    for path in sorted(samples.rglob("*")):
        if path.suffix in {".pdf", ".jpg", ".tif"}:
            document = document_input(path.read_bytes(), "document-00000")
            for number in pages_without_text(document):
                image = page_image(document, number)
                assert image is not None, (path, number)
                engine.detect_document_text(image)


@pytest.fixture
def folder(tmp_path: Path) -> JobFolder:
    copy = tmp_path / DEFINITION
    shutil.copytree(CLAIMS, copy)
    samples = copy / "samples"
    for path in list(samples.rglob("*")):
        if path.is_file() and not path.name.startswith(
            ("claim-0001.", "claim-0005.", "claim-0006.", "estimate-0004.")
        ):
            path.unlink()
    forms = samples / "claim-form"
    for name in ("claim-0001", "claim-0005", "claim-0006"):  # a text PDF, an image-only PDF, a phone photo
        moved(forms / f"{name}.label.json", forms / f"{name}.label.json")
    scan, photo = io.BytesIO(), io.BytesIO()
    rendered(forms / "claim-0001.pdf").save(scan, format="PDF", resolution=108)  # an image-only PDF
    rendered(forms / "claim-0001.pdf", turned=1.5).convert("RGB").save(photo, format="JPEG", quality=80)
    (forms / "scan-0001.pdf").write_bytes(scan.getvalue())
    (forms / "photo-0001.jpg").write_bytes(photo.getvalue())
    for name in ("scan-0001", "photo-0001"):
        shutil.copy(forms / "claim-0001.label.json", forms / f"{name}.label.json")  # already moved
    read_ahead(samples)
    job_file = copy / "job.json"
    definition = json.loads(job_file.read_text())
    definition["name"] = DEFINITION
    job_file.write_text(json.dumps(definition))
    return JobFolder.read(copy)


def test_misread_dates_on_scans_and_photos_go_to_review_and_a_fax_is_grounded_on_its_ocr_text(
    cloud, deployed, folder: JobFolder
) -> None:
    job, _ = run_folder_job(cloud.endpoint, deployed, folder, "integration-ocr-experiment")
    job.records.refresh()
    results = {Path(result.key).name: result for result in job.records.results.values()}
    misread = ["claim-0001.pdf", "claim-0005.pdf", "scan-0001.pdf", "claim-0006.jpg", "photo-0001.jpg"]
    for name in misread:
        result = results[name]
        assert result.status == "review", (name, result.status, result.reason)
        assert "incident_date is not grounded" in (result.reason or ""), (name, result.reason)
        assert result.evidence["incident_date"].grounding != "unverified", name
    for name in misread[1:]:  # the scans and the photos were read by OCR, their page once
        assert results[name].ocr is not None and results[name].ocr.pages == [1], name
    assert results["claim-0001.pdf"].ocr is None, "a text layer: no OCR"
    fax = results["estimate-0004.tif"]
    assert fax.status == "extracted", (fax.status, fax.reason)
    assert fax.ocr is not None and fax.ocr.pages == [1, 2] and fax.ocr.cost_usd == 0.003
    assert fax.evidence, "the fax's fields have evidence"
    for path, found in fax.evidence.items():
        assert found.grounding in {"grounded", "approximate"} and found.value_agrees is not False, (
            path,
            found,
        )
        assert found.box is not None and found.page in {1, 2}, (path, found)
    record = job.records.read_json(storage.ocr_key(job.job_id, fax.document_id))
    assert [page["page"] for page in record["pages"]] == [1, 2] and "POL-100871" in record["pages"][0]["text"]
