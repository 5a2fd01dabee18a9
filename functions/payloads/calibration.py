"""A confidence fit (docs/design.md, "Confidence fitted from labels"): ``calibration.json`` in a
definition folder (``CalibrationFile``, written by ``docagent eval --calibrate``) and each class's part of
it as published in its ``ClassBundle`` (``ClassCalibration``). Plain JSON of probabilities: the functions
read it (functions/evidence/confidence.py), eval computes it (docagent/evaluation/fitting.py).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import ConfigDict, Field

from functions.payloads.common import StrictModel

# An outcome: the grounding, an approximate quote's match-score bucket, a value disagreeing with its quote, a
# failed check naming the field (functions/evidence/confidence.py outcome_of).
OUTCOME_PATTERN = r"^(grounded|approximate:(90|95)|unverified|not_found)(:disagrees)?(:check)?$"
CALIBRATION_FILE = "calibration.json"
SHA256_PATTERN = r"^[0-9a-f]{64}$"

Outcome = Annotated[str, Field(pattern=OUTCOME_PATTERN)]
Probability = Annotated[float, Field(ge=0, le=1)]
# A top-level field of a class's schema.
FieldName = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]


class PrecisionTarget(StrictModel):
    """job.json ``review_below: {"precision": P}``: accept only values right P times in 100, by the
    definition's confidence fit."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    precision: float = Field(gt=0, le=1, description="the share of accepted values that must be right")


class PrecisionPoint(StrictModel):
    """Of the fit's values whose fitted confidence is at least ``confidence``, the share right."""

    confidence: Probability
    precision: Probability
    values: int = Field(ge=1)


class ClassFit(StrictModel):
    """A class's part of calibration.json: its own outcomes, its fields', and its precision by confidence."""

    outcomes: dict[Outcome, Probability] = Field(default_factory=dict)
    fields: dict[FieldName, dict[Outcome, Probability]] = Field(default_factory=dict)
    precision: list[PrecisionPoint] = Field(
        default_factory=list, description="most certain first: the observed precision at or above each"
    )


class CalibrationFile(StrictModel):
    """calibration.json: the fit of a definition's confidence, for the version it was fitted on."""

    definition: str
    definition_sha256: str = Field(
        pattern=SHA256_PATTERN, description="the definition's version without the fit, the one fitted on"
    )
    fitted_at: str
    samples: int = Field(ge=0, description="labelled documents fitted on")
    values: int = Field(ge=0, description="extracted values fitted on")
    method: str
    prior_strength: float = Field(gt=0)
    min_samples: int = Field(ge=1)
    outcomes: dict[Outcome, Probability] = Field(description="the whole definition's, by outcome")
    classes: dict[str, ClassFit] = Field(default_factory=dict)

    def for_class(self, name: str) -> ClassCalibration:
        """The class's part as its ClassBundle carries it (the definition's outcomes under its own)."""
        own = self.classes.get(name, ClassFit())
        return ClassCalibration(
            definition_sha256=self.definition_sha256,
            outcomes={**self.outcomes, **own.outcomes},
            fields=own.fields,
            precision=own.precision,
        )


class ClassCalibration(StrictModel):
    """A class's fit as published (``ClassBundle.calibration``)."""

    definition_sha256: str = Field(pattern=SHA256_PATTERN)
    outcomes: dict[Outcome, Probability] = Field(default_factory=dict)
    fields: dict[FieldName, dict[Outcome, Probability]] = Field(default_factory=dict)
    precision: list[PrecisionPoint] = Field(default_factory=list)
