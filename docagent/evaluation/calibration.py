"""Calibration (docs/evaluation.md, "Calibration"): whether a field's confidence
(functions/evidence/grounding.py) means what it says. Each extracted value (a match, a wrong or an extra
value; a missing one has no confidence) falls in a confidence band; a band's precision is the share of its
values that match their label. A document's confidence is its least certain field's; accepting the documents
at or above a threshold without review, the rate reported is the largest share of documents whose precision
(all their fields right) still reaches the target (default 99 %).

A list's items are matched to the label by best assignment (comparators.py), so a list field's outcomes take
the least confidence of that field's values in the document (``items[].price`` <- every ``items[i].price``).
"""

from __future__ import annotations

import itertools
import re
from collections import defaultdict

from pydantic import BaseModel, ConfigDict, Field

# Band edges: [0, 0.5), [0.5, 0.7), [0.7, 0.9), [0.9, 0.95), [0.95, 1].
BAND_EDGES = (0.0, 0.5, 0.7, 0.9, 0.95, 1.0)
DEFAULT_TARGET_PRECISION = 0.99
_INDEX = re.compile(r"\[\d+\]")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Band(_Model):
    low: float
    high: float
    values: int = Field(description="extracted values whose confidence is in [low, high)")
    right: int = Field(description="of them, those that match their label")
    precision: float | None = Field(description="right / values (null: no value in the band)")
    mean_confidence: float | None


class BandFigures(_Model):
    name: str = Field(description="a field path, or a class name")
    bands: list[Band]
    calibration_error: float = Field(description="expected calibration error: mean |precision - confidence|")


class AcceptRate(_Model):
    target_precision: float
    threshold: float | None = Field(description="the lowest document confidence accepted (null: none can be)")
    accepted: int
    documents: int
    rate: float = Field(description="documents accepted without review at the target precision / documents")
    precision: float | None = Field(description="of the documents accepted, the share with every field right")


class Calibration(_Model):
    """``eval``'s calibration: per field, per class and in all, and the accept-without-review rate."""

    overall: BandFigures
    fields: list[BandFigures]
    classes: list[BandFigures]
    accept_without_review: AcceptRate


def unindexed(path: str) -> str:
    """An evidence path as the comparators name it (``items[0].price`` -> ``items[].price``)."""
    return _INDEX.sub("[]", path)


def field_confidence(confidence: dict[str, float], path: str) -> float | None:
    """The confidence of an outcome's path from a result's evidence (list items: their least)."""
    found = [value for name, value in confidence.items() if unindexed(name) == path]
    return min(found) if found else None


def _bands(name: str, scored: list[tuple[float, bool]]) -> BandFigures:
    bands: list[Band] = []
    error, total = 0.0, len(scored)
    for low, high in itertools.pairwise(BAND_EDGES):
        last = high == BAND_EDGES[-1]
        inside = [(c, ok) for c, ok in scored if low <= c < high or (last and c == high)]
        right = sum(ok for _, ok in inside)
        precision = round(right / len(inside), 4) if inside else None
        mean = round(sum(c for c, _ in inside) / len(inside), 4) if inside else None
        if precision is not None and mean is not None:
            error += len(inside) / total * abs(precision - mean)
        bands.append(Band(low=low, high=high, values=len(inside), right=right, precision=precision,
                          mean_confidence=mean))  # fmt: skip
    return BandFigures(name=name, bands=bands, calibration_error=round(error, 4))


def accept_rate(documents: list[tuple[float, bool]], target: float) -> AcceptRate:
    """The most documents accepted, from the most certain down, while their precision reaches ``target``."""
    ranked = sorted(documents, key=lambda item: -item[0])
    best, threshold, precision = 0, None, None
    right = 0
    for count, (confidence, ok) in enumerate(ranked, start=1):
        right += ok
        tied = count < len(ranked) and ranked[count][0] == confidence
        if not tied and right / count >= target:
            best, threshold, precision = count, confidence, round(right / count, 4)
    rate = round(best / len(documents), 4) if documents else 0.0
    return AcceptRate(target_precision=target, threshold=threshold, accepted=best, documents=len(documents),
                      rate=rate, precision=precision)  # fmt: skip


def calibrate(
    scored: list[tuple[bool, str, list[tuple[str, str]], dict[str, float]]], target: float
) -> Calibration:
    """``scored``: each document (right: its class and every field), its class, its field outcomes (path,
    outcome) and its evidence's confidence by path."""
    by_field: dict[str, list[tuple[float, bool]]] = defaultdict(list)
    by_class: dict[str, list[tuple[float, bool]]] = defaultdict(list)
    everything: list[tuple[float, bool]] = []
    documents: list[tuple[float, bool]] = []
    for document_right, class_name, outcomes, confidence in scored:
        least = 1.0 if confidence else 0.0
        for path, outcome in outcomes:
            if outcome in {"absent", "missing"}:
                continue
            value = field_confidence(confidence, path)
            if value is None:
                value = 0.0  # a value without evidence is as uncertain as it gets
            least = min(least, value)
            item = (value, outcome == "match")
            by_field[path].append(item)
            by_class[class_name].append(item)
            everything.append(item)
        documents.append((least, document_right))
    return Calibration(
        overall=_bands("all", everything),
        fields=[_bands(path, items) for path, items in sorted(by_field.items())],
        classes=[_bands(name, items) for name, items in sorted(by_class.items())],
        accept_without_review=accept_rate(documents, target),
    )


def reliability_plot(calibration: Calibration, path: str) -> None:
    """The reliability diagram: each band's precision against its mean confidence (the diagonal: perfect)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    figure, axes = pyplot.subplots(figsize=(5, 5))
    axes.plot([0, 1], [0, 1], linestyle="--", color="grey", label="perfectly calibrated")
    for figures in [calibration.overall, *calibration.classes]:
        points = [(b.mean_confidence, b.precision) for b in figures.bands if b.precision is not None]
        if points:
            xs, ys = zip(*points, strict=True)
            axes.plot(xs, ys, marker="o", label=f"{figures.name} (ECE {figures.calibration_error:.3f})")
    rate = calibration.accept_without_review
    axes.set_title(f"Reliability: {rate.rate:.0%} accepted without review at {rate.target_precision:.0%}")
    axes.set_xlabel("confidence (mean of the band)")
    axes.set_ylabel("precision (values matching their label)")
    axes.set_xlim(0, 1.02)
    axes.set_ylim(0, 1.02)
    axes.legend(loc="lower right", fontsize="small")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    pyplot.close(figure)
