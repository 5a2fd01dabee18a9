"""A job written before evidence existed (tests/unit/fixtures/references: a summary, a yes/no judgement and a
reason, none marked ``x-grounding``) sends to review only the documents its rules send there, on moto with
process_document answered by the local Bedrock from the fixture's labels (their fields, each quoted by the
label's ``_evidence`` or by the line that holds it: docagent/localcloud/bedrock/evidence.py).

- ada, dana: recommended, every field grounded (the summaries quote the sentence they summarise): extracted;
- ben: not recommended: review by the rule ``recommended`` only;
- chen: the label's letter date a day after the date it quotes (a misreading): review naming
  ``letter_date``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docagent.cli import main
from docagent.evaluation.labelled_sets import definition_of, read_samples
from docagent.kit.loader import read_bundle
from docagent.kit.samples import read_label
from docagent.kit.validate import validate
from docagent.localcloud.bedrock.converse_api import LocalBedrock
from docagent.localcloud.bedrock.labels import Label, read_labels
from functions import s3_json
from functions.inference.converse import converse_body
from functions.logic.process_document import process_document
from functions.payloads.job import PreparedJob
from functions.payloads.model_calls import ModelReply
from functions.reading.documents import DocumentInput
from tests.fakes import FakeLambdaContext
from tests.moto_state import build_once
from tests.support import PREFIX, document_event, items, prepare, put_object

FIXTURE = Path(__file__).parent / "fixtures" / "references"
SAMPLES = FIXTURE / "samples"


class LabelModel:
    """The local Bedrock (its Converse answer, in process) holding ``labels``."""

    system, operation, model_id = "test.fake", "chat", "fake-model"

    def __init__(self, labels: list[Label]) -> None:
        self.bedrock = LocalBedrock()
        self.bedrock.labels.add(labels)

    def converse(self, document: DocumentInput, system: str, user: str) -> ModelReply:
        body = converse_body(document, system, user, 2000, 0.0)
        status, _, answer = self.bedrock.converse(self.model_id, body["system"], body["messages"], 2000)
        assert status == 200, answer
        reply = json.loads(answer)
        return ModelReply(
            text=reply["output"]["message"]["content"][0]["text"],
            model_id=self.model_id,
            input_tokens=reply["usage"]["inputTokens"],
            output_tokens=reply["usage"]["outputTokens"],
        )


@pytest.fixture
def job(cloud: None) -> PreparedJob:
    def build() -> PreparedJob:
        for path in sorted(SAMPLES.glob("*.txt")):
            put_object(f"{PREFIX}{path.name}", path.read_bytes())
        return prepare("job-references", definition=read_bundle(FIXTURE))

    return build_once("derived_fields.job", build)


def test_only_the_documents_its_rules_send_to_review_go_there(job: PreparedJob) -> None:
    model = LabelModel(read_labels(FIXTURE))
    outcomes = {
        entry.document_id: process_document(document_event(job, entry), FakeLambdaContext(), provider=model)
        for entry in items(job)
    }
    assert {name: outcome.status for name, outcome in outcomes.items()} == {
        "ada.txt": "extracted",
        "ben.txt": "review",
        "chen.txt": "review",
        "dana.txt": "extracted",
    }
    ben = s3_json.get_result(job.job_id, "ben.txt")
    assert ben is not None and ben.reason == "the referee does not recommend the applicant"
    chen = s3_json.get_result(job.job_id, "chen.txt")
    assert chen is not None and chen.reason is not None
    assert chen.reason.startswith("letter_date is not grounded in the document")
    assert "does not agree" in chen.reason and "summary" not in chen.reason
    ada = s3_json.get_result(job.job_id, "ada.txt")
    assert ada is not None
    modes = {path: (found.mode, found.grounding) for path, found in ada.evidence.items()}
    assert modes == {
        "candidate": ("verbatim", "grounded"),
        "referee": ("verbatim", "grounded"),
        "letter_date": ("verbatim", "grounded"),
        "summary": ("support", "grounded"),
        "recommends": ("support", "grounded"),
    }
    summary = ada.evidence["summary"]
    assert summary.quote is not None and summary.quote.startswith("She rebuilt our billing engine")
    assert summary.value_agrees is None and summary.confidence == 0.97


def test_without_its_supporting_quote_a_summary_is_not_grounded(job: PreparedJob) -> None:
    labels = [label.model_copy(update={"quotes": {}}) for label in read_labels(FIXTURE)]
    entry = next(entry for entry in items(job) if entry.document_id == "ada.txt")
    outcome = process_document(document_event(job, entry), FakeLambdaContext(), provider=LabelModel(labels))
    result = s3_json.get_result(job.job_id, "ada.txt")
    assert outcome.status == "review" and result is not None and result.reason is not None
    assert result.reason.startswith("summary is not grounded in the document")  # its own words: no quote


def test_validate_names_the_fields_graded_support_and_labels_keep_evidence_apart(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert validate(FIXTURE) == []
    assert main(["definition", "validate", str(FIXTURE), "--json"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert notes == [
        "classes/reference.schema.json: field `summary` is graded as `support` by default (free text): "
        "set x-grounding to override",
        "classes/reference.schema.json: field `recommends` is graded as `support` by default (a yes/no "
        "judgement): set x-grounding to override",
        "classes/reference.schema.json: field `concerns` is graded as `support` by default (free text): "
        "set x-grounding to override",
    ]
    assert main(["definition", "validate", str(FIXTURE)]) == 0
    assert notes[0] in capsys.readouterr().out
    samples = read_samples(SAMPLES, definition_of(read_bundle(FIXTURE)))
    assert all("_evidence" not in sample.label for sample in samples if isinstance(sample.label, dict))
    assert read_label({"total": "1.00", "_evidence": {"total": 1}}) == (
        "a label's \"_evidence\" is an object: each field's path and the text of the document that supports "
        'it ({"summary": "She rebuilt our billing engine"})'
    )


def test_an_unknown_grounding_mode_is_a_problem(tmp_path: Path) -> None:
    folder = tmp_path / "references"
    (folder / "classes").mkdir(parents=True)
    (folder / "job.json").write_text((FIXTURE / "job.json").read_text())
    schema = json.loads((FIXTURE / "classes" / "reference.schema.json").read_text())
    schema["properties"]["summary"]["x-grounding"] = "loose"
    (folder / "classes" / "reference.schema.json").write_text(json.dumps(schema))
    assert [problem.line() for problem in validate(folder)] == [
        "classes/reference.schema.json: $.properties.summary.x-grounding: unknown grounding mode 'loose' "
        "(fix: use one of verbatim, support, none (docs/defining-a-job.md))"
    ]


# Each letter's sentence that says how long the referee has known the applicant (in words: a number the
# model computes from it), by sample.
_TENURE = {
    "ada": ("Ada worked in my team for three years.", 3),
    "ben": ("Ben was a dispatcher with us for a year.", 1),
    "chen": ("Chen has been our practice nurse for five years.", 5),
    "dana": ("Dana taught mathematics here for four years", 4),
}


def computed_numbers_fixture(folder: Path) -> Path:
    """The references fixture with two computed numbers, both required: ``years_known`` without
    ``x-grounding`` (its description says it is computed) and ``months_known`` marked ``support``; each
    label quotes the sentence it is computed from (real text of the letter)."""
    (folder / "classes").mkdir(parents=True)
    (folder / "samples").mkdir()
    (folder / "job.json").write_text((FIXTURE / "job.json").read_text())
    schema = json.loads((FIXTURE / "classes" / "reference.schema.json").read_text())
    schema["properties"]["years_known"] = {
        "type": "integer",
        "description": "how many years the referee has known the applicant, computed from the letter",
    }
    schema["properties"]["months_known"] = {
        "type": "integer",
        "description": "the same in months",
        "x-grounding": "support",
    }
    schema["required"] += ["years_known", "months_known"]
    (folder / "classes" / "reference.schema.json").write_text(json.dumps(schema))
    for name, (sentence, years) in _TENURE.items():
        (folder / "samples" / f"{name}.txt").write_bytes((SAMPLES / f"{name}.txt").read_bytes())
        label = json.loads((SAMPLES / f"{name}.label.json").read_text())
        label |= {"years_known": years, "months_known": 12 * years}
        label["_evidence"] |= {"years_known": sentence, "months_known": sentence}
        (folder / "samples" / f"{name}.label.json").write_text(json.dumps(label))
    return folder


def test_computed_numbers_marked_or_not_send_no_document_to_review(cloud: None, tmp_path: Path) -> None:
    folder = computed_numbers_fixture(tmp_path / "references")
    assert validate(folder) == []
    for path in sorted((folder / "samples").glob("*.txt")):
        put_object(f"{PREFIX}{path.name}", path.read_bytes())
    job = prepare("job-computed", definition=read_bundle(folder))
    model = LabelModel(read_labels(folder))
    outcomes = {
        entry.document_id: process_document(document_event(job, entry), FakeLambdaContext(), provider=model)
        for entry in items(job)
    }
    assert {name: outcome.status for name, outcome in outcomes.items()} == {
        "ada.txt": "extracted",
        "ben.txt": "review",
        "chen.txt": "review",
        "dana.txt": "extracted",
    }
    ada = s3_json.get_result(job.job_id, "ada.txt")
    assert ada is not None
    for path in ("years_known", "months_known"):
        found = ada.evidence[path]
        assert (found.mode, found.grounding, found.value_agrees) == ("support", "grounded", None)
    ben = s3_json.get_result(job.job_id, "ben.txt")
    assert ben is not None and ben.reason == "the referee does not recommend the applicant"
    chen = s3_json.get_result(job.job_id, "chen.txt")
    assert chen is not None and chen.reason is not None and "known" not in chen.reason
