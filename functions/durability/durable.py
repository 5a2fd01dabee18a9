"""Durable steps over Powertools idempotency (docs/semantics.md P1-P5).

A step runs a function at most once to completion per business key: the first run writes an INPROGRESS record,
success stores the (pydantic) result as COMPLETED, and every later call with the same key returns that stored
result without running the function again. If the function raises an ``Exception`` the record is deleted and a
retry runs it again (P3). If the process dies, the INPROGRESS record blocks retries with
``IdempotencyAlreadyInProgressError`` until the dead invocation's deadline, because the Lambda context is
registered on every call (P4).

Keys are ``docagent.<step>#<hash of business ids>``: no module or function name takes part (P1), so moving or
renaming code, or redeploying, never changes a key. Nothing here is created at import time.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar, cast

from aws_lambda_powertools.utilities.idempotency import (
    DynamoDBPersistenceLayer,
    IdempotencyConfig,
    idempotent_function,
)
from aws_lambda_powertools.utilities.idempotency.serialization.pydantic import PydanticSerializer
from pydantic import BaseModel

from functions import aws
from functions.settings import get_settings

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

# "prepare", "classify", "extract", "lookup-{check}" (one per lookup check of a class), "actions"
StepName = str
ResultT = TypeVar("ResultT", bound=BaseModel)

KEY_PREFIX = "docagent"


def step_key_prefix(step: StepName) -> str:
    return f"{KEY_PREFIX}.{step}"


def record_key(step: StepName, ids: dict[str, str], key_field: str | None = None) -> str:
    """The idempotency record's ``id`` that ``run_step`` writes for these business ids (Powertools hashes the
    selected payload's JSON, sorted keys, with md5). Operators read records by it (``docagent inspect``)."""
    data: object = ids[key_field] if key_field else ids
    digest = hashlib.md5(json.dumps(data, sort_keys=True).encode(), usedforsecurity=False).hexdigest()
    return f"{step_key_prefix(step)}#{digest}"


@functools.cache
def persistence_store(step: StepName) -> DynamoDBPersistenceLayer:
    """One persistence layer per step: Powertools configures a layer once, from the first config it sees."""
    return DynamoDBPersistenceLayer(
        table_name=get_settings().idempotency_table_name,
        key_attr="id",
        expiry_attr="expiration",
        boto3_client=aws.dynamodb_client(),
    )


def run_step(
    step: StepName,
    *,
    ids: dict[str, str],
    fn: Callable[[], ResultT],
    result_model: type[ResultT],
    context: LambdaContext,
    key_field: str | None = None,
    validate: dict[str, str] | None = None,
) -> ResultT:
    """Run ``fn`` as the durable step ``step`` keyed by ``ids`` (business ids only) and return its result.

    ``key_field`` narrows the key to one id; ``validate`` adds a field that is not part of the key but must
    match the stored record (Powertools payload validation): a mismatch raises ``IdempotencyValidationError``.
    """
    payload: dict[str, str] = {**ids, **(validate or {})}
    if validate and key_field is None:
        raise ValueError("validate needs key_field, or the validated fields would become part of the key")
    if len(validate or {}) > 1:
        raise ValueError("validate takes a single field")

    config = IdempotencyConfig(
        event_key_jmespath=key_field or "",
        payload_validation_jmespath=next(iter(validate)) if validate else "",
        raise_on_no_idempotency_key=True,
        expires_after_seconds=get_settings().idempotency_ttl_seconds,
    )
    config.register_lambda_context(context)

    def step_function(payload: dict[str, str]) -> ResultT:
        return fn()

    durable = idempotent_function(
        step_function,
        data_keyword_argument="payload",
        persistence_store=persistence_store(step),
        config=config,
        key_prefix=step_key_prefix(step),
        output_serializer=PydanticSerializer(result_model),
    )
    return cast(ResultT, durable(payload=payload))


def clear_caches() -> None:
    """Forget the cached persistence layers (tests, or after the environment changed)."""
    persistence_store.cache_clear()
