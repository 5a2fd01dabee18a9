"""``docagent definition validate``: every problem of a definition folder, each naming its file, where in it
(a JSON path) and the fix. A definition with any problem cannot be published, so it never runs.

It checks what the models alone cannot: each class's schema against the JSON Schema 2020-12 meta-schema and
the keywords the functions can validate (definition.SCHEMA_KEYWORDS), the prompt files, each check's field
and its type, the actions against what the deployment allows, and the sample labels against their schemas.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, validators  # type: ignore[import-untyped]
from jsonschema.exceptions import ValidationError as LabelError  # type: ignore[import-untyped]
from pydantic import TypeAdapter, ValidationError

from docagent.kit import schemas
from docagent.kit.calibration_file import CALIBRATE_FIX, precision_problems
from docagent.kit.case_problems import case_block_problems
from docagent.kit.grounding_notes import grounding_problems
from docagent.kit.loader import DefinitionInvalid, read_bundle
from docagent.kit.problems import (
    DOCS,
    Problem,
    bundled_schema,
    json_path,
    model_problems,
    not_an_object,
    read_json,
    read_prompt,
)
from docagent.kit.samples import (
    LABEL_SUFFIX,
    SectionLabel,
    document_pages,
    labelled_parts,
    read_label,
    section_page_problems,
)
from docagent.kit.samples import SAMPLES_FOLDER as SAMPLES_DIR
from functions.actions.allowed import AllowedTargets, refusals
from functions.checks.expressions import expression_problem
from functions.checks.fields import field_schema
from functions.checks.patterns import matches, pattern_problem
from functions.definition.action_specs import Action
from functions.definition.job_spec import (
    DEFINITION_FILE,
    NORMALISERS,
    SCHEMA_DIALECT,
    SCHEMA_KEYWORDS,
    ClassSpec,
    JobDefinition,
    LookupCheck,
    RuleCheck,
)
from functions.errors import MODEL_NOT_ALLOWED_FIX, DocumentRejected
from functions.payloads.calibration import CALIBRATION_FILE

_ACTIONS: TypeAdapter[Any] = TypeAdapter(Action)


def _pattern(validator: Any, pattern: str, instance: Any, schema: dict[str, Any]) -> Any:
    """jsonschema's ``pattern`` keyword (its message), matched by RE2 as the functions match it
    (functions/checks/patterns.py): a label never makes a pattern backtrack."""
    if validator.is_type(instance, "string") and not matches(pattern, instance):
        yield LabelError(f"{instance!r} does not match {pattern!r}")


_PATTERN_FIX = (
    "a pattern RE2 runs: no backreferences or lookarounds, repeat counts up to 1,000 (docs/security.md, "
    "'Regular expressions and expressions')"
)
# The labels' validator: Draft 2020-12, its schema patterns matched by RE2.
_LABELS = validators.extend(Draft202012Validator, {"pattern": _pattern})


def _job_problems(raw: Any) -> tuple[list[Problem], dict[str, ClassSpec], list[tuple[int, Any]]]:
    """job.json against the models, part by part: the classes and actions that parse are checked further."""
    if not isinstance(raw, dict):
        return (
            [Problem(file=DEFINITION_FILE, where="$", message="not a JSON object", fix=f"see {DOCS}")],
            {},
            [],
        )
    problems: list[Problem] = []
    try:
        JobDefinition.model_validate(raw)
    except ValidationError as error:
        # The whole-definition rules (unique names) are checked below, naming the entries.
        problems += [p for p in model_problems(error, DEFINITION_FILE) if p.where != "$"]
    classes: dict[str, ClassSpec] = {}
    raw_classes = raw.get("classes")
    for name, spec in (raw_classes if isinstance(raw_classes, dict) else {}).items():
        try:
            classes[name] = ClassSpec.model_validate(spec)
        except ValidationError:
            continue  # reported above
        names = Counter(check.name for check in classes[name].checks)
        for index, check in enumerate(classes[name].checks):
            if names[check.name] > 1:
                where = json_path(("classes", name, "checks", index, "name"))
                problems.append(
                    Problem(
                        file=DEFINITION_FILE,
                        where=where,
                        message=f"two checks are named {check.name!r}",
                        fix="give each check of a class its own name",
                    )
                )
    actions: list[tuple[int, Any]] = []
    raw_actions = raw.get("actions")
    for index, action in enumerate(raw_actions if isinstance(raw_actions, list) else []):
        try:
            actions.append((index, _ACTIONS.validate_python(action)))
        except ValidationError:
            continue
    names = Counter(action.name for _, action in actions)
    for index, action in actions:
        if names[action.name] > 1:
            problems.append(
                Problem(
                    file=DEFINITION_FILE,
                    where=json_path(("actions", index, "name")),
                    message=f"two actions are named {action.name!r}",
                    fix="give each action its own name: the name is its idempotency key within a job",
                )
            )
    return problems, classes, actions


def _schema_problems(schema: Any, file: str) -> list[Problem]:
    if not isinstance(schema, dict):
        return [not_an_object(file)]
    problems = [
        Problem(
            file=file,
            where=json_path(tuple(error.absolute_path)),
            message=error.message,
            fix="write it as JSON Schema 2020-12 allows (https://json-schema.org/draft/2020-12)",
        )
        for error in Draft202012Validator(Draft202012Validator.META_SCHEMA).iter_errors(schema)
    ]
    if schema.get("type") != "object":
        problems.append(
            Problem(
                file=file,
                where="$.type",
                message="a class's schema describes an object",
                fix='set "type": "object" at the top, with the fields under "properties"',
            )
        )
    if "$schema" in schema and schema["$schema"] != SCHEMA_DIALECT:
        problems.append(
            Problem(
                file=file,
                where="$.$schema",
                message=f"{schema['$schema']!r} is another dialect",
                fix=f"use {SCHEMA_DIALECT!r} or leave $schema out",
            )
        )
    for path, sub in schemas.walk(schema):
        for keyword in sorted(set(sub) - SCHEMA_KEYWORDS):
            problems.append(
                Problem(
                    file=file,
                    where=f"{path}.{keyword}",
                    message=f"keyword {keyword!r} is not supported",
                    fix="the functions validate with draft-07 semantics: use only the keywords listed in "
                    f'{DOCS} (or move it under "description")',
                )
            )
        problem = pattern_problem(sub["pattern"]) if isinstance(sub.get("pattern"), str) else None
        if problem:
            problems.append(
                Problem(
                    file=file,
                    where=f"{path}.pattern",
                    message=problem,
                    fix=_PATTERN_FIX,
                )
            )
        if "x-normalise" in sub and sub["x-normalise"] not in NORMALISERS:
            problems.append(
                Problem(
                    file=file,
                    where=f"{path}.x-normalise",
                    message=f"unknown normaliser {sub['x-normalise']!r}",
                    fix=f"use one of {', '.join(NORMALISERS)}",
                )
            )
    return problems


def _readable(schema: dict[str, Any]) -> bool:
    """A schema the checks and labels can be read against (its keyword and pattern problems are reported
    apart: a pattern RE2 cannot run is never run against a label)."""
    return (
        schema.get("type") == "object"
        and Draft202012Validator(Draft202012Validator.META_SCHEMA).is_valid(schema)
        and not any(
            pattern_problem(sub["pattern"])
            for _, sub in schemas.walk(schema)
            if isinstance(sub.get("pattern"), str)
        )
    )


def _prompt_problems(root: Path, relative: str) -> list[Problem]:
    problems: list[Problem] = []
    text = read_prompt(root, relative, problems)
    if text is not None and not text.strip():
        problems.append(
            Problem(file=relative, where="$", message="the prompt is empty", fix="write the prompt's text")
        )
    return problems


def _field_problem(
    schema: dict[str, Any], field: str, want: set[str], where: str, what: str
) -> Problem | None:
    """None when ``field`` is in the schema and can hold one of ``want`` (any kind when empty)."""
    found = field_schema(schema, field)
    if found is None:
        return Problem(
            file=DEFINITION_FILE,
            where=where,
            message=f"field {field!r} is not in the class's schema",
            fix="name a field of the schema's properties (dotted for nested objects: a.b)",
        )
    have = schemas.kinds(found, schema)
    if want and not have & want:
        return Problem(
            file=DEFINITION_FILE,
            where=where,
            message=f"{what} needs a {' or '.join(sorted(want))} field; "
            f"{field!r} is {', '.join(sorted(have)) or 'untyped'}",
            fix="point it at a field of that type, or change the field's type in the schema",
        )
    return None


def _check_problems(class_name: str, spec: ClassSpec, schema: dict[str, Any]) -> list[Problem]:
    found: list[Problem | None] = []
    for index, check in enumerate(spec.checks):
        where = json_path(("classes", class_name, "checks", index))
        if isinstance(check, LookupCheck):
            found.append(
                _field_problem(schema, check.field, {"string", "integer"}, f"{where}.field", "a lookup")
            )
            continue
        assert isinstance(check, RuleCheck)
        if check.minimum is not None or check.maximum is not None:
            want = {"number", "integer", "amount"}
            found.append(_field_problem(schema, check.field, want, f"{where}.field", "minimum/maximum"))
        elif check.not_after is not None or check.not_before is not None:
            found.append(_field_problem(schema, check.field, {"date"}, f"{where}.field", "a date rule"))
            key = "not_after" if check.not_after is not None else "not_before"
            other = check.not_after or check.not_before
            if other != "today":
                found.append(_field_problem(schema, str(other), {"date"}, f"{where}.{key}", f"{key}"))
        else:
            found.append(_field_problem(schema, check.field, set(), f"{where}.field", "a rule"))
        problem = None if check.expression is None else expression_problem(check.expression)
        if problem:
            found.append(
                Problem(
                    file=DEFINITION_FILE,
                    where=f"{where}.expression",
                    message=f"rule {check.name!r}: {problem}",
                    fix="write a JSONata expression that gives true when the rule holds "
                    "(https://jsonata.org)",
                )
            )
        problem = None if check.pattern is None else pattern_problem(check.pattern)
        if problem:
            found.append(
                Problem(
                    file=DEFINITION_FILE,
                    where=f"{where}.pattern",
                    message=problem,
                    fix=_PATTERN_FIX,
                )
            )
    for index, column in enumerate(spec.columns or []):
        where = json_path(("classes", class_name, "columns", index))
        found.append(_field_problem(schema, column, set(), where, "a column"))
    return [problem for problem in found if problem is not None]


def _totals_problems(totals: Any, class_schemas: dict[str, dict[str, Any]]) -> list[Problem]:
    """Each total sums a number field (and groups by a field) that some class has."""
    problems = []
    for index, total in enumerate(totals if isinstance(totals, list) else []):
        for key, want in (("sum", {"number", "integer", "amount"}), ("by", set())):
            field = total.get(key) if isinstance(total, dict) else None
            if not isinstance(field, str):
                continue
            where = json_path(("totals", index, key))
            found = [
                _field_problem(schema, field, want, where, "a total") for schema in class_schemas.values()
            ]
            if found and all(problem is not None for problem in found):
                problems.append(found[0])
    return [problem for problem in problems if problem is not None]


# The field of an action that names what it reaches (where a refusal of its target is reported).
_TARGET_FIELD = {"http": "url", "eventbridge": "bus", "sns": "topic_arn", "export": "formats"}


def _refused_field(action_type: str, refusal: str) -> str:
    """The field a refusal is about: an http action's secret (functions/actions/allowed.py words its refusals
    "secret ..." and "SSM parameter ..."), else the field naming the action's target."""
    if action_type == "http" and refusal.startswith(("secret ", "SSM parameter ")):
        return "secret"
    return _TARGET_FIELD[action_type]


