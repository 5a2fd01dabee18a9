"""A definition folder read into a bundle (functions/definition.py): job.json, and the schema and prompt
files each class names, inlined. ``read_bundle`` raises ``DefinitionInvalid`` listing every problem, each
naming its file and where in it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from docagent.kit.validate import model_problems
from functions.definition import DEFINITION_FILE, ClassBundle, DefinitionBundle, JobDefinition


class DefinitionInvalid(ValueError):  # noqa: N818 (a definition is invalid; the name reads as the outcome)
    """A definition folder that cannot be published; ``problems`` holds one line per problem."""

    def __init__(self, folder: Path, problems: list[str]) -> None:
        super().__init__(f"{folder}: {len(problems)} problem(s):\n" + "\n".join(problems))
        self.folder = folder
        self.problems = problems


def _read_json(path: Path, problems: list[str], shown: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        problems.append(f"{shown}: no such file")
    except (ValueError, UnicodeDecodeError) as error:
        problems.append(f"{shown}: not JSON ({error})")
    return None


def _inside(folder: Path, relative: str, problems: list[str], where: str) -> Path | None:
    path = (folder / relative).resolve()
    if not path.is_relative_to(folder.resolve()):
        problems.append(f"{where}: {relative} is outside the definition's folder")
        return None
    return path


def read_bundle(folder: str | Path) -> DefinitionBundle:
    """The bundle of a definition folder, or DefinitionInvalid naming every problem found."""
    root = Path(folder)
    problems: list[str] = []
    raw = _read_json(root / DEFINITION_FILE, problems, DEFINITION_FILE)
    if raw is None:
        raise DefinitionInvalid(root, problems)
    try:
        definition = JobDefinition.model_validate(raw)
    except ValidationError as error:
        problems += [problem.line() for problem in model_problems(error, DEFINITION_FILE)]
        raise DefinitionInvalid(root, problems) from None
    classes: dict[str, ClassBundle] = {}
    for name, spec in definition.classes.items():
        where = f"{DEFINITION_FILE}: classes.{name}"
        schema_path = _inside(root, spec.schema_file, problems, f"{where}.schema")
        schema = _read_json(schema_path, problems, spec.schema_file) if schema_path else None
        if schema is not None and not isinstance(schema, dict):
            problems.append(f"{spec.schema_file}: a schema is a JSON object")
            schema = None
        prompt: str | None = None
        if spec.prompt_file is not None:
            prompt_path = _inside(root, spec.prompt_file, problems, f"{where}.prompt")
            if prompt_path is not None:
                try:
                    prompt = prompt_path.read_text(encoding="utf-8")
                except FileNotFoundError:
                    problems.append(f"{spec.prompt_file}: no such file")
                except UnicodeDecodeError as error:
                    problems.append(f"{spec.prompt_file}: not UTF-8 ({error})")
        if schema is not None:
            classes[name] = ClassBundle.model_validate({"spec": spec, "schema": schema, "prompt": prompt})
    if problems:
        raise DefinitionInvalid(root, problems)
    return DefinitionBundle(definition=definition, classes=classes)
