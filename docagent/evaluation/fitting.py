"""``docagent eval --calibrate`` (docs/design.md, "Confidence fitted from labels"; docs/evaluation.md,
"Fitted confidence"): from a labelled run, the probability that a value of each outcome
(functions/evidence/confidence.py ``outcome_of``) is right, per field, per class and in all, binned and
smoothed toward the level above (the top toward the fixed table), then made monotone in the table's order; and
what it is worth on documents it was not fitted on (K-fold cross-validation by document): the calibration
error before (the fixed table, as the run stored it) and after, and the share of documents accepted without
review at a target precision.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from docagent.evaluation.calibration import calibrate, unindexed
from docagent.evaluation.comparators import Comparison
from docagent.evaluation.figures import FitReport, TargetShare
from docagent.evaluation.labelled_sets import LabelledSample
from docagent.evaluation.scoring import Extraction
from functions.definition.job_spec import DefinitionBundle
from functions.evidence.confidence import (
    outcome_of,
    precision_threshold,
    probability,
    table_confidence,
    table_order,
)
from functions.evidence.grounding import field_of
from functions.payloads.calibration import CalibrationFile, ClassFit, PrecisionPoint
from functions.payloads.common import utc_now

# Pseudo-values of the level above each level's observed accuracy is smoothed with: a field seen 8 times
# sits halfway between its own accuracy and its class's.
PRIOR_STRENGTH = 8.0
# A field's or a class's outcome seen fewer times is not stored: the level above answers for it.
MIN_SAMPLES = 5
FOLDS = 5
LOWEST, HIGHEST = 0.001, 0.999
METHOD = "binned by outcome, smoothed toward the level above (the top toward the fixed table), isotonic"


@dataclass(frozen=True)
class Observed:
    """One extracted value of a labelled document: its outcome and whether it matched its label."""

    sample: str
    class_name: str
    field: str  # top-level
    path: str  # the comparator's (list items: ``items[].price``)
    outcome: str
    right: bool


@dataclass(frozen=True)
class Document:
    """A labelled document whose class the run decided right: its values, whether all are right."""

    sample: str
    class_name: str
    right: bool
    values: list[Observed]
    stored: dict[str, float]  # the run's confidence by evidence path (the fixed table's)


# ------------------------------------------------------------------------------------------- the values


def _worst(outcomes: list[str]) -> str:
    return min(outcomes, key=table_order)


def observe(
    bundle: DefinitionBundle, samples: list[LabelledSample], results: dict[str, Extraction]
) -> list[Document]:
    """Each labelled document of a class the run decided right, with its values' outcomes (a list field's
    values: their worst) and whether each matched its label."""
    documents: list[Document] = []
    for sample in samples:
        found = results.get(sample.name)
        if sample.class_name is None or found is None or found.class_name != sample.class_name:
            continue
        spec = bundle.classes[sample.class_name].spec
        failed = {check.field for check in spec.checks if check.name in found.failed_checks}
        comparison = Comparison(dict(bundle.classes[sample.class_name].schema_))
        values: list[Observed] = []
        compared = comparison.compare(sample.label, found.fields)
        for result in compared:
            if result.outcome in {"absent", "missing"}:
                continue
            outcomes = [
                outcome_of(evidence, path in failed or field_of(path) in failed)
                for path, evidence in found.evidence.items()
                if unindexed(path) == result.path
            ]
            outcome = _worst(outcomes) if outcomes else "not_found"
            values.append(Observed(sample.name, sample.class_name, field_of(result.path), result.path,
                                   outcome, result.outcome == "match"))  # fmt: skip
        right = all(o.outcome in {"match", "absent"} for o in compared)
        documents.append(Document(sample.name, sample.class_name, right, values, found.confidence))
    return documents


# ------------------------------------------------------------------------------------------------ the fit


def isotonic(points: list[tuple[str, float, float]]) -> dict[str, float]:
    """(outcome, probability, weight) made monotone in the table's order (pool adjacent violators)."""
    ordered = sorted(points, key=lambda point: table_order(point[0]))
    blocks: list[tuple[list[str], float, float]] = []  # outcomes, mean, weight
    for outcome, value, weight in ordered:
        blocks.append(([outcome], value, weight))
        while len(blocks) > 1 and blocks[-2][1] > blocks[-1][1]:
            (names_a, mean_a, weight_a), (names_b, mean_b, weight_b) = blocks[-2], blocks[-1]
            total = weight_a + weight_b
            blocks[-2:] = [(names_a + names_b, (mean_a * weight_a + mean_b * weight_b) / total, total)]
    return {name: round(min(HIGHEST, max(LOWEST, mean)), 4) for names, mean, _ in blocks for name in names}


