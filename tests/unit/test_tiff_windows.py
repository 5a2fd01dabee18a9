"""Long TIFFs in page windows (docs/design.md, "Page windows"): a fax of more pages than one Converse request
takes images (20) is read window by window, each window's pages one durable ``extract-wNNNN`` step whose model
call is journalled with its window, the windows' fields merged by the class's schema; a crash between windows
repeats no model call; the job's page ceiling still refuses a TIFF beyond it, with the figure."""

from __future__ import annotations

import io
import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from docagent.kit.loader import read_bundle
from functions import s3_json
from functions.batch_inference.input_records import write_record
from functions.batch_inference.payloads import PlanEvent, WriteRecordEvent
from functions.batch_inference.plan import plan
from functions.definition.job_spec import DefinitionBundle
from functions.errors import DocumentTooLarge
from functions.inference.instructions import asked
from functions.logic import window_extraction
from functions.logic.process_document import process_document
from functions.logic.window_extraction import windows_of
from functions.payloads.document import DocumentOutcome
from functions.payloads.job import PreparedJob
from functions.payloads.model_calls import ModelReply
from functions.reading.documents import DocumentInput, document_input
from functions.reading.images import MAX_IMAGES_PER_REQUEST, image_note, page_images
from functions.reading.page_windows import PageWindow, plan_image_windows, window_source
from tests.fakes import FakeLambdaContext, SimulatedCrash
from tests.images import fax
from tests.local_model import LocalModel
from tests.support import EXAMPLES, PREFIX, document_event, items, prepare, process_all, put_object
from tests.unit.test_page_windows import WindowModel

CLASS = "repair-estimate"
PAGES = 45
SHA = "ab" * 32
FIELDS: dict[str, Any] = {
    "estimate_number": "E-2026-0045",
    "policy_number": "POL-100234",
    "repairer": {"name": "Hansen Byg ApS", "vat_number": "DK12345678"},
    "estimate_date": "2026-03-20",
    "line_items": [{"description": "Remove damaged laminate", "quantity": 6, "amount": "390.00"}],
    "total": "390.00",
    "currency": "EUR",
}


@pytest.fixture(scope="module")
def long_fax() -> bytes:
    return fax(PAGES)


class PiecewiseModel(LocalModel):
    """A model that reads each window's own pages: the header on the first window, one line item on each,
    the total on the last (a fax's fields spread over its pages)."""

    def __init__(self) -> None:
        super().__init__({})
        self.users: list[str] = []

    def converse(self, document: DocumentInput, system: str, user: str) -> ModelReply:
        self.users.append(user)
        source = window_source(document.images[0].data)
        assert source is not None and asked(user) is not None
        first, last = source.window.first, source.window.last
        item = {"description": f"Pages {first}-{last}", "quantity": 1, "amount": "1.00"}
        fields: dict[str, Any] = {"line_items": [item]}
        if first == 1:
            header = ("estimate_number", "policy_number", "repairer", "estimate_date", "currency")
            fields |= {key: FIELDS[key] for key in header}
            fields["line_items"].append(FIELDS["line_items"][0])
        if last == source.window.total:
            fields |= {"total": "393.00", "currency": "EUR"}
            fields["line_items"].append(FIELDS["line_items"][0])  # a duplicate: kept once
        return ModelReply(text=json.dumps(fields), model_id=self.model_id, input_tokens=100, output_tokens=50)


def outcome_of(
    job: PreparedJob, model: LocalModel, context: FakeLambdaContext | None = None, **kwargs: Any
) -> DocumentOutcome:
    [entry] = [entry for entry in items(job) if entry.document_id == "fax.tif"]
    event = document_event(job, entry, **kwargs)
    return process_document(event, context or FakeLambdaContext(timeout_ms=120_000), provider=model)


# ------------------------------------------------------------------------------------- the windows


def test_a_tiff_one_request_takes_is_not_windowed_and_a_longer_one_is_in_windows_of_at_most_20() -> None:
    assert plan_image_windows(MAX_IMAGES_PER_REQUEST, None) == []
    assert [(w.first, w.last) for w in plan_image_windows(PAGES, None)] == [(1, 20), (21, 40), (41, 45)]
    assert [(w.first, w.last) for w in plan_image_windows(PAGES, 15)] == [(1, 15), (16, 30), (31, 45)]
    assert plan_image_windows(PAGES, 100) == plan_image_windows(PAGES, None), "capped at 20 images a request"
    assert {w.total for w in plan_image_windows(PAGES, 7)} == {PAGES}