def _action_problems(actions: list[tuple[int, Any]], allowed: AllowedTargets | None) -> list[Problem]:
    """Each action the deployment would refuse (functions/actions/allowed.py, the check RunActions makes);
    nothing when the deployment's allow-list is not known here (``docagent definition validate`` alone)."""
    if allowed is None:
        return []
    return [
        Problem(
            file=DEFINITION_FILE,
            where=json_path(("actions", index, _refused_field(action.type, refusal))),
            message=refusal,
            fix="change the action, or allow its target in the deployment's `actions` (cdk.json) and deploy",
        )
        for index, action in actions
        for refusal in refusals(action, allowed)
    ]


def _model_problems(raw: dict[str, Any], models_allowed: list[str] | None) -> list[Problem]:
    """Each model job.json ``models`` names that the deployment's functions may not call (its MODELS_ALLOWED:
    ``model_id`` and ``extra_model_ids``, the models its IAM grants); nothing when that is not known here."""
    models = raw.get("models")
    if models_allowed is None or not isinstance(models, list):
        return []
    return [
        Problem(
            file=DEFINITION_FILE,
            where=json_path(("models", index)),
            message=f"the deployment's functions may not call {model!r} (it allows "
            f"{', '.join(models_allowed) or 'none'}): its jobs would fail with ModelNotAllowed",
            fix=f"{MODEL_NOT_ALLOWED_FIX}, or name an allowed model",
        )
        for index, model in enumerate(models)
        if isinstance(model, str) and model not in models_allowed
    ]


