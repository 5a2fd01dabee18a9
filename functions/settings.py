"""Environment variables (docs/design.md) modelled with pydantic and read once per process.

``get_settings()`` validates the whole environment on first use and fails fast with a message that names every
missing or invalid variable. Tests change the environment and call ``get_settings.cache_clear()``.
"""

from __future__ import annotations

import functools
import os
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, Json, ValidationError

from functions.actions.allowed import AllowedTargets
from functions.batch_inference.facts import BATCH_MAX_RECORDS, BATCH_MIN_RECORDS
from functions.errors import ConfigurationError
from functions.payloads.common import (
    DEFAULT_ITEMS_PART_MIN_BYTES,
    DEFAULT_MAX_DOCUMENT_BYTES,
    DEFAULT_MAX_DOCUMENTS,
)


class Settings(BaseModel):
    """Every function gets the same variables; each reads what it needs from this one model."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=False)

    bucket_name: str = Field(alias="BUCKET_NAME", min_length=3, max_length=63)
    idempotency_table_name: str = Field(alias="IDEMPOTENCY_TABLE_NAME", min_length=3)
    # The one DynamoDB table of every reference table (functions/checks/references.py).
    reference_table_name: str = Field(alias="REFERENCE_TABLE_NAME", min_length=3)
    # The definition a request without ``definition`` runs ("" = none: such a request is refused).
    default_definition: str = Field("", alias="DEFAULT_DEFINITION", pattern=r"^([a-z0-9][a-z0-9-]{0,62})?$")
    model_provider: Literal["bedrock"] = Field(alias="MODEL_PROVIDER")
    model_id: str = Field(alias="MODEL_ID", min_length=1)
    model_max_tokens: int = Field(800, alias="MODEL_MAX_TOKENS", ge=1, le=64_000)
    model_temperature: float = Field(0.0, alias="MODEL_TEMPERATURE", ge=0.0, le=1.0)
    model_breaker_seconds: int = Field(300, alias="MODEL_BREAKER_SECONDS", ge=0)
    # The budget of a job whose request sets none (functions/budget.py); 0: none.
    default_max_cost_usd: float = Field(0.0, alias="DEFAULT_MAX_COST_USD", ge=0)
    code_version: str = Field(alias="CODE_VERSION", min_length=1)
    max_document_bytes: int = Field(DEFAULT_MAX_DOCUMENT_BYTES, alias="MAX_DOCUMENT_BYTES", ge=1)
    max_documents: int = Field(DEFAULT_MAX_DOCUMENTS, alias="MAX_DOCUMENTS", ge=1)
    # A listing step ends its part of the items at this size (S3's minimum multipart part size, 5 MiB, so
    # the parts can be joined with UploadPartCopy): docs/scale.md. Tests lower it.
    items_part_min_bytes: int = Field(DEFAULT_ITEMS_PART_MIN_BYTES, alias="ITEMS_PART_MIN_BYTES", ge=1)
    # Versions per ListObjectVersions page (MaxKeys; S3 returns at most 1,000).
    listing_page_size: int = Field(1000, alias="LISTING_PAGE_SIZE", ge=1, le=1000)
    idempotency_ttl_seconds: int = Field(7 * 24 * 3600, alias="IDEMPOTENCY_TTL_SECONDS", ge=60)
    # What job-level actions may reach (functions/actions/allowed.py), as JSON: the deployment's ``actions``.
    actions_allowed: Json[AllowedTargets] = Field(AllowedTargets(), alias="ACTIONS_ALLOWED")
    # The models the functions may call (the deployment's ``model_id`` and ``extra_model_ids``, which its IAM
    # grants), as a JSON list: a definition naming another one (job.json ``models``) fails its documents with
    # ModelNotAllowed before a call. Unset: not checked here (Bedrock's AccessDenied is the check).
    models_allowed: Json[list[str]] | None = Field(None, alias="MODELS_ALLOWED")
    fault_injection_enabled: bool = Field(False, alias="FAULT_INJECTION_ENABLED")
    # Where documents may come from (docs/design.md, "Source locations"): comma-separated, each a prefix of
    # the job bucket ("incoming/") or "s3://bucket/prefix/" in another bucket.
    # Empty: the default, the job bucket's incoming root (functions/storage.py INCOMING_ROOT).
    source_locations: str = Field("", alias="SOURCE_LOCATIONS")
    # The service role Bedrock assumes to run a job's batch inference (docs/batch.md); "" where the
    # deployment runs no batch jobs (the batch functions only read it).
    batch_role_arn: str = Field("", alias="BATCH_ROLE_ARN")
    # Records per batch job the account's quota allows ("Records per batch inference job": 50,000 by default,
    # adjustable): a job with more is split into several batch jobs (functions/batch_inference/plan.py).
    batch_records_per_job: int = Field(BATCH_MAX_RECORDS, alias="BATCH_RECORDS_PER_JOB", ge=BATCH_MIN_RECORDS)


ENV_VARS: tuple[str, ...] = tuple(
    field.alias for field in Settings.model_fields.values() if field.alias is not None
)


def load_settings(environ: dict[str, str] | None = None) -> Settings:
    """Validate the environment; raise ConfigurationError naming each bad or missing variable."""
    source = os.environ if environ is None else environ
    values = {name: source[name] for name in ENV_VARS if name in source}
    try:
        return Settings.model_validate(values)
    except ValidationError as error:
        problems = []
        for issue in error.errors():
            name = ".".join(str(part) for part in issue["loc"]) or "environment"
            if issue["type"] == "missing":
                problems.append(f"{name} is not set")
            else:
                problems.append(f"{name}: {issue['msg']}")
        raise ConfigurationError("invalid docagent environment: " + "; ".join(problems)) from None


@functools.cache
def get_settings() -> Settings:
    """The process-wide settings, validated on first use."""
    return load_settings()
