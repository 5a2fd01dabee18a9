"""The base of the operator commands' ``--json`` shapes (docagent/operations/json_shapes.py): an answer
declares every key; a refusal carries its details."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Output(BaseModel):
    """One command's answer: every key is declared (a key nobody declared fails validation)."""

    model_config = ConfigDict(extra="forbid")


class Refusal(Output):
    """What every command prints with ``--json`` when it refuses or fails before answering."""

    model_config = ConfigDict(extra="allow")  # the refusal's details, named by the error type

    error: str = Field(description="what went wrong, in words")
    error_type: str = Field(description="the refusal's name, e.g. NoDocuments, JobConflict, LocalCloudDown")
    exit_code: int = Field(description="2: bad request or refusal, 3: not found")
