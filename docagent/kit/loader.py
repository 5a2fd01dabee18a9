"""A definition folder read into a bundle (functions/definition/job_spec.py): job.json, and the schema and
prompt files each class names, inlined (a schema's references to other files of the folder resolved into it:
docagent/kit/schema_refs.py), with the folder's confidence fit when it was made for this version
(docagent/kit/calibration_file.py). ``read_bundle`` raises ``DefinitionInvalid`` listing every problem, each
naming its file and where in it."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from docagent.kit.calibration_file import calibrated, read_calibration
from docagent.kit.problems import (
    Problem,
    bundled_schema,
    model_problems,
    not_an_object,
    read_json,
    read_prompt,
)
from functions.definition.job_spec import DEFINITION_FILE, ClassBundle, DefinitionBundle, JobDefinition


class DefinitionInvalid(ValueError):  # noqa: N818 (a definition is invalid; the name reads as the outcome)
    """A definition folder that cannot be published; ``problems`` holds one line per problem."""

    def __init__(self, folder: Path, problems: list[str]) -> None:
        super().__init__(f"{folder}: {len(problems)} problem(s):\n" + "\n".join(problems))
        self.folder = folder
        self.problems = problems


def read_bundle(folder: str | Path) -> DefinitionBundle:
    """The bundle of a definition folder, or DefinitionInvalid naming every problem found."""
    root = Path(folder)
    problems: list[Problem] = []
    raw = read_json(root, DEFINITION_FILE, problems)
    if raw is None:
        raise DefinitionInvalid(root, [problem.line() for problem in problems])
    try:
        definition = JobDefinition.model_validate(raw)
    except ValidationError as error:
        raise DefinitionInvalid(
            root, [problem.line() for problem in model_problems(error, DEFINITION_FILE)]
        ) from None
    classes: dict[str, ClassBundle] = {}
    for name, spec in definition.classes.items():
        schema = bundled_schema(root, spec.schema_file, problems)
        if schema is not None and not isinstance(schema, dict):
            problems.append(not_an_object(spec.schema_file))
            schema = None
        prompt = read_prompt(root, spec.prompt_file, problems) if spec.prompt_file is not None else None
        if schema is not None:
            classes[name] = ClassBundle.model_validate({"spec": spec, "schema": schema, "prompt": prompt})
    fit = read_calibration(root, problems)
    if problems:
        raise DefinitionInvalid(root, [problem.line() for problem in problems])
    return calibrated(DefinitionBundle(definition=definition, classes=classes), fit)
