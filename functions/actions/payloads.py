"""The actions' records and events (docs/design.md, "Actions")."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from functions.payloads.common import JOB_ID_PATTERN
from functions.payloads.job import JobOptions
from functions.payloads.report import ReportAction, ReportSummary

ActionType = Literal["http", "eventbridge", "sns", "export"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RunActionsEvent(_Strict):
    """The RunActions task's payload."""

    job_id: str = Field(pattern=JOB_ID_PATTERN)
    report: ReportSummary
    retry_count: int = Field(0, ge=0)
    redrive_count: int = Field(0, ge=0)
    options: JobOptions = Field(default_factory=JobOptions)


class ActionsResult(_Strict):
    """run_actions's output (the durable ``actions`` step's result): each action's outcome, in order."""

    actions: list[ReportAction]


class RemoteRecord(_Strict):
    """What an http target (or the built-in ledger) holds for one action. ``created`` is true only for the
    call that created it."""

    id: str
    reference: str
    idempotency_key: str = ""
    created_at: str
    created: bool = Field(False, exclude=True)


class ActionAttemptError(_Strict):
    error: str
    message: str
    at: str


class ActionAttempt(_Strict):
    """jobs/{job}/actions/{name}/attempt.json: the intent, written before every request of the action.

    Found without done.json, it means an earlier attempt's outcome is unknown: http reconciles by reference
    before it sends anything; eventbridge and sns send again with the same idempotency key (consumers dedupe
    on it); export rewrites the same bytes. ``errors`` keeps the latest failures (newest last)."""

    job_id: str = Field(pattern=JOB_ID_PATTERN)
    action: str
    type: ActionType
    idempotency_key: str
    payload_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    attempts: int = Field(ge=1)
    first_attempt_at: str
    last_attempt_at: str
    errors: list[ActionAttemptError] = Field(default_factory=list)


class ActionDone(_Strict):
    """jobs/{job}/actions/{name}/done.json: the action's outcome, written once it is known. A done action is
    never run again."""

    job_id: str = Field(pattern=JOB_ID_PATTERN)
    outcome: ReportAction
    target: str = Field(description="where it went (URL, bus, topic, 'job bucket'); never a credential")
    attempts: int = Field(0, ge=0, description="requests sent (0 when skipped)")
