"""A definition folder's problems, and its files read into them: each problem names its file, where in it (a
JSON path) and the fix (``docagent definition validate`` and the loader that publishes a folder).

A file that cannot be read (outside the folder, missing, not JSON, not UTF-8) is a problem appended to the
caller's list, never an exception, so one run reports every problem of a folder.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import ErrorDetails

from docagent.kit import schema_refs, schemas
from docagent.kit.files import NotARegularFile, TooDeep, read_json_file, read_regular
from functions.definition.spec_base import NAME_RULE

DOCS = "docs/defining-a-job.md"
MAX_MESSAGE = 400


class Problem(BaseModel):
    """One problem of a definition folder: where it is and how to fix it (`--json` answers carry these)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    file: str = Field(description="the file, relative to the definition's folder")
    where: str = Field(description="a JSON path in it ($ for the whole file)")
    message: str
    fix: str

    @field_validator("message")
    @classmethod
    def _one_line(cls, message: str) -> str:
        """One line of a bounded size (jsonschema quotes a whole enum in its message)."""
        return shortened(" ".join(message.split()), MAX_MESSAGE)

    def line(self) -> str:
        """The printed line, at most MAX_MESSAGE characters: the message gives way to its file, place, fix."""
        head, tail = f"{self.file}: {self.where}: ", f" (fix: {self.fix})"
        room = max(MAX_MESSAGE - len(head) - len(tail), 80)
        return shortened(head + shortened(self.message, room) + tail, MAX_MESSAGE)


def shortened(text: str, limit: int) -> str:
    """``text``, or its start and how long it was (a text shortened already keeps its first length), in at
    most ``limit`` characters."""
    if len(text) <= limit:
        return text
    marked = _SHORTENED.search(text)
    body = text[: marked.start()] if marked else text
    suffix = f"... ({marked.group(1) if marked else f'{len(text):,}'} characters in all)"
    return body[: max(limit - len(suffix), 0)] + suffix


_SHORTENED = re.compile(r"\.\.\. \(([0-9,]+) characters in all\)$")


def json_path(loc: tuple[int | str, ...]) -> str:
    """A JSON path: ``$.classes.invoice.checks[0]`` (an index in brackets)."""
    return "$" + "".join(schemas.index_step(part) if isinstance(part, int) else f".{part}" for part in loc)


def _fix(issue: ErrorDetails) -> str:
    kind, context = issue["type"], issue.get("ctx") or {}
    if kind == "missing":
        return f"add {issue['loc'][-1]!r}"
    if kind == "extra_forbidden":
        return "remove it (a misspelt key?); the keys allowed are in " + DOCS
    if kind == "string_pattern_mismatch" and "a-z0-9" in str(context.get("pattern", "")):
        return f"use a name of {NAME_RULE}"
    if kind == "string_pattern_mismatch":
        return f"write it to match {context.get('pattern')}"
    if kind in {"literal_error", "union_tag_invalid", "union_tag_not_found"}:
        return f"use one of {context.get('expected') or context.get('expected_tags')}"
    return f"see {DOCS}"


def model_problems(error: ValidationError, file: str, prefix: tuple[int | str, ...] = ()) -> list[Problem]:
    return [
        Problem(
            file=file,
            where=json_path(prefix + tuple(issue["loc"])),
            message=issue["msg"].removeprefix("Value error, "),
            fix=_fix(issue),
        )
        for issue in error.errors()
    ]


def _inside(root: Path, relative: str, problems: list[Problem]) -> Path | None:
    """The real path of a file of the definition's folder, or None with the problem appended (outside the
    folder, or a loop of symbolic links: Python 3.11 and 3.12 raise RuntimeError for one, 3.13 OSError)."""
    try:
        path, real_root = (root / relative).resolve(), root.resolve()
    except (RuntimeError, OSError):
        problems.append(
            Problem(
                file=relative,
                where="$",
                message=f"{root / relative} is a loop of symbolic links",
                fix="point the link at a real folder or file",
            )
        )
        return None
    if not path.is_relative_to(real_root):
        problems.append(
            Problem(file=relative, where="$", message="outside the definition's folder", fix="move it in")
        )
        return None
    return path


def read_json(root: Path, relative: str, problems: list[Problem]) -> Any:
    """A JSON file of the definition's folder, or None with the problem appended (outside the folder, missing,
    not JSON)."""
    path = _inside(root, relative, problems)
    if path is None:
        return None
    try:
        return read_json_file(path)
    except FileNotFoundError:
        problems.append(
            Problem(file=relative, where="$", message="no such file", fix="create it or fix its name")
        )
    except NotARegularFile as error:
        problems.append(_not_regular(relative, error))
    except TooDeep as error:
        problems.append(
            Problem(file=relative, where="$", message=str(error), fix="nest it less deeply ($defs and $ref)")
        )
    except (ValueError, UnicodeDecodeError) as error:
        problems.append(
            Problem(file=relative, where="$", message=f"not JSON ({error})", fix="write valid JSON")
        )
    except OSError as error:  # a folder named so, a file that cannot be read
        problems.append(
            Problem(
                file=relative, where="$", message=f"cannot be read ({error.strerror or error})", fix="fix it"
            )
        )
    return None


def bundled_schema(root: Path, relative: str, problems: list[Problem]) -> Any:
    """A class's schema file with its references to other files of the folder resolved into it
    (docagent/kit/schema_refs.py), or None with the problem appended. Not an object: returned as it is."""
    schema = read_json(root, relative, problems)
    if not isinstance(schema, dict):
        return schema
    try:
        return schema_refs.bundle(root, relative, schema)
    except schema_refs.ReferenceRefused as refused:
        problems += [
            Problem(file=each.file, where=each.where, message=each.message, fix=each.fix)
            for each in refused.every
        ]
        return None


def not_an_object(file: str) -> Problem:
    """A schema file whose JSON is no object."""
    return Problem(
        file=file, where="$", message="a schema is a JSON object", fix='write {"type": "object", ...}'
    )


def read_prompt(root: Path, relative: str, problems: list[Problem]) -> str | None:
    """A prompt file of the definition's folder, or None with the problem appended (outside the folder,
    missing, not UTF-8)."""
    path = _inside(root, relative, problems)
    if path is None:
        return None
    try:
        return read_regular(path)
    except NotARegularFile as error:
        problems.append(_not_regular(relative, error))
    except FileNotFoundError:
        problems.append(
            Problem(
                file=relative,
                where="$",
                message="no such file",
                fix='create the prompt file, or remove "prompt" to generate it from the schema',
            )
        )
    except UnicodeDecodeError as error:
        problems.append(
            Problem(file=relative, where="$", message=f"not UTF-8 ({error})", fix="save it as UTF-8")
        )
    except OSError as error:  # a file that cannot be read
        problems.append(
            Problem(
                file=relative, where="$", message=f"cannot be read ({error.strerror or error})", fix="fix it"
            )
        )
    return None


def _not_regular(relative: str, error: NotARegularFile) -> Problem:
    return Problem(
        file=relative, where="$", message=str(error), fix="name a regular file of the definition's folder"
    )
