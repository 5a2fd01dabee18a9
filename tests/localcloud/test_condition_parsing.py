"""A request's condition expression is parsed once, not twice (docagent/localcloud/condition_parsing.py):
moto decides each conditional put and update as unpatched moto does, with each request's own values, and
a refused text or request is refused every time with moto's error."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError
from moto import mock_aws
from moto.dynamodb.comparisons import ConditionExpressionParser

from docagent.localcloud import condition_parsing
from tests.localcloud.test_condition_lexing import CONDITION, put, records_table, texts_given_to_moto

BROKEN = "attribute_exists(id) AND"


@pytest.fixture
def moto_parses(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """condition_parsing installed, with each text moto's own parse is given."""
    yield from texts_given_to_moto(
        monkeypatch,
        condition_parsing,
        moto="_moto_parse",
        cache=condition_parsing._parsed,
        method="parse",
        replacement=condition_parsing._parse,
    )


def refused(call: Any, **request: Any) -> str:
    try:
        call(TableName="records", **request)
    except ClientError as error:
        return f"{error.response['Error']['Code']}: {error.response['Error']['Message']}"
    return "done"


def story() -> list[Any]:
    """Powertools' conditional puts at moving times, conditional updates, refused requests; then the table."""
    client = records_table()
    decided: list[Any] = [
        put(client, now=100),  # no record yet
        put(client, now=105),  # the record (expiring at 110) is live
        put(client, now=111),  # expired: taken again
        put(client, now=115, status="COMPLETED"),  # live again (expiring at 121)
    ]
    for status in ("COMPLETED", "INPROGRESS"):  # an update only while the record is in progress
        decided.append(
            refused(
                client.update_item,
                Key={"id": {"S": "step"}},
                UpdateExpression="SET #status = :done",
                ConditionExpression="#status = :status",
                ExpressionAttributeNames={"#status": "status"},
                ExpressionAttributeValues={":done": {"S": "COMPLETED"}, ":status": {"S": status}},
            )
        )
    for _ in range(
        2
    ):  # refused by moto's parse (a reserved word; a broken text, which moto raises): every time
        decided.append(
            refused(
                client.put_item,
                Item={"id": {"S": "x"}},
                ConditionExpression="status = :s",
                ExpressionAttributeValues={":s": {"S": "x"}},
            )
        )
        with pytest.raises(ValueError, match="Bad AND expression"):
            client.put_item(TableName="records", Item={"id": {"S": "x"}}, ConditionExpression=BROKEN)
    decided.append(client.scan(TableName="records")["Items"])
    return decided


def test_requests_are_decided_as_moto_decides_them_with_one_parse_each(moto_parses: list[str]) -> None:
    with mock_aws():
        patched = story()
    assert moto_parses.count(CONDITION) == 4  # four puts, each with its own values: one parse each, not two
    assert moto_parses.count(BROKEN) == 2 and moto_parses.count("status = :s") == 2  # refused each time
    with mock_aws(), pytest.MonkeyPatch.context() as unpatched:
        unpatched.setattr(ConditionExpressionParser, "parse", condition_parsing._moto_parse)
        assert story() == patched
    assert patched[:4] == ["put", "ConditionalCheckFailedException", "put", "ConditionalCheckFailedException"]
    assert patched[4:6] == [
        "ConditionalCheckFailedException: The conditional request failed",
        "done",
    ]  # it was INPROGRESS
    assert (
        patched[6:8]
        == [
            "ValidationException: Invalid ConditionExpression: Attribute name is a reserved keyword; "
            "reserved keyword: status"
        ]
        * 2
    )
    assert patched[-1] == [{"id": {"S": "step"}, "status": {"S": "COMPLETED"}, "expiration": {"N": "121"}}]
