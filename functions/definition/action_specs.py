"""job.json ``actions``: what the job does once its report is written (docs/defining-a-job.md; run by
functions/actions)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from functions.definition.spec_base import NAME_PATTERN
from functions.definition.spec_base import Strict as _Strict


class _Action(_Strict):
    name: str = Field(pattern=NAME_PATTERN)
    when: Literal["always", "any_rejected", "any_review", "all_accepted"] = "always"


class HttpAction(_Action):
    """POST the job's summary as JSON to ``url`` with an ``Idempotency-Key`` header. If the endpoint answers
    ``GET url?reference=R``, an attempt whose outcome is unknown is reconciled instead of repeated.

    ``url`` is an http(s) URL whose host the deployment allows, or ``destination:NAME``: a URL the deployment
    names (cdk.json), so one definition runs against the local cloud's services and against AWS."""

    type: Literal["http"]
    url: str = Field(pattern=r"^(https?://[^/\s]+(/\S*)?|destination:[a-z0-9][a-z0-9-]{0,62})$")
    secret: str | None = Field(
        None,
        pattern=r"^(arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:.+|ssm:/\S+)$",
        description="a bearer token by reference: a Secrets Manager ARN or ssm:/parameter/name",
    )
    title: str = Field("docagent job {job_id}", max_length=200)


class EventBridgeAction(_Action):
    """PutEvents of one event (source ``docagent``) on ``bus``; its detail carries the idempotency key."""

    type: Literal["eventbridge"]
    bus: str = Field(min_length=1, max_length=1600, description="an event bus name or ARN")
    detail_type: str = Field("docagent job finished", min_length=1, max_length=128)


class SnsAction(_Action):
    """Publish one message to ``topic_arn`` (a FIFO topic gets the idempotency key as deduplication id)."""

    type: Literal["sns"]
    topic_arn: str = Field(pattern=r"^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}(\.fifo)?$")
    subject: str = Field("docagent job {job_id}", max_length=100)


ExportFormat = Literal["csv", "jsonl"]
EXPORT_FORMATS: tuple[ExportFormat, ...] = ("csv", "jsonl")


class ExportAction(_Action):
    """The job's results as files in the job bucket (jobs/{job}/exports/{name}/results.csv and .jsonl)."""

    type: Literal["export"]
    formats: list[ExportFormat] = Field(default_factory=lambda: list(EXPORT_FORMATS), min_length=1)


Action = Annotated[HttpAction | EventBridgeAction | SnsAction | ExportAction, Field(discriminator="type")]
