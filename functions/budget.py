"""A job's budget (docs/design.md, "Budget"): one ledger item per job in the idempotency table, reserved
before each model call and settled after it with DynamoDB conditional updates, so concurrent Distributed Map
children never spend past the budget together.

DynamoDB conditions cannot add, so the item keeps ``headroom_nusd`` = budget - spent - reserved: a
reservation is ``headroom -= amount`` on condition ``headroom >= amount``. Each reservation is named by the
document and the call's purpose (``reservations.{document_id}#{purpose}``): a retry or a redrive of a call
that was reserved reuses its reservation, and settling removes it on condition that it holds that amount, so a
call is charged once however often its step runs again (a journalled call is reused, never reserved again:
functions/inference/calls.py). Amounts are integer nano-dollars (functions/spend.py).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError
from pydantic import BaseModel, Field

from functions import aws, spend
from functions.durability.durable import step_key_prefix
from functions.errors import BudgetBusy, BudgetExceeded
from functions.observability import MetricUnit, logger, metrics
from functions.payloads.job import JobOptions
from functions.settings import get_settings

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_dynamodb.type_defs import AttributeValueTypeDef

# An alert goes out once when the spent amount reaches this share of the budget (BudgetWarningsAlarm).
DEFAULT_WARN_SHARE = 0.8
# The most input tokens one call is reserved for: the default model's context window (Claude Haiku 4.5,
# 200,000 tokens; looked up 2026-12-01, AWS docs "Claude Haiku 4.5" model card).
MAX_INPUT_TOKENS = 200_000
# Characters per token of the reservation's input estimate: an over-estimate (English text runs about 4).
CHARS_PER_TOKEN = 4


class BudgetLedger(BaseModel):
    """The ledger item as the operator reads it (``docagent budget``, ``status``, ``inspect``)."""

    job_id: str
    budget_nusd: int = Field(ge=0)
    spent_nusd: int = 0
    reserved_nusd: int = 0
    headroom_nusd: int = 0
    settled_calls: int = 0
    reservations: dict[str, int] = Field(default_factory=dict)
    warned: bool = False
    stopped: str | None = Field(None, description="why the budget stopped a call (the last refusal)")

    @property
    def budget_usd(self) -> float:
        return spend.to_usd(self.budget_nusd)

    @property
    def spent_usd(self) -> float:
        return spend.to_usd(self.spent_nusd)

    @property
    def reserved_usd(self) -> float:
        return spend.to_usd(self.reserved_nusd)


def with_default(options: JobOptions, default_usd: float) -> JobOptions:
    """The options a job runs with: the request's budget, else the deployment's default (0: none)."""
    if options.max_cost_usd is not None or not default_usd:
        return options
    return options.model_copy(update={"max_cost_usd": default_usd})


def ledger_id(job_id: str) -> str:
    """The ledger's ``id`` in the idempotency table (a prefix no durable step uses)."""
    return f"{step_key_prefix('budget')}#{job_id}"


def reservation_name(document_id: str, purpose: str) -> str:
    return f"{document_id}#{purpose}"


