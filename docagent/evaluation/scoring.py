"""The seam: ``evaluate(definition, samples, results)`` scores results against a labelled set.

Whatever produced the results (a local run, a job that already ran, later the kit's ``--job PATH``), they
arrive as one ``Extraction`` per sample name; the figures come out as an ``EvalRun``.
"""

from __future__ import annotations

from collections import defaultdict

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from docagent.evaluation.calibration import DEFAULT_TARGET_PRECISION, calibrate
from docagent.evaluation.comparators import Comparison
from docagent.evaluation.figures import (
    MODE_MEANING,
    NO_CLASS,
    ClassFigures,
    ConfusionMatrix,
    Counts,
    DefinitionVersion,
    DocumentScore,
    EvalRun,
    FieldFigures,
    FieldOutcome,
    Mode,
    Rates,
    RunUsage,
)
from docagent.evaluation.labelled_sets import Definition, LabelledSample
from functions.payloads.evidence import FieldEvidence


class Extraction(BaseModel):
    """What a job made of one document: its class (None: none decided) and its fields (None: none)."""

    model_config = ConfigDict(extra="forbid")

    key: str | None = None
    document_id: str | None = None
    status: str
    class_name: str | None = None
    fields: JsonValue = None
    confidence: dict[str, float] = Field(
        default_factory=dict, description="each field's confidence by path (its result's evidence)"
    )
    case: str | None = Field(
        None, description="a packet's section: its packet's failed case checks, 'STATUS: REASON'"
    )
    evidence: dict[str, FieldEvidence] = Field(
        default_factory=dict, description="its result's evidence by path (eval --calibrate's outcomes)"
    )
    failed_checks: list[str] = Field(default_factory=list, description="the checks of its class that failed")


def evaluate(
    definition: Definition,
    samples: list[LabelledSample],
    results: dict[str, Extraction],
    *,
    mode: Mode,
    version: DefinitionVersion,
    job_id: str | None = None,
    usage: RunUsage | None = None,
    target_precision: float = DEFAULT_TARGET_PRECISION,
) -> EvalRun:
    """Score ``results`` (by sample name; a sample without one scores as nothing extracted)."""
    comparisons = {name: Comparison(schema) for name, schema in definition.classes.items()}
    documents: list[DocumentScore] = []
    by_path: dict[str, list[FieldOutcome]] = defaultdict(list)
    by_class: dict[str, list[tuple[DocumentScore, list[FieldOutcome]]]] = defaultdict(list)
    calibrated: list[tuple[bool, str, list[tuple[str, str]], dict[str, float]]] = []
    for sample in samples:
        found = results.get(sample.name)
        same_class = found is not None and found.class_name == sample.class_name
        extracted = found.fields if found is not None and same_class else None
        if sample.class_name is None:  # labelled "no class": right when the job decided none, no fields
            outcomes, score = [], 1.0 if same_class else 0.0
        else:
            outcomes = comparisons[sample.class_name].compare(sample.label, extracted)
            score = document_score(outcomes)
        document = DocumentScore(
            sample=sample.name,
            key=found.key if found else None,
            document_id=found.document_id if found else None,
            status=found.status if found else "no result",
            expected_class=sample.class_name,
            predicted_class=found.class_name if found else None,
            score=score,
            wrong=[o for o in outcomes if o.outcome not in {"match", "absent"}],
            case=found.case if found else None,
        )
        documents.append(document)
        class_key = NO_CLASS if sample.class_name is None else sample.class_name
        by_class[class_key].append((document, outcomes))
        right = not document.wrong and same_class
        confidence = found.confidence if found is not None and same_class else {}
        calibrated.append((right, class_key, [(o.path, o.outcome) for o in outcomes], confidence))
        for outcome in outcomes:
            by_path[outcome.path].append(outcome)
    fields = sorted((field_figures(path, outcomes) for path, outcomes in by_path.items()), key=_worst_first)
    return EvalRun(
        mode=mode,
        mode_meaning=MODE_MEANING[mode],
        definition=version,
        job_id=job_id,
        samples=len(samples),
        results_matched=sum(1 for sample in samples if sample.name in results),
        fields=fields,
        classes=[class_figures(name, scored) for name, scored in sorted(by_class.items())],
        confusion=confusion_matrix(definition, documents) if len(definition.classes) > 1 else None,
        documents=sorted(documents, key=lambda d: (d.score, d.sample)),
        usage=usage,
        # nothing to calibrate when no result carries evidence (a job from before it, or a model without it)
        calibration=calibrate(calibrated, target_precision) if any(c for *_, c in calibrated) else None,
    )


def document_score(outcomes: list[FieldOutcome]) -> float:
    """The weights of the fields right over the weights of the fields compared (both empty: 1.0)."""
    compared = [o for o in outcomes if o.outcome != "absent"]
    total = sum(o.weight for o in compared)
    right = sum(o.weight for o in compared if o.outcome == "match")
    return round(right / total, 4) if total else 1.0


def _counts(outcomes: list[FieldOutcome]) -> Counts:
    counts = Counts()
    for outcome in outcomes:
        counts.add(outcome.outcome)
    return counts


def field_figures(path: str, outcomes: list[FieldOutcome]) -> FieldFigures:
    counts = _counts(outcomes)
    return FieldFigures(
        path=path,
        comparator=outcomes[0].comparator,
        weight=outcomes[0].weight,
        outcomes=len(outcomes),
        counts=counts,
        rates=Rates.of(counts, len(outcomes)),
        wrong=sum(o.outcome == "wrong" for o in outcomes),
        missing=sum(o.outcome == "missing" for o in outcomes),
        extra=sum(o.outcome == "extra" for o in outcomes),
    )


def _worst_first(figures: FieldFigures) -> tuple[float, float, str]:
    return (figures.rates.f1, figures.rates.accuracy, figures.path)


def class_figures(name: str, scored: list[tuple[DocumentScore, list[FieldOutcome]]]) -> ClassFigures:
    outcomes = [outcome for _, document_outcomes in scored for outcome in document_outcomes]
    counts = _counts(outcomes)
    return ClassFigures(
        name=name,
        documents=len(scored),
        counts=counts,
        rates=Rates.of(counts, len(outcomes)),
        mean_score=round(sum(document.score for document, _ in scored) / len(scored), 4),
    )


def confusion_matrix(definition: Definition, documents: list[DocumentScore]) -> ConfusionMatrix:
    """Rows: the labelled class (and a last row for the documents labelled of no class, when there are
    any); columns: the class decided, then one for a class outside the definition, then one for none
    decided."""
    rows = list(definition.classes)
    rows += [NO_CLASS] if any(document.expected_class is None for document in documents) else []
    other = "(other)"
    predicted = [*definition.classes, other, NO_CLASS]
    counts = [[0] * len(predicted) for _ in rows]
    for document in documents:
        decided = document.predicted_class
        column = NO_CLASS if decided is None else decided if decided in definition.classes else other
        row = NO_CLASS if document.expected_class is None else document.expected_class
        counts[rows.index(row)][predicted.index(column)] += 1
    return ConfusionMatrix(classes=rows, predicted=predicted, counts=counts)
