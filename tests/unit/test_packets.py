"""process_document on a packet (job.json ``split: pages``; functions/reading/sections.py), on moto: its pages
are classified (one durable model step a window), its sections each extracted and checked as a document of
their own and stored under their own keys, the packet's result lists them; a crash between two sections
repeats no model call and no stored section; a packet of one section is an ordinary document."""

from __future__ import annotations

import io
import json
from typing import Any

import boto3
import pytest
from pypdf import PdfReader

from docagent.drills.scaffold import render_pdf_pages
from docagent.localcloud.bedrock.evidence import with_evidence
from functions import s3_json
from functions.batch_inference.output_records import BatchReplies
from functions.definition.job_spec import DefinitionBundle
from functions.inference.instructions import asked
from functions.logic.process_document import process_document
from functions.payloads.job import FaultSpec, JobOptions, PreparedJob
from functions.payloads.model_calls import ModelReply
from functions.reading.documents import DocumentInput
from functions.reading.sections import on_demand
from functions.settings import get_settings
from tests.fakes import FakeLambdaContext, SimulatedCrash
from tests.moto_state import build_once
from tests.support import PREFIX, REFERENCE_TABLE, document_event, items, prepare, put_object
from tests.unit.test_process_definition import claim, two_classes

CLAIM = "CLAIM P-0001 roof 1.200,00 EUR filed 10.01.2026"
LETTER, LETTER_ON = "Dear insurer, Ada", "and more, Ada"
RECIPE = "Pancakes: flour, eggs, milk"
# page text -> (class, a new document starts on it, the fields of a document starting with it)
PAGES: dict[str, tuple[str | None, bool, dict[str, Any] | None]] = {
    CLAIM: ("claim", True, claim("p-0001", "1.200,00")),
    LETTER: ("letter", True, {"sender": " Ada "}),
    LETTER_ON: ("letter", False, None),
    RECIPE: (None, False, None),
}


class PageReader:
    """A model reading a PDF block's page texts: each page's class (classify-pages), or the fields of the
    document its first page starts (extract), quoted from the block as the local model quotes."""

    system, operation, model_id = "test.fake", "chat", "fake-model"

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.systems: list[str] = []

    def converse(self, document: DocumentInput, system: str, user: str) -> ModelReply:
        request = asked(user)
        assert request is not None
        self.asked.append(request.kind)
        self.systems.append(system)
        texts = [page.extract_text() for page in PdfReader(io.BytesIO(document.data)).pages]
        if request.kind == "classify":  # a packet class's packet: several pages
            text = json.dumps({"class": "packet" if len(texts) > 1 else PAGES[texts[0]][0]})
        elif request.kind == "classify-pages":
            pages = [
                {"page": number, "class": PAGES[text][0], "starts": PAGES[text][1]}
                for number, text in enumerate(texts, 1)
            ]
            text = json.dumps({"pages": pages})
        else:
            text = with_evidence(json.dumps(PAGES[texts[0]][2]), texts)
        return ModelReply(text=text, model_id=self.model_id, input_tokens=100, output_tokens=40)


def splitting(packet_class: bool = False) -> DefinitionBundle:
    """The two classes' definition, splitting every PDF (job.json ``split``), or only a document of the
    packet class ``packet`` (its ``split``)."""
    data = two_classes().model_dump(mode="json", by_alias=True)
    if not packet_class:
        data["definition"]["split"] = "pages"
        return DefinitionBundle.model_validate(data)
    spec = {"description": "a bundle of claims and letters", "schema": "packet.json", "split": "pages"}
    data["definition"]["classes"]["packet"] = spec
    data["classes"]["packet"] = {"spec": spec, "schema": data["classes"]["letter"]["schema"]}
    return DefinitionBundle.model_validate(data)


def put_policy() -> None:
    """The claims' policy P-0001 in the reference table (the claim class's lookup)."""
    boto3.client("dynamodb").put_item(
        TableName=REFERENCE_TABLE,
        Item={"table": {"S": "policies"}, "key": {"S": "P-0001"}, "holder": {"S": "Ada"}},
    )


