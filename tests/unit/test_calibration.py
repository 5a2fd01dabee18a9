"""docagent/evaluation/calibration.py: precision by confidence band, the expected calibration error, the
accept-without-review rate at a target precision, the reliability plot; and the gate on calibration."""

from __future__ import annotations

from pathlib import Path

import pytest

from docagent.evaluation.calibration import accept_rate, calibrate, field_confidence, reliability_plot
from docagent.evaluation.figures import DefinitionVersion, EvalRun
from docagent.evaluation.gate import calibration_checks


def test_list_items_take_the_least_confidence_of_their_field() -> None:
    confidence = {"items[0].price": 0.97, "items[1].price": 0.2, "total": 0.8}
    assert field_confidence(confidence, "items[].price") == 0.2
    assert field_confidence(confidence, "total") == 0.8
    assert field_confidence(confidence, "currency") is None


def test_bands_count_extracted_values_and_their_precision() -> None:
    right = [("total", "match"), ("date", "match"), ("email", "absent")]
    wrong = [("total", "match"), ("date", "wrong"), ("name", "missing")]
    scored = [
        (True, "claim", right, {"total": 0.97, "date": 0.96}),
        (False, "claim", wrong, {"total": 0.97, "date": 0.2}),
    ]
    calibration = calibrate(scored, 0.99)
    high = calibration.overall.bands[-1]
    low = calibration.overall.bands[0]
    assert (high.values, high.right, high.precision) == (3, 3, 1.0)
    assert (low.values, low.right, low.precision, low.mean_confidence) == (1, 0, 0.0, 0.2)
    # ECE: 3/4 * |1 - 0.9667| + 1/4 * |0 - 0.2|
    assert calibration.overall.calibration_error == pytest.approx(0.75 * (1 - 0.9667) + 0.25 * 0.2, abs=1e-3)
    assert [f.name for f in calibration.fields] == ["date", "total"]
    rate = calibration.accept_without_review
    assert (rate.accepted, rate.documents, rate.rate, rate.threshold) == (1, 2, 0.5, 0.96)


def test_a_value_without_evidence_counts_as_the_least_certain() -> None:
    calibration = calibrate([(True, "c", [("total", "match")], {})], 0.99)
    assert calibration.overall.bands[0].values == 1
    assert calibration.accept_without_review.threshold == 0.0


def test_the_accept_rate_stops_where_precision_falls_below_the_target_and_never_splits_a_tie() -> None:
    documents = [(0.99, True), (0.97, True), (0.97, False), (0.5, True)]
    assert accept_rate(documents, 0.99).accepted == 1  # the tie at 0.97 holds a wrong document
    assert accept_rate(documents, 0.6).accepted == 4
    assert accept_rate([(0.9, False)], 0.99).threshold is None
    assert accept_rate([], 0.99).rate == 0.0


def test_the_reliability_plot_is_a_png(tmp_path: Path) -> None:
    calibration = calibrate([(True, "c", [("total", "match")], {"total": 0.97})], 0.99)
    reliability_plot(calibration, str(tmp_path / "reliability.png"))
    assert (tmp_path / "reliability.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_gate_fails_when_the_accept_rate_falls_or_the_calibration_error_rises() -> None:
    def run(right: bool) -> EvalRun:
        scored = [(right, "c", [("total", "match" if right else "wrong")], {"total": 0.97})]
        version = DefinitionVersion(name="claims")
        return EvalRun(mode="labels", mode_meaning="", definition=version, samples=1, results_matched=1,
                       fields=[], classes=[], documents=[], calibration=calibrate(scored, 0.99))  # fmt: skip

    same = calibration_checks(run(True), run(True), 0.02)
    assert [check.regressed for check in same] == [False, False]
    worse = calibration_checks(run(True), run(False), 0.02)
    assert [(check.figure, check.regressed) for check in worse] == [
        ("accept_without_review_rate", True), ("calibration_error", True),
    ]  # fmt: skip
