"""A definition folder's ``calibration.json`` (docs/design.md, "Confidence fitted from labels"): read with the
folder's bundle, each class's part put into its ClassBundle only when the file was fitted on this version of
the definition; what ``definition validate`` says of it (a stale fit: a note; a precision target without a
fit: a problem)."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from docagent.kit.problems import DOCS, Problem, model_problems, read_json
from functions.definition.job_spec import DefinitionBundle, short_version
from functions.payloads.calibration import CALIBRATION_FILE, CalibrationFile, PrecisionTarget

CALIBRATE_FIX = "run `docagent eval --calibrate --job PATH` (docs/evaluation.md, 'Fitted confidence')"


def read_calibration(root: Path, problems: list[Problem]) -> CalibrationFile | None:
    """The folder's calibration.json, None without one (or with its problems appended)."""
    if not (root / CALIBRATION_FILE).exists():
        return None
    raw = read_json(root, CALIBRATION_FILE, problems)
    if raw is None:
        return None
    try:
        return CalibrationFile.model_validate(raw)
    except ValidationError as error:
        problems += model_problems(error, CALIBRATION_FILE)
        return None


def calibrated(bundle: DefinitionBundle, fit: CalibrationFile | None) -> DefinitionBundle:
    """The bundle with each class's part of ``fit`` when it was fitted on this version, else as it is."""
    if fit is None or fit.definition_sha256 != bundle.uncalibrated_sha256:
        return bundle
    classes = {
        name: found.model_copy(update={"calibration": fit.for_class(name)})
        for name, found in bundle.classes.items()
    }
    return DefinitionBundle(definition=bundle.definition, classes=classes)


def uncalibrated(bundle: DefinitionBundle) -> DefinitionBundle:
    """The bundle without any class's fit (the version a fit names)."""
    classes = {name: found.model_copy(update={"calibration": None}) for name, found in bundle.classes.items()}
    return DefinitionBundle(definition=bundle.definition, classes=classes)


def stale_note(fit: CalibrationFile | None, bundle: DefinitionBundle) -> str | None:
    """What validate says of a fit made for another version of the definition (it is ignored)."""
    if fit is None or fit.definition_sha256 == bundle.uncalibrated_sha256:
        return None
    return (
        f"{CALIBRATION_FILE}: fitted for version {short_version(fit.definition_sha256)}; this definition is "
        f"{short_version(bundle.uncalibrated_sha256)}: ignored (the fixed confidence table holds), "
        "run docagent eval --calibrate again"
    )


def calibration_notes(root: Path, bundle: DefinitionBundle) -> list[str]:
    note = stale_note(read_calibration(root, []), bundle)
    return [] if note is None else [note]


def precision_problems(bundle: DefinitionBundle) -> list[Problem]:
    """Each class whose ``review_below`` is a precision target while the bundle has no fit for it: refused,
    since nothing says which confidence reaches the target."""
    return [
        Problem(
            file="job.json",
            where=f"$.classes.{name}.review_below",
            message=f"review_below asks precision {found.spec.review_below.precision:g}, and the definition "
            "has no confidence fit for this version",
            fix=f"{CALIBRATE_FIX}, or give review_below a number ({DOCS})",
        )
        for name, found in bundle.classes.items()
        if isinstance(found.spec.review_below, PrecisionTarget) and found.fit() is None
    ]