@pytest.fixture
def job(cloud: None) -> PreparedJob:
    def build() -> PreparedJob:
        put_policy()
        put_object(f"{PREFIX}a-packet.pdf", render_pdf_pages([CLAIM, LETTER, LETTER_ON, RECIPE], title="p"))
        put_object(f"{PREFIX}b-letter.pdf", render_pdf_pages([LETTER, LETTER_ON], title="l"))
        return prepare("job-packets", definition=splitting())

    return build_once("packets.job", build)


def entry_of(job: PreparedJob, document_id: str) -> Any:
    return next(entry for entry in items(job) if entry.document_id == document_id)


def test_a_packets_sections_are_each_a_result_and_the_packet_lists_them(job: PreparedJob) -> None:
    model = PageReader()
    outcome = process_document(
        document_event(job, entry_of(job, "a-packet.pdf")), FakeLambdaContext(), provider=model
    )
    assert model.asked == ["classify-pages", "extract", "extract"]  # the recipe's pages: no extraction
    assert (outcome.status, outcome.error) == ("review", None)  # its worst section: no class, in review
    packet = s3_json.get_result("job-packets", "a-packet.pdf")
    assert packet is not None and packet.sections is not None
    assert (packet.class_name, packet.fields) == (None, None)
    assert [(s.section_id, s.class_name, s.pages, s.status) for s in packet.sections] == [
        ("s0001-0001", "claim", (1, 1), "extracted"),
        ("s0002-0003", "letter", (2, 3), "extracted"),
        ("s0004-0004", None, (4, 4), "review"),  # unclassified_pages unset: review
    ]
    assert packet.reason is not None and packet.reason.startswith("section s0004-0004 (pages 4-4): pages 4-4")
    assert outcome.row is not None and outcome.row.sections == packet.sections
    assert packet.sections[0].fields["total"] == "1200.00"  # the section's report columns
    claim_result = s3_json.get_section_result("job-packets", "a-packet.pdf", "s0001-0001")
    assert claim_result is not None
    assert (claim_result.section_id, claim_result.pages, claim_result.class_name) == (
        "s0001-0001",
        (1, 1),
        "claim",
    )
    assert claim_result.fields == {
        "policy": "P-0001", "filed": "2026-01-10", "total": "1200.00", "currency": "EUR", "items": ["roof"],
    }  # fmt: skip
    assert claim_result.attached == {"policy": {"holder": "Ada"}}  # its own lookup step
    letter = s3_json.get_section_result("job-packets", "a-packet.pdf", "s0002-0003")
    assert letter is not None and letter.fields == {"sender": "Ada"}
    sender = letter.evidence["sender"]
    assert (sender.grounding, sender.page) == ("grounded", 2)  # its page in the packet, not in the section
    calls = s3_json.list_model_calls("job-packets", "a-packet.pdf")
    assert sorted((c.purpose, c.section_id) for c in calls) == [
        ("classify-pages", "w0001"),
        ("extract", "s0001-0001"),
        ("extract", "s0002-0003"),
    ]


def test_a_crash_between_sections_repeats_no_model_call_and_no_stored_section(
    job: PreparedJob, env: pytest.MonkeyPatch, fake_exit: list[int]
) -> None:
    """The process dies right after the first section's result is stored: the retry reuses the page
    classification, the sections and the stored section, and calls the model only for the next section."""
    env.setenv("FAULT_INJECTION_ENABLED", "true")
    get_settings.cache_clear()
    entry = entry_of(job, "a-packet.pdf")
    options = JobOptions(
        fault=FaultSpec(point="after_store_result", document_index=entry.index, mode="exit", times=1)
    )
    model = PageReader()
    with pytest.raises(SimulatedCrash):
        process_document(document_event(job, entry, options=options), FakeLambdaContext(), provider=model)
    assert (fake_exit, model.asked) == ([137], ["classify-pages", "extract"])
    first = s3_json.get_section_result("job-packets", "a-packet.pdf", "s0001-0001")
    assert first is not None and s3_json.get_result("job-packets", "a-packet.pdf") is None

    outcome = process_document(
        document_event(job, entry, options=options, retry_count=1), FakeLambdaContext(), provider=model
    )
    assert outcome.status == "review" and model.asked == ["classify-pages", "extract", "extract"]
    assert s3_json.get_section_result("job-packets", "a-packet.pdf", "s0001-0001") == first  # not redone
    calls = s3_json.list_model_calls("job-packets", "a-packet.pdf")
    assert len(calls) == len({(c.purpose, c.section_id) for c in calls}) == 3


