"""job.json ``case``: what a packet of several sections must hold and the rules over all its sections
(docs/defining-a-job.md, "Cases"; checked by functions/checks/cases.py)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field, model_validator

from functions.definition.spec_base import ERROR_NAME_PATTERN, NAME_PATTERN
from functions.definition.spec_base import Strict as _Strict


class CaseRequirement(_Strict):
    """A class a case (a packet of several sections) must hold: at least ``min`` sections of it, at most
    ``max`` (null: no ceiling). Written ``"CLASS"`` or ``{"class": CLASS, ...}``."""

    class_name: str = Field(alias="class", pattern=NAME_PATTERN)
    min: int = Field(1, ge=0, le=1000)
    max: int | None = Field(None, ge=1, le=1000)
    on_fail: Literal["reject", "review"] = "review"
    error: str = Field("CaseIncomplete", pattern=ERROR_NAME_PATTERN)

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, serialize_by_alias=True)

    @model_validator(mode="before")
    @classmethod
    def _from_name(cls, data: Any) -> Any:
        return {"class": data} if isinstance(data, str) else data

    @model_validator(mode="after")
    def _bounds(self) -> CaseRequirement:
        if self.max is not None and self.max < self.min:
            raise ValueError(f"requires {self.class_name}: max {self.max} is below min {self.min}")
        return self


class CaseRule(_Strict):
    """A rule over all of a case's sections: JSONata over ``{"sections": {CLASS: [SECTION, ...]}, "pages":
    N}`` (each SECTION ``{"section_id", "pages", "status", "fields", "attached"}``;
    functions/checks/cases.py), true when the rule holds."""

    type: Literal["rule"]
    name: str = Field(pattern=NAME_PATTERN)
    expression: str = Field(min_length=1, max_length=2000)
    on_fail: Literal["reject", "review"] = "review"
    error: str = Field("CheckFailed", pattern=ERROR_NAME_PATTERN)
    message: str | None = Field(None, max_length=300, description="the reason recorded when it fails")


class CaseSpec(_Strict):
    """job.json ``case``: what a packet of several sections must hold and the rules over all its sections
    (docs/defining-a-job.md, "Cases"), checked once every section is stored."""

    requires: list[CaseRequirement] = Field(default_factory=list)
    checks: list[CaseRule] = Field(default_factory=list)
