"""A job definition (docs/defining-a-job.md): the document classes a job reviews, each with its fields (JSON
Schema), its prompt and its checks, and the actions the job takes once its report is written.

A definition is data, not code. It is written as a folder of plain files (``job.json``, one schema per class,
optional prompt files), checked by ``docagent definition validate``, and published as one *bundle* (this
module's ``DefinitionBundle``: job.json with the files it names inlined) to the job bucket under its content
hash. A job pins the bundle it started with (``JobVersions.definition_sha256``) and every step reads that
bundle, so publishing a new version changes new jobs only and needs no ``cdk deploy``.

This module is the contract shared by the functions (which read bundles) and the CLI (which builds and
validates them): the models, the bundle's canonical hash, and the names it allows. It imports nothing outside
the standard library and pydantic, as every Lambda function imports it.
"""

from __future__ import annotations

import hashlib
import json
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import (
    ConfigDict,
    Field,
    JsonValue,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from functions.definition.action_specs import (
    Action,
)
from functions.definition.case_spec import CaseSpec
from functions.definition.schema_cycles import reference_cycle
from functions.definition.spec_base import ERROR_NAME_PATTERN, FIELD_PATTERN, NAME_PATTERN
from functions.definition.spec_base import Strict as _Strict
from functions.payloads.calibration import ClassCalibration, PrecisionTarget
from functions.payloads.common import DocumentStatus
from functions.reading.pdf_layers import ReadMode

DEFINITION_FILE = "job.json"
# A Bedrock model id, inference profile id or ARN as Converse's modelId takes it (1-2048 characters).
MODEL_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:/-]{0,2047}$"
SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
# The outcome of a document of no known class (classification answered none of the definition's classes).
UNKNOWN_CLASS_ERROR = "UnknownDocumentClass"
# What becomes of a packet's section of no class (job.json ``unclassified_pages``;
# functions/reading/sections.py).
UnclassifiedPages = Literal["ignore", "review", "reject"]
# How a field's value is normalised before it is validated (the schema's ``x-normalise`` extension).
Normaliser = Literal["amount", "upper", "lower", "strip", "date"]
NORMALISERS: tuple[str, ...] = ("amount", "upper", "lower", "strip", "date")
# The JSON Schema keywords a class's schema may use: the ones whose meaning is the same in 2020-12 and in
# draft-07 (the Lambda functions validate with fastjsonschema, which implements draft-04 to draft-07), plus
# the annotations docagent reads (``x-normalise``; ``x-comparator``/``x-weight`` for `docagent eval`).
SCHEMA_KEYWORDS = frozenset(
    {
        "$schema", "$id", "$defs", "$ref", "$comment", "title", "description", "examples", "default",
        "type", "properties", "required", "additionalProperties", "items", "enum", "const",
        "pattern", "minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
        "multipleOf", "minItems", "maxItems", "uniqueItems", "format", "anyOf", "oneOf", "allOf", "not",
        "x-normalise", "x-comparator", "x-weight", "x-grounding",
    }
)  # fmt: skip


# ------------------------------------------------------------------------------------------------ checks


class RuleCheck(_Strict):
    """A rule on one field of the extracted fields. Exactly one condition; a missing field fails it unless
    ``optional``. ``not_after``/``not_before``: a date field against ``today`` (the day the document was
    processed, UTC) or another date field of the same document. ``expression``: JSONata over all the fields
    and the rows of the lookups before it (functions/checks/expressions.py)."""

    type: Literal["rule"]
    name: str = Field(pattern=NAME_PATTERN)
    field: str = Field(pattern=FIELD_PATTERN)
    minimum: Decimal | None = None
    maximum: Decimal | None = None
    one_of: list[str] | None = Field(None, min_length=1)
    pattern: str | None = Field(None, min_length=1)
    not_after: str | None = Field(None, description="'today' or a date field")
    not_before: str | None = Field(None, description="'today' or a date field")
    expression: str | None = Field(
        None,
        min_length=1,
        max_length=2000,
        description="JSONata over the fields, earlier lookups' rows as $ATTACH: true when the rule holds",
    )
    optional: bool = False
    on_fail: Literal["reject", "review"] = "review"
    error: str = Field("CheckFailed", pattern=ERROR_NAME_PATTERN)
    message: str | None = Field(None, max_length=300, description="the reason recorded when it fails")

    @model_validator(mode="after")
    def _one_condition(self) -> RuleCheck:
        conditions = [
            name
            for name in ("minimum", "maximum", "one_of", "pattern", "not_after", "not_before", "expression")
            if getattr(self, name) is not None
        ]
        bounds = {"minimum", "maximum"}
        if not conditions or (len(conditions) > 1 and not set(conditions) <= bounds):
            raise ValueError(
                "a rule has exactly one condition (minimum and/or maximum, one_of, pattern, not_after, "
                f"not_before or expression); this one has {', '.join(conditions) or 'none'}"
            )
        return self