_LABEL_FORMS = f"write the label in one of its forms ({DOCS}, 'Samples and labels')"


def _packet_problems(
    relative: str, documents: list[Path], sections: tuple[SectionLabel, ...]
) -> list[Problem]:
    """A packet label's sections against its document's pages (docagent/kit/samples.py
    ``section_page_problems``): overlaps, gaps, and pages past the document's last page."""
    problems: list[Problem] = []
    pages: int | None = None
    if len(documents) == 1:
        try:
            pages = document_pages(documents[0].read_bytes())
        except (DocumentRejected, OSError) as error:
            problems.append(
                Problem(
                    file=relative,
                    where="$",
                    message=f"its document {documents[0].name} cannot be read, so its pages are not known "
                    f"({error})",
                    fix="put a document the job reads beside the label (a packet is a PDF or a TIFF)",
                )
            )
    for found in section_page_problems(sections, pages):
        where = json_path(found.where)
        problems.append(Problem(file=relative, where=where, message=found.message, fix=found.fix))
    return problems


def _sample_problems(root: Path, class_schemas: dict[str, dict[str, Any]]) -> list[Problem]:
    samples = root / SAMPLES_DIR
    if not samples.is_dir():
        return []
    problems: list[Problem] = []
    for label in sorted(samples.rglob(f"*{LABEL_SUFFIX}")):
        relative = label.relative_to(root).as_posix()
        parts = label.relative_to(samples).parts
        stem = label.name.removesuffix(LABEL_SUFFIX)
        documents = sorted(
            p for p in label.parent.glob(f"{stem}.*") if p != label and not p.name.endswith(LABEL_SUFFIX)
        )
        if not documents:
            problems.append(
                Problem(
                    file=relative,
                    where="$",
                    message="a label without its document",
                    fix=f"put the document {stem}.EXT beside it, or remove the label",
                )
            )
        value = read_json(root, relative, problems)
        if value is None:
            continue
        content = read_label(value, in_order=False)
        if isinstance(content, str):
            problems.append(Problem(file=relative, where="$", message=content, fix=_LABEL_FORMS))
            continue
        parts_of, problem = labelled_parts(content, parts[0] if len(parts) > 1 else None, class_schemas)
        if problem:
            problems.append(
                Problem(
                    file=relative,
                    where="$",
                    message=problem,
                    fix=f"put it in {SAMPLES_DIR}/CLASS/, or say its class in the label ({DOCS})",
                )
            )
            continue
        if content.sections:
            problems += _packet_problems(relative, documents, content.sections)
        for index, part in enumerate(parts_of):
            if part.class_name is None:  # a document (or pages) of no class: no fields to check
                continue
            prefix: tuple[str | int, ...] = () if part.section is None else ("sections", index, "fields")
            for error in _LABELS(class_schemas[part.class_name]).iter_errors(part.fields):
                problems.append(
                    Problem(
                        file=relative,
                        where=json_path(prefix + tuple(error.absolute_path)),
                        message=error.message,
                        fix=f"make the label a valid {part.class_name} (its schema)",
                    )
                )
    return problems


