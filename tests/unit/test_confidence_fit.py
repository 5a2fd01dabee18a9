"""The confidence fit (docs/design.md, "Confidence fitted from labels"): docagent/evaluation/fitting.py fits
it (known accuracies recovered, monotone in the fixed table's order, a field of few values kept near the
level above), functions/evidence/confidence.py applies it, a fit made for another version is ignored, and a
precision target (``review_below: {"precision": P}``) is the fit's threshold, refused without a fit."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from docagent.cli import main
from docagent.evaluation.fitting import MIN_SAMPLES, PRIOR_STRENGTH, Observed, fit, isotonic, observe, report
from docagent.evaluation.labelled_sets import definition_of, read_samples
from docagent.evaluation.scoring import Extraction
from docagent.kit.calibration_file import calibrated, uncalibrated
from docagent.kit.loader import read_bundle
from docagent.kit.validate import validate
from functions.checks.outcomes import Decision
from functions.definition.job_spec import DefinitionBundle
from functions.evidence.confidence import (
    outcome_of,
    precision_threshold,
    probability,
    table_confidence,
    table_order,
)
from functions.evidence.grounded_decision import Thresholds, evidence_of, grounded_decision
from functions.evidence.grounding import ground
from functions.payloads.calibration import CALIBRATION_FILE, CalibrationFile, ClassCalibration
from functions.payloads.evidence import FieldEvidence, Quote
from functions.payloads.model_calls import CheckOutcome

REFERENCES = Path(__file__).parent / "fixtures" / "references"
CLASS = "reference"
OUTCOMES = [
    f"{grounding}{disagrees}{check}"
    for grounding in ("grounded", "approximate:90", "approximate:95", "unverified", "not_found")
    for disagrees in ("", ":disagrees")
    for check in ("", ":check")
]


def values(
    outcome: str, seen: int, right: int, *, field: str = "candidate", klass: str = CLASS
) -> list[Observed]:
    return [Observed(f"s{index}", klass, field, field, outcome, index < right) for index in range(seen)]


def fitted(observed: list[Observed], sha: str = "0" * 64) -> CalibrationFile:
    return fit(observed, definition="references", definition_sha256=sha, samples=len(observed))


# ------------------------------------------------------------------------------------------------ the fit


def test_the_fit_recovers_known_accuracies_of_each_outcome() -> None:
    found = fitted(
        values("grounded", 400, 360) + values("unverified", 200, 100) + values("not_found", 100, 3)
    )
    assert found.outcomes["grounded"] == pytest.approx(0.90, abs=0.01)
    assert found.outcomes["unverified"] == pytest.approx(0.50, abs=0.01)
    assert found.outcomes["not_found"] == pytest.approx(0.03, abs=0.01)
    assert found.values == 700 and found.min_samples == MIN_SAMPLES


def test_the_fit_is_monotone_in_the_fixed_tables_order() -> None:
    # observed: grounded right less often than unverified: the two are pooled, never inverted
    found = fitted(values("grounded", 100, 70) + values("unverified", 100, 95))
    assert found.outcomes["grounded"] == found.outcomes["unverified"]
    assert found.outcomes["grounded"] == pytest.approx((70 + 95 + 8 * 0.97 + 8 * 0.6) / 216, abs=1e-3)
    draw = random.Random(52)
    for _ in range(20):
        points = [(outcome, draw.random(), draw.uniform(1, 50)) for outcome in OUTCOMES]
        made = isotonic(points)
        ordered = [made[outcome] for outcome in sorted(OUTCOMES, key=table_order)]
        assert ordered == sorted(ordered)


def test_a_field_with_few_values_stays_near_the_level_above() -> None:
    others = values("grounded", 200, 200, field="referee")
    found = fitted(others + values("grounded", MIN_SAMPLES - 1, 0, field="candidate"))
    mine = found.for_class(CLASS)
    assert "candidate" not in mine.fields  # under MIN_SAMPLES: its class answers
    assert probability(mine, "candidate", "grounded") == mine.outcomes["grounded"] > 0.95
    found = fitted(others + values("grounded", 6, 0, field="candidate"))
    mine = found.for_class(CLASS)
    expected = 8 * mine.outcomes["grounded"] / (6 + PRIOR_STRENGTH)  # no right one: pulled toward the class
    assert mine.fields["candidate"]["grounded"] == pytest.approx(expected, abs=1e-3)
    # an outcome seen once in all: near the fixed table
    found = fitted(others + values("approximate:95", 1, 0))
    assert found.outcomes["approximate:95"] == pytest.approx(8 * 0.8 / 9, abs=1e-3)
    assert "approximate:95" not in found.classes[CLASS].outcomes


def test_a_class_with_few_values_takes_the_definitions() -> None:
    found = fitted(values("unverified", 100, 99) + values("unverified", 3, 0, klass="other"))
    assert found.for_class("other").outcomes["unverified"] == found.outcomes["unverified"]
    assert found.for_class(CLASS).outcomes["unverified"] > found.outcomes["unverified"]


def test_the_precision_curve_and_a_targets_threshold() -> None:
    found = fitted(values("grounded", 100, 100) + values("unverified", 50, 40) + values("not_found", 20, 0))
    mine = found.for_class(CLASS)
    assert [point.values for point in mine.precision] == [100, 150, 170]
    assert [point.precision for point in mine.precision] == [1.0, round(140 / 150, 4), round(140 / 170, 4)]
    grounded = probability(mine, "candidate", "grounded")
    assert precision_threshold(mine, 0.99) == grounded
    assert precision_threshold(mine, 0.9) == probability(mine, "candidate", "unverified")
    assert precision_threshold(mine.model_copy(update={"precision": mine.precision[1:]}), 0.99) == 1.0


# --------------------------------------------------------------------------------------- in the functions


def test_outcomes_name_the_grounding_its_bucket_a_disagreeing_value_and_a_failed_check() -> None:
    def evidence(grounding: str, score: float = 100.0, agrees: bool | None = True) -> FieldEvidence:
        return FieldEvidence.model_validate(
            {"grounding": grounding, "match_score": score, "value_agrees": agrees, "confidence": 0.5}
        )

    assert outcome_of(evidence("grounded"), False) == "grounded"
    assert outcome_of(evidence("approximate", 92.0), False) == "approximate:90"
    assert outcome_of(evidence("approximate", 97.0, False), True) == "approximate:95:disagrees:check"
    assert outcome_of(evidence("unverified", 0.0, None), True) == "unverified:check"
    assert table_confidence("grounded:disagrees:check") == round(0.97 * 0.25 * 0.5, 4)


def _folder(tmp_path: Path, review_below: object = None) -> Path:
    folder = tmp_path / "references"
    shutil.copytree(REFERENCES, folder)
    if review_below is not None:
        job = json.loads((folder / "job.json").read_text())
        job["classes"][CLASS]["review_below"] = review_below
        (folder / "job.json").write_text(json.dumps(job))
    return folder


def _write_fit(folder: Path, sha: str, observed: list[Observed]) -> CalibrationFile:
    found = fitted(observed, sha)
    (folder / CALIBRATION_FILE).write_text(found.model_dump_json())
    return found


FIT_VALUES = values("grounded", 100, 100) + values("grounded:disagrees", 20, 1) + values("unverified", 20, 15)
TEXT = (REFERENCES / "samples" / "ada.txt").read_text()
ADA = {"candidate": "Ada Lovelace", "referee": "Grace Hopper", "letter_date": "2026-03-12",
       "summary": "A strong engineer.", "recommends": True}  # fmt: skip
QUOTES = {
    "candidate": Quote(quote="Reference for Ada Lovelace"),
    "referee": Quote(quote="Grace Hopper, Head of Engineering"),
    "letter_date": Quote(quote="1 April 2025"),  # not in the letter: not found
    "summary": Quote(quote="She rebuilt our billing engine in four months"),
    "recommends": Quote(quote="I recommend her without reservation"),
}


def test_a_fit_for_this_version_sets_each_fields_confidence(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    sha = read_bundle(folder).uncalibrated_sha256
    written = _write_fit(folder, sha, FIT_VALUES)
    bundle = read_bundle(folder)
    assert bundle.sha256 != sha and bundle.uncalibrated_sha256 == sha  # the fit is part of the version
    published = DefinitionBundle.model_validate(bundle.model_dump(mode="json", by_alias=True))  # as pinned
    class_bundle = published.class_bundle(CLASS)
    assert class_bundle.fit() is not None and published.ignored_calibration is None
    failed = [CheckOutcome(name="recommended", type="rule", passed=False, on_fail="review")]
    evidence = evidence_of(class_bundle, ADA, QUOTES, [TEXT], failed)
    mine = written.for_class(CLASS)
    assert evidence["candidate"].confidence == probability(mine, "candidate", "grounded")
    assert evidence["letter_date"].grounding == "not_found"
    assert evidence["letter_date"].confidence == table_confidence("not_found:disagrees")  # never seen
    # the failed check is part of recommends' outcome (never seen: the table's)
    assert evidence["recommends"].confidence == table_confidence("grounded:check")


def test_a_fit_for_another_version_is_ignored_and_validate_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _folder(tmp_path)
    _write_fit(folder, read_bundle(folder).uncalibrated_sha256, FIT_VALUES)
    fitted_bundle = read_bundle(folder)
    schema = folder / "classes" / "reference.schema.json"
    schema.write_text(schema.read_text().replace("as signed", "as signed at the foot"))  # a new version
    bundle = read_bundle(folder)
    assert bundle.class_bundle(CLASS).calibration is None  # the kit does not attach it
    assert main(["definition", "validate", str(folder), "--json"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert [note for note in notes if note.startswith(CALIBRATION_FILE)] == [
        f"{CALIBRATION_FILE}: fitted for version {fitted_bundle.uncalibrated_sha256[:12]}; this definition "
        f"is {bundle.uncalibrated_sha256[:12]}: ignored (the fixed confidence table holds), run docagent "
        "eval --calibrate again"
    ]
    # a bundle carrying another version's fit (not built by the kit): ignored by the functions, and says so
    stale = bundle.class_bundle(CLASS).model_copy(
        update={"calibration": fitted_bundle.class_bundle(CLASS).calibration}
    )
    carried = DefinitionBundle.model_validate(
        DefinitionBundle(definition=bundle.definition, classes={CLASS: stale}).model_dump(
            mode="json", by_alias=True
        )
    )
    assert carried.class_bundle(CLASS).fit() is None
    assert carried.ignored_calibration is not None
    assert "ignored (the fixed table holds" in carried.ignored_calibration
    evidence = evidence_of(carried.class_bundle(CLASS), ADA, QUOTES, [TEXT], [])
    assert evidence["candidate"].confidence == 0.97  # the fixed table's
    assert uncalibrated(fitted_bundle).sha256 == fitted_bundle.uncalibrated_sha256
    assert calibrated(bundle, None) is bundle


def test_a_precision_target_is_the_fits_threshold(tmp_path: Path) -> None:
    folder = _folder(tmp_path, {"precision": 0.99})
    _write_fit(folder, uncalibrated(read_bundle(folder)).sha256, FIT_VALUES)
    assert validate(folder) == []
    class_bundle = read_bundle(folder).class_bundle(CLASS)
    fit = class_bundle.fit()
    assert isinstance(fit, ClassCalibration)
    thresholds = Thresholds.of(class_bundle)
    assert thresholds.default == precision_threshold(fit, 0.99) == probability(fit, "x", "grounded")
    evidence = evidence_of(class_bundle, ADA, QUOTES, [TEXT], [])
    decision = grounded_decision(Decision("extracted", None, None), class_bundle, evidence)
    assert decision.status == "review" and decision.reason is not None
    # letter_date (required, not found) and nothing else: every found field is at the threshold
    assert decision.reason.startswith("letter_date is not grounded in the document")
    assert "candidate" not in decision.reason and "summary" not in decision.reason


def test_a_precision_target_without_a_fit_is_refused_and_never_accepts(tmp_path: Path) -> None:
    folder = _folder(tmp_path, {"precision": 0.99})
    assert [problem.line() for problem in validate(folder)] == [
        "job.json: $.classes.reference.review_below: review_below asks precision 0.99, and the definition "
        "has no confidence fit for this version (fix: run `docagent eval --calibrate --job PATH` "
        "(docs/evaluation.md, 'Fitted confidence'), or give review_below a number (docs/defining-a-job.md))"
    ]
    assert validate(folder, calibrating=True) == []  # what eval --calibrate reads it with
    class_bundle = read_bundle(folder).class_bundle(CLASS)
    evidence = evidence_of(
        class_bundle, ADA, {**QUOTES, "letter_date": Quote(quote="12 March 2026")}, [TEXT], []
    )
    reasons = Thresholds.of(class_bundle).paths(evidence)
    assert sorted(reasons) == sorted(ADA)  # every field (none of mode none) goes to review
    assert reasons["candidate"] == (
        "candidate: review_below asks precision 0.99 and the definition has no calibration for this version"
    )
    # a per-field threshold keeps its shape
    per_field = read_bundle(_folder(tmp_path / "b", {"candidate": 0.9})).class_bundle(CLASS)
    assert Thresholds.of(per_field).per_field == {"candidate": 0.9}


def test_eval_fits_on_held_out_folds_and_lowers_the_error_of_the_fixed_table() -> None:
    """docagent/evaluation/fitting.py over a labelled run: 20 reference letters (the fixture's four, five
    times), every third one's letter date moved a day (its quote found, the value disagreeing)."""
    bundle = read_bundle(REFERENCES)
    schema = dict(bundle.class_bundle(CLASS).schema_)
    base = read_samples(REFERENCES / "samples", definition_of(bundle))
    samples, results = [], {}
    for index in range(5):
        for sample in base:
            copy = sample.model_copy(update={"name": f"{index}-{sample.name}"})
            samples.append(copy)
            fields = dict(sample.label) if isinstance(sample.label, dict) else {}
            if len(samples) % 3 == 0:
                fields["letter_date"] = "2001-01-02"
            evidence = {
                name: ground(value, Quote(quote=str(value)), [str(value)], schema["properties"][name])
                for name, value in fields.items()
                if value is not None and name != "letter_date"
            }
            said = "2001-01-01" if len(samples) % 3 == 0 else str(sample.label["letter_date"])  # type: ignore[index]
            evidence["letter_date"] = ground(
                fields["letter_date"], Quote(quote=said), [said], {"format": "date"}
            )
            failed = [] if fields["recommends"] else ["recommended"]
            results[copy.name] = Extraction(status="extracted", class_name=CLASS, fields=fields,
                                            confidence={p: e.confidence for p, e in evidence.items()},
                                            evidence=evidence, failed_checks=failed)  # fmt: skip
    documents = observe(bundle, samples, results)
    assert len(documents) == 20 and sum(not document.right for document in documents) == 6
    outcomes = {value.outcome for document in documents for value in document.values}
    assert outcomes == {
        "grounded",
        "grounded:disagrees",
        "grounded:check",
    }  # ben's recommends: its check failed
    figures, final = report(bundle, documents, 0.99, bundle.uncalibrated_sha256)
    assert figures.validation.startswith("5-fold cross-validation by document")
    assert figures.after.calibration_error < figures.before.calibration_error
    assert final.outcomes["grounded:disagrees"] < 0.25 and final.outcomes["grounded"] > 0.97
    # held out: the documents with a moved date are never accepted, every other one is
    assert figures.at_target.accepted == 14 and figures.at_target.precision == 1.0