def estimate_reservation_nusd(model_id: str, input_chars: int, max_output_tokens: int) -> int:
    """What a call is reserved for: its input estimated from its size, and the most output it may produce."""
    input_tokens = min(MAX_INPUT_TOKENS, -(-input_chars // CHARS_PER_TOKEN))
    return spend.call_cost_nano(model_id, input_tokens, max_output_tokens)


@dataclass(frozen=True)
class LedgerTable:
    """Where the ledgers are: the functions' own client and table by default; the operator passes its own."""

    client: DynamoDBClient
    name: str
    ttl_seconds: int = 7 * 24 * 3600  # the idempotency records' default (IDEMPOTENCY_TTL_SECONDS)

    @classmethod
    def default(cls) -> LedgerTable:
        settings = get_settings()
        return cls(aws.dynamodb_client(), settings.idempotency_table_name, settings.idempotency_ttl_seconds)


def _key(job_id: str) -> dict[str, AttributeValueTypeDef]:
    return {"id": {"S": ledger_id(job_id)}}


def _n(value: int) -> AttributeValueTypeDef:
    return {"N": str(value)}


def _expiration(where: LedgerTable) -> AttributeValueTypeDef:
    return _n(int(time.time()) + where.ttl_seconds)


def _is_condition_failure(error: ClientError) -> bool:
    return error.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException"


def _create(job_id: str, budget_nusd: int, where: LedgerTable) -> None:
    """The job's ledger with its budget, unless it exists (a raised budget or another child's ledger)."""
    try:
        where.client.put_item(
            TableName=where.name,
            Item={
                **_key(job_id),
                "job_id": {"S": job_id},
                "budget_nusd": _n(budget_nusd),
                "spent_nusd": _n(0),
                "reserved_nusd": _n(0),
                "headroom_nusd": _n(budget_nusd),
                "settled_calls": _n(0),
                "reservations": {"M": {}},
                "expiration": _expiration(where),
            },
            ConditionExpression="attribute_not_exists(id)",
        )
    except ClientError as error:
        if not _is_condition_failure(error):
            raise


def read_ledger(job_id: str, where: LedgerTable | None = None) -> BudgetLedger | None:
    where = where or LedgerTable.default()
    item = where.client.get_item(TableName=where.name, Key=_key(job_id), ConsistentRead=True).get("Item")
    return None if item is None else parse_ledger(job_id, item)


def parse_ledger(job_id: str, item: Mapping[str, Any]) -> BudgetLedger:
    """The ledger item as a model (also what the operator reads)."""
    numbers = {name: int(value["N"]) for name, value in item.items() if "N" in value and name != "expiration"}
    reservations = {
        name: int(value["N"]) for name, value in item.get("reservations", {}).get("M", {}).items()
    }
    return BudgetLedger(
        job_id=job_id,
        **numbers,
        reservations=reservations,
        warned=item.get("warned", {}).get("BOOL", False),
        stopped=item.get("stopped", {}).get("S"),
    )


def reserve(
    job_id: str, name: str, amount_nusd: int, budget_usd: float, where: LedgerTable | None = None
) -> None:
    """Reserve ``amount_nusd`` for the call ``name`` (kept if it is already reserved: a retry). When the
    headroom is smaller: BudgetBusy (retried) while calls in flight hold reservations and the spent amount
    leaves room, else BudgetExceeded; no call either way."""
    where = where or LedgerTable.default()
    _create(job_id, spend.to_nano(budget_usd), where)
    try:
        where.client.update_item(
            TableName=where.name,
            Key=_key(job_id),
            UpdateExpression=(
                "SET headroom_nusd = headroom_nusd - :amount, reserved_nusd = reserved_nusd + :amount, "
                "reservations.#name = :amount, expiration = :expiration"
            ),
            ConditionExpression="attribute_not_exists(reservations.#name) AND headroom_nusd >= :amount",
            ExpressionAttributeNames={"#name": name},
            ExpressionAttributeValues={":amount": _n(amount_nusd), ":expiration": _expiration(where)},
        )
    except ClientError as error:
        if not _is_condition_failure(error):
            raise
    else:
        return
    ledger = read_ledger(job_id, where)
    if ledger is not None and name in ledger.reservations:
        return  # reserved by an earlier attempt of this call, which did not finish
    if ledger is not None and ledger.reservations and ledger.spent_nusd + amount_nusd <= ledger.budget_nusd:
        metrics.add_metric(name="BudgetWaits", unit=MetricUnit.Count, value=1)
        raise BudgetBusy(
            f"the call's reservation (${spend.to_usd(amount_nusd):.6f}) waits for the "
            f"{len(ledger.reservations)} call(s) in flight to settle (${ledger.reserved_usd:.6f} "
            f"reserved, ${ledger.spent_usd:.6f} spent of ${ledger.budget_usd:.4f})"
        )
    _refuse(job_id, ledger, amount_nusd, where)


def _mark(job_id: str, where: LedgerTable, name: str, value: AttributeValueTypeDef, condition: str) -> bool:
    """Set one attribute of the ledger on a condition; False when the condition did not hold."""
    try:
        where.client.update_item(
            TableName=where.name,
            Key=_key(job_id),
            UpdateExpression=f"SET {name} = :value",
            ConditionExpression=condition,
            ExpressionAttributeValues={":value": value},
        )
    except ClientError as error:
        if _is_condition_failure(error):
            return False
        raise
    return True


def _refuse(job_id: str, ledger: BudgetLedger | None, amount_nusd: int, where: LedgerTable) -> None:
    spent = ledger.spent_usd if ledger else 0.0
    reserved = ledger.reserved_usd if ledger else 0.0
    budget = ledger.budget_usd if ledger else 0.0
    message = (
        f"the next model call (reserved at ${spend.to_usd(amount_nusd):.6f}) would pass the job's budget of "
        f"${budget:.4f}: ${spent:.6f} spent, ${reserved:.6f} reserved by calls in flight. Raise it with "
        f"`docagent budget {job_id} --max-usd N`, then `docagent redrive {job_id}`"
    )
    _mark(job_id, where, "stopped", {"S": message}, "attribute_exists(id)")
    metrics.add_metric(name="BudgetStops", unit=MetricUnit.Count, value=1)
    logger.warning("budget exceeded: no model call", extra={"budget_usd": budget, "spent_usd": spent})
    raise BudgetExceeded(message)


def settle(
    job_id: str,
    name: str,
    actual_nusd: int,
    *,
    warn_share: float = DEFAULT_WARN_SHARE,
    where: LedgerTable | None = None,
) -> bool:
    """Replace the call's reservation by what it cost (0 for a call that did not finish). False when there was
    no reservation to settle (settled already, or the job has no budget): nothing is charged twice."""
    where = where or LedgerTable.default()
    ledger = read_ledger(job_id, where)
    reserved = None if ledger is None else ledger.reservations.get(name)
    if reserved is None:
        return False
    try:
        updated = where.client.update_item(
            TableName=where.name,
            Key=_key(job_id),
            UpdateExpression=(
                "SET headroom_nusd = headroom_nusd + :delta, reserved_nusd = reserved_nusd - :reserved, "
                "spent_nusd = spent_nusd + :actual, settled_calls = settled_calls + :calls "
                "REMOVE reservations.#name"
            ),
            ConditionExpression="reservations.#name = :reserved",
            ExpressionAttributeNames={"#name": name},
            ExpressionAttributeValues={
                ":delta": _n(reserved - actual_nusd),
                ":reserved": _n(reserved),
                ":actual": _n(actual_nusd),
                ":calls": _n(1 if actual_nusd else 0),
            },
            ReturnValues="ALL_NEW",
        )
    except ClientError as error:
        if _is_condition_failure(error):
            return False  # settled by a concurrent attempt of the same call
        raise
    item = updated.get("Attributes", {})
    spent, budget = int(item["spent_nusd"]["N"]), int(item["budget_nusd"]["N"])
    if not item.get("warned", {}).get("BOOL", False) and spent >= warn_share * budget:
        _warn_once(job_id, spent, budget, where)
    return True


def _warn_once(job_id: str, spent_nusd: int, budget_nusd: int, where: LedgerTable) -> None:
    """The alert at the warning share, once per job (the flag is set on condition that it is not)."""
    if not _mark(job_id, where, "warned", {"BOOL": True}, "attribute_not_exists(warned)"):
        return
    metrics.add_metric(name="BudgetWarnings", unit=MetricUnit.Count, value=1)
    logger.warning(
        "budget warning: spent passed the warning share",
        extra={"spent_usd": spend.to_usd(spent_nusd), "budget_usd": spend.to_usd(budget_nusd)},
    )


def set_budget(job_id: str, budget_usd: float, where: LedgerTable | None = None) -> BudgetLedger:
    """Raise (or lower) a job's budget: the headroom moves by the difference. Creates the ledger when the job
    made no call yet. The warning may go out again for the new budget."""
    where = where or LedgerTable.default()
    new = spend.to_nano(budget_usd)
    for _ in range(10):
        ledger = read_ledger(job_id, where)
        if ledger is None:
            _create(job_id, new, where)
            continue
        try:
            where.client.update_item(
                TableName=where.name,
                Key=_key(job_id),
                UpdateExpression=(
                    "SET budget_nusd = :new, headroom_nusd = headroom_nusd + :delta REMOVE warned, stopped"
                ),
                ConditionExpression="budget_nusd = :old",
                ExpressionAttributeValues={
                    ":new": _n(new),
                    ":old": _n(ledger.budget_nusd),
                    ":delta": _n(new - ledger.budget_nusd),
                },
            )
        except ClientError as error:
            if _is_condition_failure(error):
                continue  # another update in between: read again
            raise
        updated = read_ledger(job_id, where)
        assert updated is not None
        return updated
    raise RuntimeError(f"the budget of job {job_id} kept changing; try again")
