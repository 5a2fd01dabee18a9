"""The unit tests' cloud restored from a copy (tests/moto_state.py) answers as the cloud built through the
APIs does, and what one test writes into it never reaches the next."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from functions import aws
from tests.moto_state import build_once
from tests.support import BUCKET, IDEMPOTENCY_TABLE, REFERENCE_TABLE
from tests.unit.conftest import create_stack_resources, fresh_mock


def answers() -> dict[str, Any]:
    """What the cloud's resources hold, read through the APIs: every object with its body, every item of
    both tables, the idempotency table's time to live."""
    s3 = aws.s3_client()
    dynamodb = aws.dynamodb_client()
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET).get("Contents", [])]
    return {
        "objects": {key: s3.get_object(Bucket=BUCKET, Key=key)["Body"].read() for key in keys},
        "tables": sorted(dynamodb.list_tables()["TableNames"]),
        "items": {
            table: sorted(map(repr, dynamodb.scan(TableName=table)["Items"]))
            for table in (REFERENCE_TABLE, IDEMPOTENCY_TABLE)
        },
        "ttl": dynamodb.describe_time_to_live(TableName=IDEMPOTENCY_TABLE)["TimeToLiveDescription"],
    }


def test_a_restored_cloud_holds_what_the_built_one_held_and_nothing_a_test_wrote(
    env: pytest.MonkeyPatch,
) -> None:
    # An environment of this test's own: the first build_once below builds, whatever ran before.
    env.setenv("DOCAGENT_TEST_MOTO_STATE", uuid.uuid4().hex)
    with fresh_mock():
        build_once("cloud", create_stack_resources)
        built = answers()
        aws.s3_client().put_object(Bucket=BUCKET, Key="stray.json", Body=b"{}")
        key = {"table": {"S": "customers"}, "key": {"S": "CUST-00001"}}
        aws.dynamodb_client().delete_item(TableName=REFERENCE_TABLE, Key=key)
        assert answers() != built
    assert len(built["items"][REFERENCE_TABLE]) == 50
    assert built["objects"]
    with fresh_mock():
        build_once("cloud", create_stack_resources)  # a restore: the copy was taken before the writes
        assert answers() == built