def test_a_window_is_its_pages_the_first_noting_the_source_and_the_window(long_fax: bytes) -> None:
    document = document_input(long_fax, "document-00001")
    assert len(document.images) == PAGES, "every page converted (and so checked) when the document is read"
    windows = windows_of(document, SHA, "anthropic.claude-haiku-4-5-20251001-v1:0", None)
    assert [window.window_id for window in windows.pages] == ["p0001-0020", "p0021-0040", "p0041-0045"]
    assert windows.slicer is not None
    second = windows.slicer.slice(windows.pages[1])
    assert len(second.converse_blocks()) == 20
    assert second.images[1:] == document.images[21:40], "the other pages byte for byte"
    noted, page = second.images[0], document.images[20]
    assert image_note(noted.data) == f"docagent-window {SHA} 21-40/45" and image_note(page.data) is None
    assert window_source(noted.data) == window_source(noted.data)
    source = window_source(noted.data)
    assert source is not None and (source.sha256, source.window) == (SHA, PageWindow(21, 40, 45))
    with Image.open(io.BytesIO(noted.data)) as sent, Image.open(io.BytesIO(page.data)) as converted:
        assert sent.tobytes() == converted.tobytes(), "the note is no pixel the model reads"
    assert windows.slicer.slice(windows.pages[1]) == second, "the same bytes every time (a redrive)"
    last = windows.slicer.slice(windows.pages[2])
    assert len(last.images) == 5 and last.input_chars < document.input_chars
    assert windows.first(document).images[0].data != document.images[0].data, "classified by window one"
    assert not windows_of(document_input(fax(2), "document-00001"), SHA, "m", None), "one call takes it"


# ------------------------------------------------------------------------------------- through a job


def test_a_45_page_tiff_is_read_in_three_windows_answered_from_its_label(
    cloud_settings: None, estimates_bundle: DefinitionBundle, long_fax: bytes
) -> None:
    put_object(f"{PREFIX}fax.tif", long_fax)
    job = prepare("job-fax-windows", definition=estimates_bundle, documents=[f"{PREFIX}fax.tif"])
    model = WindowModel({long_fax: FIELDS})

    outcome = outcome_of(job, model)

    # its pages hold no text: read by OCR (moto's Textract here), the label's values are found nowhere, so the
    # document goes to review (#52), not accepted "unverified"
    assert (outcome.status, outcome.error) == ("review", None), outcome
    assert model.windows == ["p0001-0020", "p0021-0040", "p0041-0045"]
    assert model.images == [20, 20, 5], "never more images than a request takes"
    result = s3_json.get_result(job.job_id, "fax.tif")
    assert result is not None and result.fields == FIELDS, "the first window answers; the others add nothing"
    assert (result.format, [window.pages for window in result.windows]) == (
        "tiff",
        [(1, 20), (21, 40), (41, 45)],
    )
    calls = s3_json.list_model_calls(job.job_id, "fax.tif")
    assert sorted(call.window or "" for call in calls) == model.windows
    assert [window.model_call_id for window in result.windows] == [
        next(call.call_id for call in calls if call.window == window_id) for window_id in model.windows
    ]


def test_a_windowed_tiff_of_several_classes_is_classified_by_its_first_window(
    cloud_settings: None, tmp_path: Path, long_fax: bytes
) -> None:
    classes = EXAMPLES / "claims" / "classes"
    (tmp_path / "classes").mkdir()
    job: dict[str, Any] = {"name": "long-fax-claims", "classes": {}}
    for name in (CLASS, "claim-form"):
        shutil.copy(classes / f"{name}.schema.json", tmp_path / "classes")
        job["classes"][name] = {"description": f"A {name}.", "schema": f"classes/{name}.schema.json"}
    (tmp_path / "job.json").write_text(json.dumps(job))
    put_object(f"{PREFIX}fax.tif", long_fax)
    prepared = prepare("job-fax-classes", definition=read_bundle(tmp_path), documents=[f"{PREFIX}fax.tif"])
    model = WindowModel({long_fax: FIELDS})

    outcome = outcome_of(prepared, model)

    # its pages hold no text: read by OCR (moto's Textract here), the label's values are found nowhere, so the
    # document goes to review (#52), not accepted "unverified"
    assert (outcome.status, outcome.error) == ("review", None), outcome
    assert model.windows == ["p0001-0020", "p0001-0020", "p0021-0040", "p0041-0045"], "classified on window 1"
    assert model.images[0] == 20, "the classification is sent the first window's pages, not all 45"
    result = s3_json.get_result(prepared.job_id, "fax.tif")
    assert result is not None and (result.class_name, result.fields) == (CLASS, FIELDS)


