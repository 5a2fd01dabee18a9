"""A document's outcome with its evidence (docs/design.md, "Evidence and confidence"): the checks' decision
(functions/checks/outcomes.py), then review for each required field not grounded and each field under its
class's ``review_below`` (but fields of mode ``none``), the reason naming each field. A rejection stays a
rejection.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from pydantic import JsonValue

from functions.checks.outcomes import Decision
from functions.definition.job_spec import Check, ClassBundle
from functions.evidence.confidence import fitted, precision_threshold
from functions.evidence.grounding import after_checks, ground_fields, review_paths, review_reasons
from functions.payloads.calibration import PrecisionTarget
from functions.payloads.evidence import FieldEvidence, Quote
from functions.payloads.model_calls import CheckOutcome


def evidence_of(
    class_bundle: ClassBundle,
    fields: dict[str, JsonValue],
    quotes: dict[str, Quote],
    pages: list[str] | None,
    checks: list[CheckOutcome],
) -> dict[str, FieldEvidence]:
    """Each field's grounding, its confidence lowered where a check on it failed."""
    schema = cast("dict[str, Any]", class_bundle.schema_)
    by_name: dict[str, Check] = {check.name: check for check in class_bundle.spec.checks}
    failed = {
        by_name[outcome.name].field for outcome in checks if not outcome.passed and outcome.name in by_name
    }
    return with_confidence(class_bundle, ground_fields(fields, quotes, pages, schema), failed)


def with_confidence(
    class_bundle: ClassBundle, evidence: dict[str, FieldEvidence], failed: set[str]
) -> dict[str, FieldEvidence]:
    """The class's fitted confidence (functions/evidence/confidence.py) when its definition's version has a
    fit, else the fixed table's lowered where a check on the field failed."""
    fit = class_bundle.fit()
    return after_checks(evidence, failed) if fit is None else fitted(evidence, fit, failed)


@dataclass(frozen=True)
class Thresholds:
    """What sends a class's fields to review: its required fields and ``review_below`` (a field of mode
    ``none``, functions/evidence/grounding_modes.py, never: its evidence says so)."""

    required: list[str]
    per_field: dict[str, float]
    default: float | None
    # A precision target without a fit for the definition's version: every field goes to review.
    unmeasured: float | None = None

    @classmethod
    def of(cls, class_bundle: ClassBundle) -> Thresholds:
        listed = class_bundle.schema_.get("required")
        below = class_bundle.spec.review_below
        required = [str(name) for name in listed] if isinstance(listed, list) else []
        if isinstance(below, PrecisionTarget):
            fit = class_bundle.fit()
            if fit is None:
                return cls(required, {}, None, below.precision)
            return cls(required, {}, precision_threshold(fit, below.precision))
        return cls(
            required, below if isinstance(below, dict) else {}, below if isinstance(below, float) else None
        )

    def paths(self, evidence: dict[str, FieldEvidence]) -> dict[str, str]:
        """Each path the grounding sends to review, with its reason."""
        found = review_paths(evidence, self.required, self.per_field, self.default)
        if self.unmeasured is None:
            return found
        unmeasured = (
            f"review_below asks precision {self.unmeasured:g} and the definition has no calibration for "
            "this version"
        )
        return {path: found.get(path, f"{path}: {unmeasured}") for path, item in evidence.items()
                if item.mode != "none"}  # fmt: skip


def grounded_decision(
    decision: Decision, class_bundle: ClassBundle, evidence: dict[str, FieldEvidence]
) -> Decision:
    """The checks' decision, sent to review with the grounding's reasons when it has any. A rejection stays a
    rejection unless a required field is not grounded: an automatic outcome read from values the document
    does not hold is no outcome, so a person sees it, with what the checks would have done."""
    thresholds = Thresholds.of(class_bundle)
    if decision.status == "rejected":
        ungrounded = review_reasons(evidence, thresholds.required, {}, None)
        if not ungrounded:
            return decision
        would = f"the checks would reject it ({decision.error}: {decision.reason})"
        return Decision("review", None, "; ".join([*ungrounded, would]))
    reasons = list(thresholds.paths(evidence).values())
    if not reasons:
        return decision
    return Decision("review", None, "; ".join(([decision.reason] if decision.reason else []) + reasons))
