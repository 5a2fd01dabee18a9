"""A DynamoDB condition expression is lexed once a process (docagent/localcloud/condition_lexing.py), and
moto decides each conditional request as before: with its own values; a refused text, refused every time."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws
from moto.dynamodb.comparisons import ConditionExpressionParser

from docagent.localcloud import condition_lexing

# Powertools' idempotency record put (aws_lambda_powertools/utilities/idempotency/persistence/dynamodb.py)
CONDITION = (
    "attribute_not_exists(#id) OR #expiry < :now OR (#status = :inprogress AND "
    "attribute_exists(#in_progress_expiry) AND #in_progress_expiry < :now_in_millis)"
)
NAMES = {
    "#id": "id",
    "#expiry": "expiration",
    "#status": "status",
    "#in_progress_expiry": "in_progress_expiration",
}


def texts_given_to_moto(
    monkeypatch: pytest.MonkeyPatch, patch: Any, *, moto: str, cache: Any, method: str, replacement: Any
) -> Iterator[list[str]]:
    """A patch of ``ConditionExpressionParser.method`` installed (undone after the test), its ``cache`` empty
    before and after, with each text the patch hands to moto's own function (``patch.<moto>``)."""
    given: list[str] = []
    real = getattr(patch, moto)

    def counting(parser: ConditionExpressionParser) -> Any:
        given.append(str(parser.condition_expression))
        return real(parser)

    cache.cache_clear()
    monkeypatch.setattr(patch, moto, counting)
    monkeypatch.setattr(ConditionExpressionParser, method, replacement)
    yield given
    cache.cache_clear()


@pytest.fixture
def lexed_once(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """condition_lexing installed, with each text the real lexer is given."""
    yield from texts_given_to_moto(
        monkeypatch,
        condition_lexing,
        moto="_moto_lex",
        cache=condition_lexing._tokens,
        method="_lex_condition_expression",
        replacement=condition_lexing._lex_condition_expression,
    )


def records_table() -> Any:
    """A DynamoDB client (inside ``mock_aws``) with the idempotency table ``records`` keyed by ``id``."""
    client = boto3.client("dynamodb", region_name="us-east-1")
    client.create_table(
        TableName="records",
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    return client


def put(table: Any, now: int, status: str = "INPROGRESS") -> str:
    """Powertools' conditional put of an idempotency record at ``now``: "put" or the refusal's code."""
    try:
        table.put_item(
            TableName="records",
            Item={"id": {"S": "step"}, "status": {"S": status}, "expiration": {"N": str(now + 10)}},
            ConditionExpression=CONDITION,
            ExpressionAttributeNames=NAMES,
            ExpressionAttributeValues={
                ":now": {"N": str(now)},
                ":inprogress": {"S": "INPROGRESS"},
                ":now_in_millis": {"N": str(now * 1000)},
            },
        )
    except ClientError as refused:
        return str(refused.response["Error"]["Code"])
    return "put"


def test_a_condition_is_lexed_once_and_each_request_decided_with_its_values(lexed_once: list[str]) -> None:
    with mock_aws():
        client = records_table()
        decided = [
            put(client, now=100),  # no record yet
            put(client, now=105),  # the record (expiring at 110) is live
            put(client, now=111),  # expired: taken again
            put(client, now=115, status="COMPLETED"),  # live again (expiring at 121)
        ]
        for _ in range(2):  # a text moto cannot lex (moto raises, mock_aws lets it through): every time
            with pytest.raises(ValueError, match="Cannot parse condition starting at"):
                client.put_item(
                    TableName="records", Item={"id": {"S": "x"}}, ConditionExpression="attribute_exists(id) $"
                )
    assert decided == ["put", "ConditionalCheckFailedException", "put", "ConditionalCheckFailedException"]
    assert lexed_once.count(CONDITION) == 1
    assert lexed_once.count("attribute_exists(id) $") == 2