def _level(
    values: list[Observed], above: dict[str, float], minimum: int, strength: float
) -> dict[str, float]:
    """Each outcome seen at least ``minimum`` times: its accuracy smoothed toward ``above`` (else the
    table), isotonic."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for value in values:
        counts[value.outcome][0] += 1
        counts[value.outcome][1] += value.right
    points = []
    for outcome, (seen, right) in counts.items():
        if seen < minimum:
            continue
        prior = above.get(outcome, table_confidence(outcome))
        points.append((outcome, (right + strength * prior) / (seen + strength), seen + strength))
    return isotonic(points)


def fit(
    values: list[Observed],
    *,
    definition: str,
    definition_sha256: str,
    samples: int,
    strength: float = PRIOR_STRENGTH,
    minimum: int = MIN_SAMPLES,
) -> CalibrationFile:
    """The fit of ``values``: the whole definition's outcomes (toward the table), each class's (toward the
    definition's), each field's (toward its class's), and each class's precision by fitted confidence."""
    overall = _level(values, {}, 1, strength)
    classes: dict[str, ClassFit] = {}
    by_class: dict[str, list[Observed]] = defaultdict(list)
    for value in values:
        by_class[value.class_name].append(value)
    for name, mine in sorted(by_class.items()):
        own = _level(mine, overall, minimum, strength)
        merged = {**overall, **own}
        by_field: dict[str, list[Observed]] = defaultdict(list)
        for value in mine:
            by_field[value.field].append(value)
        fields = {
            field: found
            for field, items in sorted(by_field.items())
            if (found := _level(items, merged, minimum, strength))
        }
        classes[name] = ClassFit(outcomes=own, fields=fields)
    calibration = CalibrationFile(
        definition=definition,
        definition_sha256=definition_sha256,
        fitted_at=utc_now(),
        samples=samples,
        values=len(values),
        method=METHOD,
        prior_strength=strength,
        min_samples=minimum,
        outcomes=overall,
        classes=classes,
    )
    curves = {name: precision_curve(calibration, name, mine) for name, mine in by_class.items()}
    return calibration.model_copy(
        update={
            "classes": {
                name: found.model_copy(update={"precision": curves[name]})
                for name, found in calibration.classes.items()
            }
        }
    )


def precision_curve(
    calibration: CalibrationFile, class_name: str, values: list[Observed]
) -> list[PrecisionPoint]:
    """For each fitted confidence of the class's values, most certain first: the precision at or above it."""
    fitted = calibration.for_class(class_name)
    scored = sorted(((probability(fitted, v.field, v.outcome), v.right) for v in values), key=lambda s: -s[0])
    points: list[PrecisionPoint] = []
    right = 0
    for count, (confidence, ok) in enumerate(scored, start=1):
        right += ok
        if count == len(scored) or scored[count][0] != confidence:
            points.append(
                PrecisionPoint(confidence=confidence, precision=round(right / count, 4), values=count)
            )
    return points


# ----------------------------------------------------------------------------------------- held out


def folds(documents: list[Document], count: int = FOLDS) -> list[list[Document]]:
    """``count`` folds (at most one per document), the documents dealt in turn by sample name."""
    ordered = sorted(documents, key=lambda document: document.sample)
    size = max(1, min(count, len(ordered)))
    return [ordered[index::size] for index in range(size)]


def cross_validated(
    documents: list[Document], *, definition: str, sha256: str, target: float
) -> tuple[list[tuple[Document, dict[str, float]]], TargetShare]:
    """Each document's values' confidence from the fit of the other folds (by comparator path, a list's
    least), and the share of documents accepted at that fit's threshold for ``target``."""
    held: list[tuple[Document, dict[str, float]]] = []
    accepted, accepted_right = 0, 0
    parts = folds(documents)
    for index, part in enumerate(parts):
        rest = [document for other, docs in enumerate(parts) if other != index for document in docs]
        calibration = fit(
            [value for document in rest for value in document.values],
            definition=definition,
            definition_sha256=sha256,
            samples=len(rest),
        )
        for document in part:
            mine = calibration.for_class(document.class_name)
            confidence = {v.path: probability(mine, v.field, v.outcome) for v in document.values}
            held.append((document, confidence))
            threshold = precision_threshold(mine, target)
            if all(value >= threshold for value in confidence.values()):
                accepted += 1
                accepted_right += document.right
    share = TargetShare(
        target_precision=target,
        accepted=accepted,
        documents=len(documents),
        share=round(accepted / len(documents), 4) if documents else 0.0,
        precision=round(accepted_right / accepted, 4) if accepted else None,
    )
    return held, share


def report(
    bundle: DefinitionBundle, documents: list[Document], target: float, sha256: str
) -> tuple[FitReport, CalibrationFile]:
    """The held-out figures, and the fit of every document (what calibration.json holds)."""
    held, share = cross_validated(documents, definition=bundle.name, sha256=sha256, target=target)

    def scored(
        confidences: list[dict[str, float]],
    ) -> list[tuple[bool, str, list[tuple[str, str]], dict[str, float]]]:
        return [
            (d.right, d.class_name, [(v.path, "match" if v.right else "wrong") for v in d.values], c)
            for d, c in zip([d for d, _ in held], confidences, strict=True)
        ]

    before = calibrate(scored([d.stored for d, _ in held]), target)
    after = calibrate(scored([c for _, c in held]), target)
    values = [value for document in documents for value in document.values]
    final = fit(values, definition=bundle.name, definition_sha256=sha256, samples=len(documents))
    figures = FitReport(
        method=METHOD,
        validation=f"{len(folds(documents))}-fold cross-validation by document: each document's confidence "
        "from the fit of the other folds; calibration.json is the fit of all",
        documents=len(documents),
        values=len(values),
        before=before.overall,
        after=after.overall,
        accept_before=before.accept_without_review,
        accept_after=after.accept_without_review,
        at_target=share,
    )
    return figures, final
