"""Durable steps over Powertools idempotency (docs/semantics.md P1-P5).

A step runs a function at most once to completion per business key: the first run writes an INPROGRESS record,
success stores the (pydantic) result as COMPLETED, and every later call with the same key returns that stored
result without running the function again. If the function raises an ``Exception`` the record is deleted and a
retry runs it again (P3). If the process dies, the INPROGRESS record blocks retries with
``IdempotencyAlreadyInProgressError`` until the dead invocation's deadline, because the Lambda context is
registered on every call (P4).

A step whose function only reads (a lookup check's reference row: ``run_read_step``) writes no INPROGRESS
record: it reads, then stores its answer once (a conditional PutItem of the COMPLETED record Powertools would
have written), and a later call keeps the stored answer: one request fewer than the lock, which guards only a
side effect the read does not have.

Keys are ``docagent.<step>#<hash of business ids>``: no module or function name takes part (P1), so moving or
renaming code, or redeploying, never changes a key. Nothing here is created at import time.
"""

from __future__ import annotations

import functools
import hashlib
import json
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar, cast

from aws_lambda_powertools.utilities.idempotency import (
    DynamoDBPersistenceLayer,
    IdempotencyConfig,
    idempotent_function,
)
from aws_lambda_powertools.utilities.idempotency.exceptions import IdempotencyAlreadyInProgressError
from aws_lambda_powertools.utilities.idempotency.serialization.pydantic import PydanticSerializer
from botocore.exceptions import ClientError
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


# What Powertools' DynamoDB layer stores (its default attribute names and statuses, read from
# aws_lambda_powertools 3.x persistence/dynamodb.py and base.py, 2026-12-08): a COMPLETED record holds the
# result as sorted-keys JSON in ``data``; an INPROGRESS one its invocation's deadline in milliseconds.
COMPLETED, INPROGRESS = "COMPLETED", "INPROGRESS"
# Powertools' own condition for a new record (its put of INPROGRESS): none, or expired, or an INPROGRESS
# record whose invocation's deadline has passed.
_WRITABLE = (
    "attribute_not_exists(#id) OR #expiry < :now OR (#status = :inprogress"
    " AND attribute_exists(#in_progress_expiry) AND #in_progress_expiry < :now_in_millis)"
)


def run_read_step(
    step: StepName, *, ids: dict[str, str], fn: Callable[[], ResultT], result_model: type[ResultT]
) -> tuple[ResultT, bool]:
    """Run the read ``fn`` as the durable step ``step`` and return (its answer, whether it is an answer stored
    before). Only for a function without side effects: it runs on every call, and the first answer stored
    wins (one conditional PutItem, under the key and in the record format of ``run_step``); a later call's
    own answer is dropped for the stored one, so every attempt of a document sees the same row. A record left
    INPROGRESS (a ``run_step`` of an older deploy, killed) blocks it as it blocks ``run_step`` (P4)."""
    result = fn()
    store = persistence_store(step)
    now = time.time()
    try:
        aws.dynamodb_client().put_item(
            TableName=get_settings().idempotency_table_name,
            Item={
                store.key_attr: {"S": record_key(step, ids)},
                store.expiry_attr: {"N": str(int(now) + get_settings().idempotency_ttl_seconds)},
                store.status_attr: {"S": COMPLETED},
                store.data_attr: {"S": json.dumps(result.model_dump(mode="json"), sort_keys=True)},
            },
            ConditionExpression=_WRITABLE,
            ExpressionAttributeNames={
                "#id": store.key_attr,
                "#expiry": store.expiry_attr,
                "#status": store.status_attr,
                "#in_progress_expiry": store.in_progress_expiry_attr,
            },
            ExpressionAttributeValues={
                ":now": {"N": str(int(now))},
                ":now_in_millis": {"N": str(int(now * 1000))},
                ":inprogress": {"S": INPROGRESS},
            },
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        )
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") != "ConditionalCheckFailedException":
            raise
        stored = cast("dict[str, dict[str, str]]", error.response.get("Item", {}))
        if stored.get(store.status_attr, {}).get("S") != COMPLETED:
            raise IdempotencyAlreadyInProgressError(
                f"the step {step} is in progress in another invocation: {record_key(step, ids)}"
            ) from None
        return result_model.model_validate_json(stored[store.data_attr]["S"]), True
    return result, False


def clear_caches() -> None:
    """Forget the cached persistence layers (tests, or after the environment changed)."""
    persistence_store.cache_clear()
