"""A field's confidence from a fit (docs/design.md, "Confidence fitted from labels"): the probability,
observed on the definition's own labels, that a value of its outcome (grounding, match-score bucket, value
disagreeing, failed check) is right; and the threshold a precision target (``review_below: {"precision":
P}``) stands for. Without a fit, the fixed table of functions/evidence/grounding.py.

Pure functions of the evidence and the fit (plain JSON, functions/payloads/calibration.py): no scipy here,
the fit is computed by eval (docagent/evaluation/fitting.py).
"""

from __future__ import annotations

from functions.evidence.grounding import BASE_CONFIDENCE, DISAGREES_FACTOR, FAILED_CHECK_FACTOR, field_of
from functions.payloads.calibration import ClassCalibration
from functions.payloads.evidence import FieldEvidence, Grounding

# An approximate quote's match score (90-100, functions/evidence/grounding.py FUZZY_THRESHOLD up) in two
# buckets.
MATCH_BUCKET = 95.0
# A precision no fitted confidence reaches: every field of the class under it (none accepted).
NOTHING_ACCEPTED = 1.0


def outcome_of(evidence: FieldEvidence, check_failed: bool) -> str:
    """``grounded``, ``approximate:95:disagrees``, ``unverified:check``...: what the fit is keyed by."""
    parts: list[str] = [evidence.grounding]
    if evidence.grounding == "approximate":
        parts.append("95" if evidence.match_score >= MATCH_BUCKET else "90")
    if evidence.value_agrees is False:
        parts.append("disagrees")
    if check_failed:
        parts.append("check")
    return ":".join(parts)


def table_confidence(outcome: str) -> float:
    """The fixed table's confidence of an outcome (without the model's own score)."""
    parts = outcome.split(":")
    grounding: Grounding = parts[0]  # type: ignore[assignment]  # outcome_of's first part
    score = BASE_CONFIDENCE[grounding]
    score *= DISAGREES_FACTOR if "disagrees" in parts else 1.0
    score *= FAILED_CHECK_FACTOR if "check" in parts else 1.0
    return round(score, 4)


def table_order(outcome: str) -> tuple[float, int]:
    """Worse first: the table's confidence, then an approximate quote's match bucket."""
    parts = outcome.split(":")
    bucket = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
    return table_confidence(outcome), bucket


def probability(calibration: ClassCalibration, field: str, outcome: str) -> float:
    """The field's fitted probability for the outcome, else the class's, else the fixed table's."""
    own = calibration.fields.get(field, {})
    if outcome in own:
        return own[outcome]
    return calibration.outcomes.get(outcome, table_confidence(outcome))


def fitted(
    evidence: dict[str, FieldEvidence], calibration: ClassCalibration, failed_fields: set[str]
) -> dict[str, FieldEvidence]:
    """The evidence with each field's confidence its fitted probability (a failed check naming the field, or
    a path under it, is part of its outcome)."""
    return {
        path: found.model_copy(
            update={
                "confidence": probability(
                    calibration,
                    field_of(path),
                    outcome_of(found, path in failed_fields or field_of(path) in failed_fields),
                )
            }
        )
        for path, found in evidence.items()
    }


def precision_threshold(calibration: ClassCalibration, target: float) -> float:
    """The lowest fitted confidence at and above which the fit's values were right at least ``target`` of
    the time; NOTHING_ACCEPTED when none was."""
    reached = [point.confidence for point in calibration.precision if point.precision >= target]
    return min(reached) if reached else NOTHING_ACCEPTED