def test_a_packet_of_one_section_is_an_ordinary_document(job: PreparedJob) -> None:
    model = PageReader()
    outcome = process_document(
        document_event(job, entry_of(job, "b-letter.pdf")), FakeLambdaContext(), provider=model
    )
    assert outcome.status == "extracted" and model.asked == ["classify-pages", "extract"]
    result = s3_json.get_result("job-packets", "b-letter.pdf")
    assert result is not None
    assert (result.class_name, result.fields, result.sections) == ("letter", {"sender": "Ada"}, None)
    assert result.classify_call_id is not None  # the page classification stands for the classify call


@pytest.fixture
def packet_class_job(cloud: None) -> PreparedJob:
    def build() -> PreparedJob:
        put_policy()
        put_object(f"{PREFIX}a-packet.pdf", render_pdf_pages([CLAIM, LETTER, LETTER_ON, RECIPE], title="p"))
        put_object(f"{PREFIX}c-claim.pdf", render_pdf_pages([CLAIM], title="c"))
        return prepare("job-packet-class", definition=splitting(packet_class=True))

    return build_once("packets.packet_class_job", build)


def test_a_document_of_a_packet_class_is_split_among_the_other_classes(packet_class_job: PreparedJob) -> None:
    model = PageReader()
    outcome = process_document(
        document_event(packet_class_job, entry_of(packet_class_job, "a-packet.pdf")),
        FakeLambdaContext(),
        provider=model,
    )
    assert model.asked == ["classify", "classify-pages", "extract", "extract"]
    pages_prompt = model.systems[1]
    assert '"claim"' in pages_prompt and '"packet"' not in pages_prompt  # a packet class is no page's class
    packet = s3_json.get_result("job-packet-class", "a-packet.pdf")
    assert packet is not None and packet.sections is not None and outcome.status == "review"
    assert [(s.class_name, s.pages) for s in packet.sections] == [
        ("claim", (1, 1)), ("letter", (2, 3)), (None, (4, 4)),
    ]  # fmt: skip
    assert packet.reason is not None and packet.reason.startswith("section s0004-0004 (pages 4-4): pages 4-4")
    assert "the classes are claim, letter" in packet.reason
    single = process_document(
        document_event(packet_class_job, entry_of(packet_class_job, "c-claim.pdf")),
        FakeLambdaContext(),
        provider=model,
    )
    assert single.status == "extracted" and model.asked[4:] == [
        "classify",
        "extract",
    ]  # not a packet: not split


def test_a_definition_whose_every_class_splits_is_refused() -> None:
    data = two_classes().model_dump(mode="json", by_alias=True)
    for spec in data["definition"]["classes"].values():
        spec["split"] = "pages"
    with pytest.raises(ValueError, match="every class splits pages"):
        DefinitionBundle.model_validate(data)


def test_a_packets_calls_are_made_on_demand_never_answered_by_a_whole_documents_batch_record() -> None:
    inner = PageReader()
    assert on_demand(BatchReplies(inner, "job-packets", 0, "a-packet.pdf")) is inner
    assert on_demand(inner) is inner


def test_a_long_packet_is_classified_window_by_window_and_a_section_may_span_windows(
    job: PreparedJob,
) -> None:
    put_object(f"{PREFIX}d-long.pdf", render_pdf_pages([CLAIM, LETTER] + [LETTER_ON] * 23, title="long"))
    long = prepare("job-long-packet", definition=splitting(), documents=[f"{PREFIX}d-long.pdf"])
    model = PageReader()
    [entry] = items(long)
    outcome = process_document(document_event(long, entry), FakeLambdaContext(), provider=model)
    assert model.asked == ["classify-pages", "classify-pages", "extract", "extract"]  # pages 1-20, 21-25
    assert outcome.status == "extracted"
    packet = s3_json.get_result("job-long-packet", entry.document_id)
    assert packet is not None and packet.sections is not None
    assert [(s.section_id, s.class_name) for s in packet.sections] == [
        ("s0001-0001", "claim"),
        ("s0002-0025", "letter"),  # page 21 continues the letter: no new document starts there
    ]
    calls = s3_json.list_model_calls("job-long-packet", entry.document_id)
    assert sorted(c.section_id or "" for c in calls if c.purpose == "classify-pages") == ["w0001", "w0021"]
