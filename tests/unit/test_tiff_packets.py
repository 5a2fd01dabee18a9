"""A multi-page TIFF fax that holds a packet is split as a PDF is (functions/reading/sections.py): its pages
classified by one durable model step, each section's pages sent as their own image blocks (the first noting
the fax and the pages, as a TIFF's page window does), each section extracted and stored as a result of its
own; answered by the local model in process from the packet's label (localcloud/bedrock/labels.py)."""

from __future__ import annotations

import pytest

from docagent.kit.samples import SectionLabel
from docagent.localcloud.bedrock.labels import packet_labels
from functions import s3_json
from functions.logic.process_document import process_document
from functions.payloads.job import PreparedJob
from functions.reading.page_windows import window_source
from tests.fakes import FakeLambdaContext
from tests.images import fax
from tests.local_model import LocalModel
from tests.moto_state import build_once
from tests.support import PREFIX, document_event, items, prepare, put_object
from tests.unit.test_packets import put_policy, splitting
from tests.unit.test_process_definition import claim

SECTIONS = [
    SectionLabel("claim", (1, 1), claim("P-0001", "1200.00")),
    SectionLabel("letter", (2, 2), {"sender": "Ada"}),
]


@pytest.fixture
def job(cloud: None) -> PreparedJob:
    def build() -> PreparedJob:
        put_policy()
        put_object(f"{PREFIX}packet.tif", fax(2))
        return prepare("job-tiff-packet", definition=splitting(), documents=[f"{PREFIX}packet.tif"])

    return build_once("tiff-packet.job", build)


class SeeingModel(LocalModel):
    """The local model, noting each call's image blocks and the pages its first block names."""

    def __init__(self) -> None:
        super().__init__({})
        self.bedrock.labels.add(packet_labels(fax(2), SECTIONS, "packet.tif"))
        self.seen: list[tuple[int, str]] = []

    def converse(self, document, system, user):  # type: ignore[no-untyped-def]
        source = window_source(document.images[0].data)
        pages = "all" if source is None else f"{source.window.first}-{source.window.last}"
        self.seen.append((len(document.images), pages))
        return super().converse(document, system, user)


def test_a_two_section_tiff_fax_splits_into_two_sections(job: PreparedJob) -> None:
    [entry] = items(job)
    model = SeeingModel()
    outcome = process_document(document_event(job, entry), FakeLambdaContext(), provider=model)
    assert model.seen == [(2, "all"), (1, "1-1"), (1, "2-2")]  # the pages classified, then each section's
    packet = s3_json.get_result("job-tiff-packet", "packet.tif")
    assert packet is not None and packet.sections is not None, outcome
    assert (packet.format, outcome.status) == ("tiff", packet.status)
    assert [(s.section_id, s.class_name, s.pages) for s in packet.sections] == [
        ("s0001-0001", "claim", (1, 1)),
        ("s0002-0002", "letter", (2, 2)),
    ]
    letter = s3_json.get_section_result("job-tiff-packet", "packet.tif", "s0002-0002")
    assert letter is not None and letter.fields == {"sender": "Ada"}
    first = s3_json.get_section_result("job-tiff-packet", "packet.tif", "s0001-0001")
    assert first is not None and first.fields is not None and first.fields["policy"] == "P-0001"
    calls = s3_json.list_model_calls("job-tiff-packet", "packet.tif")
    assert sorted((c.purpose, c.section_id) for c in calls) == [
        ("classify-pages", "w0001"),
        ("extract", "s0001-0001"),
        ("extract", "s0002-0002"),
    ]