def validate(
    folder: str | Path,
    allowed: AllowedTargets | None = None,
    models_allowed: list[str] | None = None,
    *,
    calibrating: bool = False,
) -> list[Problem]:
    """Every problem of the definition folder (none: it can be published); ``allowed``: the deployment's
    allow-list of action targets, ``models_allowed``: the models its functions may call, when known;
    ``calibrating``: for ``eval --calibrate``, a precision target without its fit is no problem."""
    root = Path(folder)
    problems: list[Problem] = []
    raw = read_json(root, DEFINITION_FILE, problems)
    if raw is None:
        return problems
    found, classes, actions = _job_problems(raw)
    problems += found
    if not isinstance(raw, dict):  # a JSON array, a string...: nothing further can be read from it
        return problems
    class_schemas: dict[str, dict[str, Any]] = {}
    for name, spec in classes.items():
        schema = bundled_schema(root, spec.schema_file, problems)
        if schema is None:
            continue
        problems += _schema_problems(schema, spec.schema_file)
        problems += grounding_problems(schema, spec.schema_file) if isinstance(schema, dict) else []
        if spec.prompt_file is not None:
            problems += _prompt_problems(root, spec.prompt_file)
        if isinstance(schema, dict) and _readable(schema):
            class_schemas[name] = schema
            problems += _check_problems(name, spec, schema)
    problems += _totals_problems(raw.get("totals"), class_schemas)
    if raw.get("case") is not None and len(classes) == len(raw.get("classes") or {}):
        problems += case_block_problems(raw["case"], classes)
    problems += _action_problems(actions, allowed)
    problems += _model_problems(raw, models_allowed)
    if class_schemas and len(class_schemas) == len(classes):
        problems += _sample_problems(root, class_schemas)
    # a precision target needs the folder's fit (docagent/kit/calibration_file.py)
    if not problems and not calibrating:
        try:
            problems += precision_problems(read_bundle(root))
        except DefinitionInvalid as error:  # calibration.json itself
            problems += [Problem(file=CALIBRATION_FILE, where="$", message=line, fix=CALIBRATE_FIX)
                         for line in error.problems]  # fmt: skip
    return problems
