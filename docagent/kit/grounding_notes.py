"""What ``docagent definition validate`` says of the grounding modes (docs/defining-a-job.md, "Checks and
outcome"; functions/evidence/grounding_modes.py): an ``x-grounding`` that is no mode is a problem; each field
graded ``support`` by default (a boolean, free text) is a note, so a field the model writes rather than reads
is seen before the first job, and one that is read after all can be marked ``verbatim``."""

from __future__ import annotations

from typing import Any

from docagent.kit import schemas
from docagent.kit.problems import DOCS, Problem
from functions.definition.job_spec import DefinitionBundle
from functions.evidence.grounding_modes import GROUNDING_KEYWORD, MODES, defaulted


def grounding_problems(schema: dict[str, Any], file: str) -> list[Problem]:
    """Each ``x-grounding`` of the schema that is not one of the modes."""
    return [
        Problem(
            file=file,
            where=f"{path}.{GROUNDING_KEYWORD}",
            message=f"unknown grounding mode {sub[GROUNDING_KEYWORD]!r}",
            fix=f"use one of {', '.join(MODES)} ({DOCS})",
        )
        for path, sub in schemas.walk(schema)
        if GROUNDING_KEYWORD in sub and sub[GROUNDING_KEYWORD] not in MODES
    ]


def grounding_notes(bundle: DefinitionBundle) -> list[str]:
    """One line per field of a valid definition that its default grades other than ``verbatim``."""
    return [
        f"{found.spec.schema_file}: field `{path}` is graded as `{mode}` by default ({why}): set "
        f"{GROUNDING_KEYWORD} to override"
        for found in bundle.classes.values()
        for path, mode, why in defaulted(dict(found.schema_))
    ]
