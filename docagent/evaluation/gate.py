"""The gate: a run against a saved baseline fails when any field's F1 dropped by more than its margin.

``--save-baseline FILE`` writes the run (``EvalRun``: the figures, each document's wrong fields and the
definition version measured). ``--baseline FILE`` reads one back and compares: each regression is named, with
the documents whose wrong fields changed and the two versions.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from docagent.evaluation.figures import CalibrationCheck, DocumentChange, EvalRun, GateResult, Regression
from docagent.operations.context import EXIT_NOT_FOUND, RefusedError

DEFAULT_MARGIN = 0.02  # F1 points a field may lose before the gate fails


def save_baseline(run: EvalRun, path: str | Path) -> Path:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(run.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return target


def load_baseline(path: str | Path) -> EvalRun:
    source = Path(path)
    if not source.is_file():
        raise RefusedError("BaselineNotFound", f"{path}: no such baseline file", EXIT_NOT_FOUND)
    try:
        return EvalRun.model_validate_json(source.read_bytes())
    except ValidationError as error:
        raise RefusedError(
            "BaselineInvalid",
            f"{path} is not a baseline written by `docagent eval --save-baseline`: {error.error_count()} "
            f"problem(s), first: {error.errors()[0]['msg']}",
        ) from None


def parse_margins(specs: list[str]) -> dict[str, float]:
    """``FIELD=MARGIN`` items (e.g. ``summary=0.1``) into a dict; refused when one is malformed."""
    margins: dict[str, float] = {}
    for spec in specs:
        path, sep, value = spec.partition("=")
        try:
            margin = float(value)
        except ValueError:
            margin = -1.0
        if not sep or not path or not 0 <= margin <= 1:
            raise RefusedError(
                "BadMargin", f"--field-margin {spec!r} is not FIELD=MARGIN with MARGIN in 0..1"
            )
        margins[path] = margin
    return margins


def compare(
    baseline: EvalRun,
    current: EvalRun,
    margin: float = DEFAULT_MARGIN,
    margins: dict[str, float] | None = None,
) -> GateResult:
    """Each field of the baseline: a regression when its F1 dropped by more than its margin (a field that is
    no longer compared counts as F1 0). Documents changed: those whose set of wrong fields differs."""
    margins = margins or {}
    before = {f.path: f.rates.f1 for f in baseline.fields}
    after = {f.path: f.rates.f1 for f in current.fields}
    regressions: list[Regression] = []
    for path, f1 in before.items():
        now = after.get(path)
        drop = round(f1 - (now or 0.0), 4)
        allowed = margins.get(path, margin)
        if drop > allowed:
            regressions.append(
                Regression(path=path, baseline_f1=f1, current_f1=now, drop=drop, margin=allowed)
            )
    changes = {path: round(after[path] - before[path], 4) for path in before if path in after}
    calibration = calibration_checks(baseline, current, margin)
    return GateResult(
        passed=not regressions and not any(check.regressed for check in calibration),
        calibration=calibration,
        default_margin=margin,
        margins=margins,
        baseline=baseline.definition,
        current=current.definition,
        regressions=sorted(regressions, key=lambda r: -r.drop),
        changes=changes,
        changed_documents=changed_documents(baseline, current),
    )


def calibration_checks(baseline: EvalRun, current: EvalRun, margin: float) -> list[CalibrationCheck]:
    """The accept-without-review rate may not fall, nor the overall calibration error rise, by more than
    ``margin`` (nothing to gate when either run has no calibration)."""
    if baseline.calibration is None or current.calibration is None:
        return []
    before, after = baseline.calibration, current.calibration
    rate_before, rate_after = before.accept_without_review.rate, after.accept_without_review.rate
    error_before, error_after = before.overall.calibration_error, after.overall.calibration_error
    return [
        CalibrationCheck(figure="accept_without_review_rate", baseline=rate_before, current=rate_after,
                         margin=margin, regressed=rate_before - rate_after > margin),
        CalibrationCheck(figure="calibration_error", baseline=error_before, current=error_after,
                         margin=margin, regressed=error_after - error_before > margin),
    ]  # fmt: skip


def changed_documents(baseline: EvalRun, current: EvalRun) -> list[DocumentChange]:
    old = {d.sample: d for d in baseline.documents}
    new = {d.sample: d for d in current.documents}
    changes: list[DocumentChange] = []
    for sample in sorted(set(old) | set(new)):
        was, now = old.get(sample), new.get(sample)
        wrong_before = {o.path for o in was.wrong} if was else set()
        wrong_now = {o.path for o in now.wrong} if now else set()
        if was is None or now is None or wrong_before != wrong_now:
            changes.append(
                DocumentChange(
                    sample=sample,
                    baseline_score=was.score if was else None,
                    current_score=now.score if now else None,
                    newly_wrong=sorted(wrong_now - wrong_before),
                    now_right=sorted(wrong_before - wrong_now),
                )
            )
    return changes