class LookupCheck(_Strict):
    """The field's value must be a key of a reference table (``docagent reference load``). The row found is
    kept in the document's result under ``attach`` (its name), so reports and actions can use it."""

    type: Literal["lookup"]
    name: str = Field(pattern=NAME_PATTERN)
    field: str = Field(pattern=FIELD_PATTERN)
    table: str = Field(pattern=NAME_PATTERN)
    attach: str | None = Field(None, pattern=NAME_PATTERN)
    on_fail: Literal["reject", "review"] = "reject"
    error: str = Field("NotInReference", pattern=ERROR_NAME_PATTERN)
    message: str | None = Field(None, max_length=300)


Check = Annotated[RuleCheck | LookupCheck, Field(discriminator="type")]


# -------------------------------------------------------------------------------------------------- cases


# ------------------------------------------------------------------------------------------------ classes


class ClassSpec(_Strict):
    """A document class as job.json names it: its files are relative to the definition's folder."""

    description: str = Field(min_length=1, max_length=1000, description="what such a document is")
    schema_file: str = Field(alias="schema", min_length=1)
    prompt_file: str | None = Field(None, alias="prompt", min_length=1)
    checks: list[Check] = Field(default_factory=list)
    columns: list[Annotated[str, Field(pattern=FIELD_PATTERN)]] | None = Field(
        None, description="the fields of the report's rows (default: the schema's top-level scalar fields)"
    )
    review_below: (
        Annotated[float, Field(ge=0, le=1)]
        | PrecisionTarget
        | dict[Annotated[str, Field(pattern=FIELD_PATTERN)], Annotated[float, Field(ge=0, le=1)]]
        | None
    ) = Field(
        None,
        union_mode="left_to_right",
        description="a field whose confidence is under this goes to review: one number for every field, one "
        'per field (functions/evidence/grounding.py), or a target precision {"precision": P} met by the '
        "fitted "
        "confidence (functions/evidence/confidence.py; needs `docagent eval --calibrate`); a required field "
        "not grounded always does",
    )
    split: Literal["pages"] | None = Field(
        None,
        description="pages: a document of this class is a packet of documents of the other classes (a PDF: "
        "its pages classified among them, each section its own result, functions/reading/sections.py)",
    )

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @model_serializer(mode="wrap")
    def _without_unset_split(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A class without ``split`` dumps as before it existed, so its definition keeps its version."""
        data: dict[str, Any] = handler(self)
        if data.get("split") is None:
            data.pop("split", None)
        return data


def case_problems(case: CaseSpec, classes: dict[str, ClassSpec]) -> list[tuple[tuple[str | int, ...], str]]:
    """Where in job.json (a JSON path's parts) and what is wrong with ``case``: a required class no section
    can be of (a packet class is none), two case rules of one name. ``classes``: the definition's."""
    sections = sorted(name for name, spec in classes.items() if spec.split is None)
    problems: list[tuple[tuple[str | int, ...], str]] = [
        (
            ("case", "requires", index, "class"),
            f"case requires {requirement.class_name!r}, which is no section's class (a packet's sections "
            f"are of {', '.join(sections)})",
        )
        for index, requirement in enumerate(case.requires)
        if requirement.class_name not in sections
    ]
    names = [rule.name for rule in case.checks]
    problems += [
        (("case", "checks", index, "name"), f"two case checks are named {name!r}")
        for index, name in enumerate(names)
        if names.index(name) != index
    ]
    return problems


class Totals(_Strict):
    """A report total: a number field summed over the documents (a packet's: sections) whose outcome it
    ``counts`` (docs/design.md, report.json), grouped by another field."""

    name: str = Field(pattern=NAME_PATTERN)
    sum: str = Field(pattern=FIELD_PATTERN)
    by: str | None = Field(None, pattern=FIELD_PATTERN)
    counts: list[DocumentStatus] = Field(["extracted"], min_length=1, description="the outcomes it sums")


# ------------------------------------------------------------------------------------------------ actions


# -------------------------------------------------------------------------------------------- definitions


class ReviewSettings(_Strict):
    """The review queue's part in the job (docs/design.md, "Review")."""

    wait: bool = Field(
        False,
        description="the report and the actions wait until every document of the review queue has a decision",
    )


class JobDefinition(_Strict):
    """job.json."""

    name: str = Field(pattern=NAME_PATTERN)
    description: str = Field("", max_length=2000)
    classes: dict[Annotated[str, Field(pattern=NAME_PATTERN)], ClassSpec] = Field(min_length=1)
    totals: list[Totals] = Field(default_factory=list)
    actions: list[Action] = Field(default_factory=list)
    review: ReviewSettings | None = None
    read: ReadMode = Field(
        "auto",
        description="how PDFs are read: text (Converse's text extraction), visual (every page as text and "
        "image, citations enabled) or auto (text where every page has a text layer, visual otherwise); "
        "functions/reading/pdf_layers.py",
    )
    models: (
        Annotated[list[Annotated[str, Field(pattern=MODEL_ID_PATTERN)]], Field(min_length=2, max_length=2)]
        | None
    ) = Field(
        None,
        description="[CHEAP, STRONG]: two Bedrock model ids; the cheap one classifies and extracts, the "
        "strong one extracts again a document whose fields the grounding would send to review, and gives "
        "those fields (functions/inference/cascade.py); null: the deployment's model_id alone",
    )
    max_pages: int | None = Field(
        None,
        ge=1,
        le=100_000,
        description="a PDF or TIFF with more pages is rejected before any model call (DocumentTooLarge, with "
        "the figure); null: no ceiling (a PDF over 100 pages or a TIFF over 20, what one request takes, is "
        "read in page windows)",
    )
    window_pages: int | None = Field(
        None,
        ge=1,
        le=100,
        description="the pages of each window a PDF or TIFF longer than one model call takes is read in "
        "(functions/reading/page_windows.py; a TIFF's windows at most 20 pages, Converse's images a "
        "request); null: 20",
    )
    split: Literal["pages"] | None = Field(
        None,
        description="pages: a PDF may be a packet of several documents; each page is classified and "
        "consecutive pages of one class become sections, each its own result "
        "(functions/reading/sections.py); null: a document is one document",
    )
    unclassified_pages: UnclassifiedPages | None = Field(
        None,
        description="a packet's section of no class (a fax cover sheet): ignore (kept, marked ignored), "
        "review (a review item), reject (UnknownDocumentClass, the packet too); null: review",
    )
    case: CaseSpec | None = Field(
        None,
        description="what a packet of several sections must hold and rules over all its sections "
        "(functions/checks/cases.py); null: a packet is only its sections",
    )

    @model_serializer(mode="wrap")
    def _without_unset_review(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A definition without ``review`` (or with the default ``read``) dumps as before they existed, so its
        bundle keeps its version."""
        data: dict[str, Any] = handler(self)
        if data.get("read") == "auto":
            data.pop("read", None)
        unset = ("review", "max_pages", "models", "split", "window_pages", "case", "unclassified_pages")
        for name in unset:
            if data.get(name) is None:
                data.pop(name, None)
        return data

    def waits_for_review(self) -> bool:
        return self.review is not None and self.review.wait

    @model_validator(mode="after")
    def _unique_names(self) -> JobDefinition:
        if self.models is not None and self.models[0] == self.models[1]:
            raise ValueError("models: the cheap and the strong model are two different model ids")
        actions = [action.name for action in self.actions]
        if len(set(actions)) != len(actions):
            raise ValueError("two actions have the same name: an action's name is its idempotency key")
        for class_name, spec in self.classes.items():
            checks = [check.name for check in spec.checks]
            if len(set(checks)) != len(checks):
                raise ValueError(f"class {class_name}: two checks have the same name")
        if all(spec.split == "pages" for spec in self.classes.values()):
            raise ValueError("every class splits pages: a packet's pages need a class that does not (split)")
        problems = [] if self.case is None else case_problems(self.case, self.classes)
        if problems:
            raise ValueError(problems[0][1])
        return self


class ClassBundle(_Strict):
    """A class as published: its spec with the schema and the prompt text inlined, and its part of the
    definition's confidence fit when it has one (``calibration``)."""

    spec: ClassSpec
    schema_: dict[str, JsonValue] = Field(alias="schema")
    prompt: str | None = None
    calibration: ClassCalibration | None = None
    # Set by DefinitionBundle when ``calibration`` was fitted on another version: why it is ignored.
    _ignored_fit: str | None = PrivateAttr(None)

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @model_serializer(mode="wrap")
    def _without_unset_calibration(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A class without a fit dumps as before fits existed, so its definition keeps its version."""
        data: dict[str, Any] = handler(self)
        if data.get("calibration") is None:
            data.pop("calibration", None)
        return data

    def fit(self) -> ClassCalibration | None:
        """The class's confidence fit, None without one or when it was fitted on another version."""
        return None if self._ignored_fit is not None else self.calibration

    @model_validator(mode="after")
    def _self_contained(self) -> ClassBundle:
        """A published schema refers only inside itself (``#/$defs/...``: the kit resolves every other
        reference at publish, docagent/kit/schema_refs.py), so a running function never fetches anything
        (docs/security.md)."""
        for where, value in keyword_values(self.schema_, "$ref"):
            if not isinstance(value, str) or not value.startswith("#"):
                raise ValueError(
                    f"schema {self.spec.schema_file}: $ref {value!r} at {where} is not inside the schema "
                    "(publish with docagent, which resolves references within the definition's folder)"
                )
        cycle = reference_cycle(self.schema_)
        if cycle is not None:
            raise ValueError(
                f"schema {self.spec.schema_file}: $ref {cycle[1]!r} at {cycle[0]} is a reference cycle"
            )
        return self


def keyword_values(schema: Any, keyword: str, path: str = "$") -> list[tuple[str, Any]]:
    """(JSON path, value) of every use of a schema keyword (not of a property that has the keyword's name)."""
    found: list[tuple[str, Any]] = []
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == keyword:
                found.append((path, value))
            elif key in ("properties", "$defs", "definitions") and isinstance(value, dict):
                for name, sub in value.items():
                    found += keyword_values(sub, keyword, f"{path}.{key}.{name}")
            else:
                found += keyword_values(value, keyword, f"{path}.{key}")
    elif isinstance(schema, list):
        for index, item in enumerate(schema):
            found += keyword_values(item, keyword, f"{path}[{index}]")
    return found


class DefinitionBundle(_Strict):
    """What is published and pinned: the definition with every file it names inlined. ``sha256`` (of the
    canonical JSON of everything else) is its version: the same files give the same version."""

    definition: JobDefinition
    classes: dict[str, ClassBundle]

    @model_validator(mode="after")
    def _fits_of_this_version(self) -> DefinitionBundle:
        """A class's fit applies only to the version it was fitted on (its ``definition_sha256``: the
        definition's version without fits); another's is ignored, ``ignored_calibration`` says why."""
        fits = {found.calibration.definition_sha256 for found in self.classes.values() if found.calibration}
        mine = self.uncalibrated_sha256 if fits else ""
        for found in self.classes.values():
            theirs = found.calibration.definition_sha256 if found.calibration else mine
            found._ignored_fit = None if theirs == mine else (
                f"the confidence fit was made for version {short_version(theirs)}; this definition is "
                f"{short_version(mine)}: ignored (the fixed table holds; run docagent eval --calibrate)"
            )  # fmt: skip
        return self

    @property
    def ignored_calibration(self) -> str | None:
        """Why the bundle's confidence fit is ignored (fitted on another version), None when it is not."""
        return next((found._ignored_fit for found in self.classes.values() if found._ignored_fit), None)

    @property
    def uncalibrated_sha256(self) -> str:
        """The version of the definition without any class's fit: the one a fit names."""
        data = self.model_dump(mode="json", by_alias=True)
        for found in data["classes"].values():
            found.pop("calibration", None)
        return hashlib.sha256(canonical_json(data)).hexdigest()

    @property
    def name(self) -> str:
        return self.definition.name

    @property
    def sha256(self) -> str:
        return bundle_sha256(self)

    def class_bundle(self, class_name: str) -> ClassBundle:
        return self.classes[class_name]


def canonical_json(value: Any) -> bytes:
    """Sorted keys, no spaces, UTF-8: the bytes a bundle is hashed and stored as."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def bundle_sha256(bundle: DefinitionBundle) -> str:
    return hashlib.sha256(canonical_json(bundle.model_dump(mode="json", by_alias=True))).hexdigest()


def short_version(sha256: str) -> str:
    """How a version is shown: its first 12 hex digits."""
    return sha256[:12]


class DefinitionPointer(_Strict):
    """definitions/{name}/current.json: the version new jobs of this definition pin, and who published it."""

    name: str = Field(pattern=NAME_PATTERN)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    published_at: str
    published_by: str | None = None
    previous: list[str] = Field(default_factory=list, description="earlier versions, newest first")
