"""The figures of an evaluation, as pydantic models: what ``--json`` prints, the report and the baseline hold.

Convention (stated in every run's output): per field and document, a value that matches the label is a
true positive; a value extracted where the label has none is a false positive; none extracted where the label
has one is a false negative; a wrong value counts as both a false positive and a false negative; no value in
either is a true negative. Accuracy = (TP + TN) / all, precision = TP / (TP + FP), recall = TP / (TP + FN).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from docagent.evaluation.calibration import AcceptRate, BandFigures, Calibration
from docagent.evaluation.splits import SplitFigures

Mode = Literal["labels", "recorded", "model", "live"]
Outcome = Literal["match", "wrong", "missing", "extra", "absent"]

MODE_MEANING: dict[str, str] = {
    "labels": "the local cloud's model answered from the samples' labels (or a recorded reply when one is "
    "registered): this measures the plumbing (normalisation, comparators, checks, report), not a model",
    "recorded": "a real model's recorded replies (--record), replayed locally where a sample has one (its "
    "label elsewhere): this measures the model that was recorded, offline",
    "model": "a real model behind the local cloud (--model bedrock | openai=URL), the rest of the pipeline "
    "local: this measures the model and the prompt",
    "live": "a job that ran on AWS with the real model: this measures the model and the prompt",
}
CONVENTION = (
    "per field and document: match = TP; extracted where the label has none = FP; none extracted where the "
    "label has one = FN; a wrong value = FP and FN; none in either = TN. accuracy = (TP+TN)/all, "
    "precision = TP/(TP+FP), recall = TP/(TP+FN), F1 their harmonic mean"
)
NO_CLASS = "(none)"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FieldOutcome(_Model):
    """One field of one document, compared: ``path`` names it in the schema (``items[].price`` for a field of
    a list's items, matched by best assignment first)."""

    path: str
    outcome: Outcome
    comparator: str
    expected: JsonValue = None
    extracted: JsonValue = None
    score: float = Field(ge=0, le=1, description="the comparator's similarity (1: equal)")
    weight: float = Field(ge=0)


class Counts(_Model):
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0

    def add(self, outcome: Outcome) -> None:
        if outcome == "match":
            self.tp += 1
        elif outcome == "absent":
            self.tn += 1
        else:
            self.fp += outcome in {"wrong", "extra"}
            self.fn += outcome in {"wrong", "missing"}


class Rates(_Model):
    accuracy: float
    precision: float
    recall: float
    f1: float

    @classmethod
    def of(cls, counts: Counts, outcomes: int) -> Rates:
        precision = counts.tp / (counts.tp + counts.fp) if counts.tp + counts.fp else 1.0
        recall = counts.tp / (counts.tp + counts.fn) if counts.tp + counts.fn else 1.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        accuracy = (counts.tp + counts.tn) / outcomes if outcomes else 1.0
        return cls(
            accuracy=round(accuracy, 4),
            precision=round(precision, 4),
            recall=round(recall, 4),
            f1=round(f1, 4),
        )


class FieldFigures(_Model):
    """One field over every document (a list's item field: over every matched or unmatched item)."""

    path: str
    comparator: str
    weight: float
    outcomes: int
    counts: Counts
    rates: Rates
    wrong: int
    missing: int
    extra: int


class ClassFigures(_Model):
    """Every field of every document of one class (micro-averaged), and the mean weighted document score."""

    name: str
    documents: int
    counts: Counts
    rates: Rates
    mean_score: float


class DocumentScore(_Model):
    """One labelled document: its weighted score (sum of the weights of the fields right / of the fields
    compared, 1.0 when all are right) and the fields that are not right, and how."""

    sample: str
    key: str | None = None
    document_id: str | None = None
    status: str = Field(description="the result's status, or 'no result' when the job has none for it")
    expected_class: str | None = Field(description="the label's class; None: labelled of no class")
    predicted_class: str | None = None
    score: float = Field(ge=0, le=1)
    wrong: list[FieldOutcome] = Field(default_factory=list)
    case: str | None = Field(
        None,
        description="a packet's section: its packet's case checks when they failed, 'STATUS: REASON' "
        "(job.json case; null: passed, or no case)",
    )


class ConfusionMatrix(_Model):
    """Rows: the labelled class; columns: the class the job decided (the last column: none decided)."""

    classes: list[str]
    predicted: list[str]
    counts: list[list[int]]


class ModelUsage(_Model):
    """One model's calls of a run, priced as RunUsage prices them."""

    model_calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None


class RunUsage(_Model):
    """Model calls of the run from the job's journal (docagent/operations/records.py), priced with the dated
    table of docagent/drills/prices.py (on-demand Bedrock, as if the calls had been made there)."""

    model_calls: int
    input_tokens: int
    output_tokens: int
    model_ids: list[str]
    cost_usd: float | None
    prices_as_of: str
    price_note: str | None = None
    by_model: dict[str, ModelUsage] = Field(
        default_factory=dict, description="each model's calls and cost (a cascade's cheap and strong model)"
    )


class DefinitionVersion(_Model):
    """What a run measured: the definition and the versions its job was pinned to."""

    name: str
    model_id: str | None = None
    prompt_version: str | None = None
    prompt_sha256: str | None = None

    def label(self) -> str:
        return f"{self.name} (prompt {self.prompt_version or '?'}, model {self.model_id or '?'})"


class EvalRun(_Model):
    """One evaluation: ``--json`` prints it, ``--save-baseline`` keeps it, ``--out`` writes it."""

    mode: Mode
    mode_meaning: str
    convention: str = CONVENTION
    definition: DefinitionVersion
    job_id: str | None = None
    samples: int
    results_matched: int
    fields: list[FieldFigures]
    classes: list[ClassFigures]
    confusion: ConfusionMatrix | None = Field(
        None, description="only when the definition has several classes"
    )
    documents: list[DocumentScore]
    usage: RunUsage | None = None
    calibration: Calibration | None = Field(
        None, description="precision by confidence band and the accept-without-review rate (older runs: null)"
    )
    splits: SplitFigures | None = Field(
        None, description="the packets' split against their labelled sections (null: no packet labelled)"
    )


class Regression(_Model):
    path: str
    baseline_f1: float
    current_f1: float | None = Field(description="None: the field is no longer compared")
    drop: float
    margin: float


class DocumentChange(_Model):
    sample: str
    baseline_score: float | None
    current_score: float | None
    newly_wrong: list[str]
    now_right: list[str]


class CalibrationCheck(_Model):
    """One calibration figure against the baseline's: a regression when it moved the wrong way by more than
    the margin (the accept-without-review rate fell, or the expected calibration error rose)."""

    figure: Literal["accept_without_review_rate", "calibration_error"]
    baseline: float
    current: float
    margin: float
    regressed: bool


class GateResult(_Model):
    """``--baseline``: passed unless a field's F1 dropped by more than its margin."""

    passed: bool
    default_margin: float
    margins: dict[str, float]
    baseline: DefinitionVersion
    current: DefinitionVersion
    regressions: list[Regression]
    changes: dict[str, float] = Field(description="per field: current F1 - baseline F1")
    changed_documents: list[DocumentChange]
    calibration: list[CalibrationCheck] = Field(
        default_factory=list, description="the calibration figures gated (both runs have a calibration)"
    )


class CascadeSide(_Model):
    """One run of the comparison."""

    name: str = Field(description="'strong alone' or 'cascade'")
    models: list[str]
    job_id: str | None
    f1: float = Field(description="every field of every document, micro-averaged over the classes")
    accepted: int | None = Field(
        description="documents accepted (extracted) without review; null: not decided"
    )
    review: int | None
    rejected: int | None
    model_calls: int
    cost_usd: float | None
    cost_by_model: dict[str, float | None]
    calls_by_model: dict[str, int]


class CascadeComparison(_Model):
    """``docagent eval --cascade``: the strong model alone beside the cascade, on the same labelled set."""

    cheap_model: str
    strong_model: str
    model_faults: str | None = Field(description="the faults the cheap model's calls saw")
    documents: int
    strong_alone: CascadeSide
    cascade: CascadeSide
    cheap_alone: CascadeSide | None = Field(
        None,
        description="the cheap model's own extractions in the cascade run (its journalled calls, scored as "
        "they were before the strong model's), its calls' cost; no outcome decided",
    )
    cost_share: float | None = Field(description="the cascade's model cost over the strong model's alone")
    f1_change: float = Field(description="the cascade's F1 minus the strong model's alone")


class TargetShare(_Model):
    target_precision: float
    accepted: int = Field(description="held-out documents whose every value reached its class's threshold")
    documents: int
    share: float
    precision: float | None = Field(description="of the accepted, the share with every field right")


class FitReport(_Model):
    """What ``--calibrate`` measured and wrote."""

    method: str
    validation: str
    documents: int
    values: int
    before: BandFigures = Field(description="the fixed table's confidence, as the run stored it")
    after: BandFigures = Field(description="each document's confidence from the fit of the other folds")
    accept_before: AcceptRate
    accept_after: AcceptRate
    at_target: TargetShare = Field(description="held out: accepted at the fit's threshold for the target")
    written: str | None = None


class EvalOutput(_Model):
    """Everything ``docagent eval --json`` prints."""

    run: EvalRun
    gate: GateResult | None = None
    cascade: CascadeComparison | None = Field(
        None, description="--cascade: the strong model alone beside the cascade (run: the cascade's)"
    )
    written: list[str] = Field(default_factory=list, description="the files --out and --save-baseline wrote")
    calibrated: FitReport | None = Field(None, description="--calibrate: the fit's held-out figures")
