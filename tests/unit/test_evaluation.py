"""docagent eval: the figures, labelled sets, the gate, the report and the local model's corrupt switch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

from docagent.cli import main
from docagent.evaluation import gate, report, scoring
from docagent.evaluation import labelled_sets as samples
from docagent.evaluation.cli import print_run
from docagent.evaluation.figures import DefinitionVersion, EvalOutput, FieldOutcome
from docagent.evaluation.labelled_sets import Definition, LabelledSample
from docagent.evaluation.scoring import Extraction
from docagent.localcloud.bedrock.model_faults import ModelFaults, parse_model_faults, wrong_value
from docagent.operations.context import RefusedError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SCHEMA = {
    "type": "object",
    "properties": {
        "number": {"type": "string", "x-weight": 3},
        "total": {"type": "number"},
        "note": {"type": "string"},
    },
}
VERSION = DefinitionVersion(name="Receipt", model_id="m1", prompt_version="v1")


def definition(**classes):
    return Definition(name="receipts", classes=classes or {"Receipt": SCHEMA})


def sample(name, label, class_name="Receipt"):
    return LabelledSample(name=name, path=f"/nowhere/{name}", class_name=class_name, label=label)


def run_of(results, labelled=None, defn=None, version=VERSION):
    labelled = labelled or [
        sample("a.txt", {"number": "A1", "total": 10, "note": None}),
        sample("b.txt", {"number": "B2", "total": 20, "note": "paid"}),
        sample("c.txt", {"number": "C3", "total": 30, "note": None}),
    ]
    return scoring.evaluate(
        defn or definition(), labelled, results, mode="labels", version=version, job_id="j-1"
    )


def extracted(fields, class_name="Receipt"):
    return Extraction(status="extracted", class_name=class_name, fields=fields)


def test_per_field_figures_count_a_wrong_value_as_both_false_positive_and_false_negative():
    run = run_of(
        {
            "a.txt": extracted({"number": "A1", "total": 10, "note": "x"}),  # note: extra (FP)
            "b.txt": extracted({"number": "B9", "total": 20, "note": None}),  # number wrong, note missing
            # c.txt: no result at all: every labelled field missing
        }
    )
    fields = {f.path: f for f in run.fields}
    number = fields["number"]
    assert (number.counts.tp, number.counts.fp, number.counts.fn, number.counts.tn) == (1, 1, 2, 0)
    assert (number.rates.precision, number.rates.recall, number.rates.f1) == (0.5, 0.3333, 0.4)
    note = fields["note"]
    assert (note.counts.tp, note.counts.fp, note.counts.fn, note.counts.tn) == (0, 1, 1, 1)
    assert note.rates.accuracy == round(1 / 3, 4)
    assert [f.path for f in run.fields] == ["note", "number", "total"]  # worst first
    assert run.results_matched == 2 and run.samples == 3
    assert run.mode == "labels" and "plumbing" in run.mode_meaning and "FP and FN" in run.convention


def test_document_score_is_weighted_and_names_the_wrong_fields():
    run = run_of({"b.txt": extracted({"number": "B9", "total": 20, "note": "paid"})})
    by_sample = {d.sample: d for d in run.documents}
    b = by_sample["b.txt"]
    assert b.score == round(2 / 5, 4)  # total (1) + note (1) right of number (3) + total + note
    assert [(o.path, o.outcome, o.expected, o.extracted) for o in b.wrong] == [
        ("number", "wrong", "B2", "B9")
    ]
    assert by_sample["c.txt"].status == "no result" and by_sample["c.txt"].score == 0
    assert run.documents[0].score <= run.documents[-1].score  # worst first


def test_one_class_has_no_confusion_matrix_several_have_one_with_a_none_column():
    assert run_of({}).confusion is None
    two = definition(Receipt=SCHEMA, Letter={"type": "object", "properties": {"to": {"type": "string"}}})
    labelled = [sample("Receipt/a.txt", {"number": "A1"}), sample("Letter/b.txt", {"to": "Ada"}, "Letter")]
    labelled.append(sample("Letter/c.txt", {"to": "Alan"}, "Letter"))
    run = run_of(
        {"Receipt/a.txt": extracted({"number": "A1"}), "Letter/b.txt": extracted({"number": "A1"})},
        labelled,
        two,
    )
    matrix = run.confusion
    assert matrix is not None
    assert matrix.predicted == ["Receipt", "Letter", "(other)", "(none)"]
    assert matrix.counts == [[1, 0, 0, 0], [1, 0, 0, 1]]
    # a document of the wrong class is scored as nothing extracted for its labelled class
    assert {d.sample: d.score for d in run.documents}["Letter/b.txt"] == 0
    assert [c.name for c in run.classes] == ["Letter", "Receipt"]


def test_a_document_labelled_of_no_class_is_right_only_when_the_job_decides_none():
    two = definition(Receipt=SCHEMA, Letter={"type": "object", "properties": {"to": {"type": "string"}}})
    labelled = [
        sample("a.txt", {"number": "A1"}),
        sample("stray.txt", {}, None),
        sample("flyer.txt", {}, None),
    ]
    run = run_of(
        {
            "a.txt": extracted({"number": "A1"}),
            "stray.txt": Extraction(status="rejected", class_name=None),  # UnknownDocumentClass: right
            "flyer.txt": extracted({"to": "Ada"}, "Letter"),  # given a class it has not: wrong
        },
        labelled,
        two,
    )
    scores = {d.sample: d.score for d in run.documents}
    assert scores == {"a.txt": 1.0, "stray.txt": 1.0, "flyer.txt": 0.0}
    matrix = run.confusion
    assert matrix is not None and matrix.classes == ["Receipt", "Letter", "(none)"]
    assert matrix.counts == [[1, 0, 0, 0], [0, 0, 0, 0], [0, 1, 0, 1]]
    no_class = next(c for c in run.classes if c.name == "(none)")
    assert (no_class.documents, no_class.mean_score) == (2, 0.5)
    # no field of a no-class document is compared: the field figures are the receipt's alone
    assert {f.path: f.counts.tp for f in run.fields} == {"number": 1, "total": 0, "note": 0}


def test_read_samples_reads_a_label_of_no_class(tmp_path):
    two = definition(Receipt=SCHEMA, Letter={"type": "object", "properties": {"to": {"type": "string"}}})
    (tmp_path / "stray.txt").write_text("a lunch menu")
    (tmp_path / "stray.label.json").write_text(json.dumps({"class": None}))
    (tmp_path / "a.txt").write_text("receipt A1")
    (tmp_path / "a.label.json").write_text(json.dumps({"class": "Receipt", "fields": {"number": "A1"}}))
    found = {s.name: (s.class_name, s.label) for s in samples.read_samples(tmp_path, two)}
    assert found == {"a.txt": ("Receipt", {"number": "A1"}), "stray.txt": (None, {})}


def test_the_invoice_definition_is_the_invoice_examples_schema():
    invoices = samples.invoice_definition()
    assert (invoices.name, list(invoices.classes)) == ("invoices", ["invoice"])
    (schema,) = invoices.classes.values()
    assert schema["properties"]["amount"]["x-comparator"]["type"] == "number"
    label = {
        "customer_id": "CUST-00001",
        "invoice_number": "F1",
        "invoice_date": "2026-03-14",
        "amount": "10.00",
        "currency": "EUR",
        "category": "travel",
        "summary": "Travel invoice F1",
    }
    got = dict(label, invoice_date="14 March 2026", amount="10.004", summary="travel invoice F1.")
    run = scoring.evaluate(
        invoices,
        [sample("x.pdf", label, "invoice")],
        {"x.pdf": extracted(got, "invoice")},
        mode="labels",
        version=VERSION,
    )
    assert {f.path: f.comparator for f in run.fields}["invoice_date"] == "date"
    assert all(f.rates.f1 == 1.0 for f in run.fields), [(f.path, f.rates) for f in run.fields]


def test_a_nullable_type_list_is_compared_as_its_type():
    """The claims example writes optional fields as {"type": ["string", "null"]}: a date and a text."""
    definition = Definition(
        name="claims",
        classes={
            "claim": {
                "type": "object",
                "properties": {
                    "reported": {"type": ["string", "null"], "format": "date"},
                    "email": {"type": ["string", "null"]},
                },
            }
        },
    )
    label = {"reported": "2026-03-14", "email": None}
    got = {"reported": "14 March 2026", "email": None}
    run = scoring.evaluate(
        definition,
        [sample("c.pdf", label, "claim")],
        {"c.pdf": extracted(got, "claim")},
        mode="labels",
        version=VERSION,
    )
    assert {f.path: f.comparator for f in run.fields} == {"reported": "date", "email": "text"}
    counts = {f.path: (f.counts.tp, f.counts.fp, f.counts.fn, f.counts.tn) for f in run.fields}
    assert counts == {"reported": (1, 0, 0, 0), "email": (0, 0, 0, 1)}


def test_read_samples_pairs_documents_with_labels_and_names_every_problem(tmp_path):
    invoices = samples.invoice_definition()
    (tmp_path / "one.txt").write_text("invoice")
    (tmp_path / "one.label.json").write_text(json.dumps({"invoice_number": "F1"}))
    found = samples.read_samples(tmp_path, invoices)
    assert [(s.name, s.label) for s in found] == [("one.txt", {"invoice_number": "F1"})]
    (tmp_path / "two.pdf").write_bytes(b"%PDF")
    (tmp_path / "three.txt").write_text("x")
    (tmp_path / "three.label.json").write_text("{not json")
    (tmp_path / "five.label.json").write_text("{}")
    (tmp_path / "four.txt").write_text("x")
    (tmp_path / "four.label.json").write_text(json.dumps({"invoice_numbr": "F1"}))
    with pytest.raises(RefusedError) as refused:
        samples.read_samples(tmp_path, invoices)
    problems = refused.value.details["problems"]
    assert len(problems) == 4
    assert "five.label.json: no document named five.EXT beside it" in problems
    assert any(p.startswith("three.label.json: not JSON") for p in problems)
    assert any("four.label.json: fields not in the schema: invoice_numbr" in p for p in problems)
    assert "two.pdf: no two.label.json beside it" in problems


def test_write_samples_writes_the_synthetic_corpus_with_its_truth_as_labels(tmp_path):
    written = samples.write_samples(tmp_path / "set", 3)
    found = samples.read_samples(tmp_path / "set", samples.invoice_definition())
    assert len(written) == 6 and len(found) == 3
    assert {s.label["invoice_number"] for s in found} == {  # type: ignore[index]
        json.loads((tmp_path / "set" / f"{s.path.stem}.label.json").read_text())["invoice_number"]
        for s in found
    }
    with pytest.raises(RefusedError, match="not empty"):
        samples.write_samples(tmp_path / "set", 3)


GOOD = {
    "a.txt": extracted({"number": "A1", "total": 10}),
    "b.txt": extracted({"number": "B2", "total": 20, "note": "paid"}),
    "c.txt": extracted({"number": "C3", "total": 30}),
}


def test_the_gate_passes_an_unchanged_run_and_fails_a_worse_one_naming_field_documents_and_versions():
    baseline = run_of(GOOD)
    assert gate.compare(baseline, run_of(GOOD)).passed
    worse_version = VERSION.model_copy(update={"prompt_version": "v2"})
    worse = run_of(
        {**GOOD, "b.txt": extracted({"number": "B2x", "total": 20, "note": "paid"})}, version=worse_version
    )
    result = gate.compare(baseline, worse)
    assert not result.passed
    assert [(r.path, r.baseline_f1, r.margin) for r in result.regressions] == [("number", 1.0, 0.02)]
    assert [(d.sample, d.newly_wrong) for d in result.changed_documents] == [("b.txt", ["number"])]
    assert (result.baseline.prompt_version, result.current.prompt_version) == ("v1", "v2")
    assert gate.compare(baseline, worse, margins={"number": 0.5}).passed
    assert gate.compare(baseline, worse, margin=0.5).passed


def test_baseline_files_round_trip_and_bad_ones_are_refused(tmp_path):
    path = gate.save_baseline(run_of(GOOD), tmp_path / "b" / "baseline.json")
    assert gate.load_baseline(path) == run_of(GOOD)
    (tmp_path / "bad.json").write_text('{"mode": "labels"}')
    with pytest.raises(RefusedError, match="not a baseline"):
        gate.load_baseline(tmp_path / "bad.json")
    with pytest.raises(RefusedError) as missing:
        gate.load_baseline(tmp_path / "none.json")
    assert missing.value.exit_code == 3
    assert gate.parse_margins(["summary=0.1"]) == {"summary": 0.1}
    for bad in ("summary", "summary=x", "summary=2", "=0.1"):
        with pytest.raises(RefusedError, match="FIELD=MARGIN"):
            gate.parse_margins([bad])


def test_the_report_writes_json_markdown_and_plots_with_user_text_escaped(tmp_path):
    baseline = run_of(GOOD)
    current = run_of(
        {**GOOD, "b.txt": extracted({"number": "B|2 [red]x[/red]", "total": 20, "note": "paid"})}
    )
    output = EvalOutput(run=current, gate=gate.compare(baseline, current))
    written = report.write_report(output, baseline, tmp_path)
    assert sorted(p.name for p in written) == [
        "change.png",
        "eval.json",
        "eval.md",
        "field-f1.png",
        "scores.png",
    ]
    assert all(p.stat().st_size > 0 for p in written)
    page = (tmp_path / "eval.md").read_text()
    assert "B\\|2 [red]x[/red]" in page and "## Gate: FAILED" in page and "regression: number" in page
    assert EvalOutput.model_validate_json((tmp_path / "eval.json").read_text()) == output


def test_how_a_field_went_wrong_is_said_in_words():
    wrong = FieldOutcome(path="a", outcome="wrong", comparator="fuzzy", score=0.5, weight=1)
    assert report.how(wrong) == "wrong (fuzzy, similarity 0.50)"
    assert report.how(wrong.model_copy(update={"outcome": "missing"})) == "missing: none extracted"


def test_a_missing_extra_is_refused_with_what_to_install(monkeypatch):
    monkeypatch.setattr(
        report.importlib.util, "find_spec", lambda name: None if name == "matplotlib" else True
    )
    report.require_extra(plots=False)
    with pytest.raises(RefusedError, match=r"needs matplotlib: pip install .*'\.\[eval\]'"):
        report.require_extra(plots=True)


def test_the_cli_refuses_bad_input_with_exit_2_and_json(tmp_path, capsys):
    assert main(["eval", "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["error_type"] == "NoSamples"
    assert main(["eval", "--samples", str(tmp_path / "nowhere"), "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["error_type"] == "DirectoryNotFound"
    assert main(["eval", "--samples", str(tmp_path), "--baseline", str(tmp_path / "no.json"), "--json"]) == 3
    capsys.readouterr()
    assert main(["eval", "--samples", str(tmp_path), "--aws", "--json"]) == 2
    assert "pick where --from-job's job ran" in json.loads(capsys.readouterr().out)["error"]
    assert (
        main(["eval", "--samples", str(tmp_path), "--from-job", "j", "--model-faults", "corrupt=a", "--json"])
        == 2
    )
    capsys.readouterr()
    assert main(["eval", "--write-samples", str(tmp_path / "set"), "--documents", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"written": 2, "directory": str(tmp_path / "set")}


def test_the_local_models_corrupt_switch_changes_one_field_at_its_rate():
    faults = parse_model_faults("corrupt=invoice_number:0.5")
    reply = json.dumps({"invoice_number": "F1", "amount": 3, "invoice_date": "2026-03-14", "currency": None})
    assert json.loads(faults.corrupted(reply, 0.2))["invoice_number"] == "F2"
    assert faults.corrupted(reply, 0.7) == reply
    for field, changed in (("amount", 4), ("invoice_date", "2026-03-15"), ("currency", None)):
        assert json.loads(ModelFaults(corrupt=field).corrupted(reply, 0.99))[field] == changed
    with pytest.raises(ValueError, match="corrupt"):
        parse_model_faults("corrupt=invoice_number:2")


def test_a_corrupted_value_is_a_little_wrong_and_still_valid_for_its_schema():
    """#53: `corrupt=` appended "-x", so an amount string was refused by its schema (the document rejected)
    where a misread amount goes to the checks; the wrong value keeps the label's type and shape."""
    claim = json.loads((EXAMPLES / "claims" / "samples" / "packet-0001.label.json").read_text())
    fields = claim["sections"][0]["fields"]
    schema = json.loads((EXAMPLES / "claims" / "classes" / "claim-form.schema.json").read_text())
    for name in ("policy_number", "claimant", "incident_date", "damaged_items", "total", "currency"):
        reply = ModelFaults(corrupt=name).corrupted(json.dumps(fields), 0.0)
        wrong = json.loads(reply)
        assert wrong[name] != fields[name] and {**wrong, name: fields[name]} == fields, name
        assert list(Draft202012Validator(schema).iter_errors(wrong)) == [], name
    assert [wrong_value(value) for value in ("785.00", "1,234.56", "999.99", "POL-204415", "Rahman")] == [
        "786.00",
        "1,235.56",
        "1000.99",
        "POL-204416",
        "Rahmao",
    ]
    assert [wrong_value(value) for value in (2.5, True, [], "--")] == [3.5, False, [], "--x"]


def test_the_terminal_view_shows_fields_worst_first_and_wrong_fields_literally(capsys):
    baseline = run_of(GOOD)
    current = run_of(
        {**GOOD, "b.txt": extracted({"number": "[bold]B2x[/bold]", "total": 20, "note": "paid"})}
    )
    print_run(EvalOutput(run=current, gate=gate.compare(baseline, current)), "SUCCEEDED")
    out = capsys.readouterr().out
    assert "mode labels" in out and "[bold]B2x[/bold]" in out
    assert out.index("│ number") < out.index("│ note") < out.index("│ total")
    assert (
        "gate FAILED" in out
        and "number: F1 1.000 -> 0.667 (drop 0.333 > margin 0.02)" in out
        and "b.txt: newly wrong number" in out
    )
