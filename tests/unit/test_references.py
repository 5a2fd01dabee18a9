"""functions/checks/references.py: one table of every reference table, read by (table, key)."""

from __future__ import annotations

import boto3

from functions.checks import references
from tests.support import REFERENCE_TABLE


def test_a_row_is_read_by_table_and_key_without_its_keys(cloud: None) -> None:
    boto3.client("dynamodb").put_item(
        TableName=REFERENCE_TABLE,
        Item={
            "table": {"S": "policies"},
            "key": {"S": "P-1"},
            "holder": {"S": "Ada"},
            "limit": {"N": "1500"},
            "rate": {"N": "0.25"},
            "active": {"BOOL": True},
            "tags": {"SS": ["b", "a"]},
        },
    )
    assert references.lookup("policies", "P-1") == {
        "active": True, "holder": "Ada", "limit": 1500, "rate": 0.25, "tags": ["a", "b"],
    }  # fmt: skip
    assert references.lookup("policies", "P-2") is None
    assert references.lookup("other", "P-1") is None  # another table's rows are not this one's
    assert references.lookup("customers", "CUST-00001") is not None  # the fixture's customers