def test_the_windows_of_a_tiff_merge_by_the_schema(
    cloud_settings: None, estimates_bundle: DefinitionBundle, long_fax: bytes
) -> None:
    put_object(f"{PREFIX}fax.tif", long_fax)
    job = prepare("job-fax-merge", definition=estimates_bundle, documents=[f"{PREFIX}fax.tif"])
    model = PiecewiseModel()

    outcome = outcome_of(job, model)

    assert outcome.error is None, outcome
    result = s3_json.get_result(job.job_id, "fax.tif")
    assert result is not None and result.fields is not None
    assert result.fields["line_items"] == [
        {"description": "Pages 1-20", "quantity": 1, "amount": "1.00"},
        FIELDS["line_items"][0],
        {"description": "Pages 21-40", "quantity": 1, "amount": "1.00"},
        {"description": "Pages 41-45", "quantity": 1, "amount": "1.00"},
    ], "each window's items in page order, the duplicate once"
    assert (result.fields["estimate_number"], result.fields["total"]) == ("E-2026-0045", "393.00")
    assert ["pages 21 to 40 of 45" in user for user in model.users] == [False, True, False]


def test_a_crash_between_tiff_windows_resumes_without_repeating_a_finished_window(
    cloud_settings: None,
    estimates_bundle: DefinitionBundle,
    long_fax: bytes,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    put_object(f"{PREFIX}fax.tif", long_fax)
    job = prepare("job-fax-crash", definition=estimates_bundle, documents=[f"{PREFIX}fax.tif"])
    model = WindowModel({long_fax: FIELDS}, crash_before=41)
    monkeypatch.setattr(window_extraction, "WINDOW_CALL_SECONDS", 0)  # windows in a 0.8 s invocation

    with pytest.raises(SimulatedCrash):  # the process dies: window 41's step record stays in progress
        outcome_of(job, model, FakeLambdaContext(timeout_ms=800))
    assert model.windows == ["p0001-0020", "p0021-0040"]
    time.sleep(0.9)  # the dead invocation's deadline: its step record no longer blocks the retry
    outcome = outcome_of(job, model, retry_count=1)

    assert outcome.error is None
    assert model.windows == ["p0001-0020", "p0021-0040", "p0041-0045"], "no window's model call made twice"
    assert len(s3_json.list_model_calls(job.job_id, "fax.tif")) == 3


def test_a_windowed_tiff_has_no_batch_record_it_is_read_on_demand(
    cloud_settings: None, estimates_bundle: DefinitionBundle, long_fax: bytes
) -> None:
    put_object(f"{PREFIX}fax.tif", long_fax)
    put_object(f"{PREFIX}short.tif", fax(2))
    job = prepare("job-fax-batch", definition=estimates_bundle)
    plan(PlanEvent(job_id=job.job_id))
    written = {
        entry.document_id: write_record(
            WriteRecordEvent(job_id=job.job_id, options=job.options, document=entry)
        )
        for entry in items(job)
    }
    assert written["fax.tif"].record_id is None, "no batch record: read window by window on demand"
    assert written["short.tif"].record_id is not None


def test_a_tiff_over_the_ceiling_fails_with_the_figure_before_a_page_is_converted(
    cloud_settings: None, estimates_bundle: DefinitionBundle, long_fax: bytes
) -> None:
    with pytest.raises(
        DocumentTooLarge, match=r"^the TIFF image has 500 pages, over the job's ceiling of 300"
    ):
        page_images(fax(500, (8, 8)), max_pages=300)
    definition = estimates_bundle.definition.model_copy(update={"max_pages": 40})
    bundle = estimates_bundle.model_copy(update={"definition": definition})
    put_object(f"{PREFIX}fax.tif", long_fax)
    put_object(f"{PREFIX}short.tif", fax(2))
    job = prepare("job-fax-ceiling", definition=bundle)
    model = WindowModel({fax(2): FIELDS})

    outcomes = process_all(job, model)

    assert (outcomes["fax.tif"].status, outcomes["fax.tif"].error) == ("rejected", "DocumentTooLarge")
    result = s3_json.get_result(job.job_id, "fax.tif")
    assert result is not None and result.reason == (
        "the TIFF image has 45 pages, over the job's ceiling of 40 (max_pages)"
    )
    assert outcomes["short.tif"].error is None and model.windows == ["whole"], "the rest of the job is read"
