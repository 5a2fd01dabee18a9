"""``docagent reference load``: validated, batched, idempotent loads of the customers table (moto), and the
empty-table warning of ``start`` and ``preflight``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boto3
import pytest

from docagent import cli
from docagent.operator.context import OperatorContext
from docagent.operator.jobs import _reference_warnings
from docagent.operator.preflight import Preflight
from docagent.operator.reference import BATCH_SIZE, is_empty
from stacks import outputs as names
from stacks.config import DocAgentConfig
from tests.support import BUCKET, CUSTOMERS_TABLE

STATE_MACHINE = "arn:aws:states:us-east-1:123456789012:stateMachine:DocAgent-DocumentReview"


@pytest.fixture
def context(cloud, monkeypatch) -> OperatorContext:
    found = OperatorContext(
        endpoint=None,
        stack_name="DocAgent",
        outputs={
            names.BUCKET: BUCKET,
            names.STATE_MACHINE: STATE_MACHINE,
            names.CUSTOMERS_TABLE: CUSTOMERS_TABLE,
        },
        session=boto3.session.Session(),
    )
    monkeypatch.setattr(OperatorContext, "from_args", classmethod(lambda cls, args: found))
    return found


@pytest.fixture
def empty_table(context) -> str:
    dynamodb = boto3.client("dynamodb")
    dynamodb.delete_table(TableName=CUSTOMERS_TABLE)
    dynamodb.create_table(
        TableName=CUSTOMERS_TABLE,
        KeySchema=[{"AttributeName": "customer_id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "customer_id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    return CUSTOMERS_TABLE


def run(capsys, *argv: str) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()
    code = cli.main([*argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def items() -> dict[str, dict[str, Any]]:
    scanned = boto3.client("dynamodb").scan(TableName=CUSTOMERS_TABLE)["Items"]
    return {item["customer_id"]["S"]: {k: v["S"] for k, v in item.items()} for item in scanned}


def jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_a_csv_file_loads_every_row_and_a_rerun_leaves_the_same_table(empty_table, tmp_path, capsys):
    rows = [f"CUST-{n:05d},Customer {n},DE,gold\n" for n in range(1, 61)]
    path = tmp_path / "customers.csv"
    path.write_text("customer_id,name,country,tier\n" + "".join(rows) + "CUST-00999,No tier,FR,\n")
    code, out = run(capsys, "reference", "load", str(path))
    assert code == 0, out
    assert (out["rows"], out["written"], out["table_name"]) == (61, 61, CUSTOMERS_TABLE)
    assert 2 * BATCH_SIZE < 61, "more than two batches"
    loaded = items()
    assert loaded["CUST-00042"] == {
        "customer_id": "CUST-00042",
        "name": "Customer 42",
        "country": "DE",
        "tier": "gold",
    }
    assert loaded["CUST-00999"] == {"customer_id": "CUST-00999", "name": "No tier", "country": "FR"}
    assert run(capsys, "reference", "load", str(path), "--table", "customers")[0] == 0
    assert items() == loaded


def test_json_lines_load_and_a_changed_row_replaces_the_item(empty_table, tmp_path, capsys):
    path = jsonl(tmp_path / "c.jsonl", [{"customer_id": "ACME-1", "name": "Acme"}])
    assert run(capsys, "reference", "load", str(path))[0] == 0
    jsonl(path, [{"customer_id": "ACME-1", "name": "Acme Corp", "tier": "silver"}])
    assert run(capsys, "reference", "load", str(path))[0] == 0
    assert items() == {"ACME-1": {"customer_id": "ACME-1", "name": "Acme Corp", "tier": "silver"}}


@pytest.mark.parametrize(
    ("row", "says"),
    [
        ({"customer_id": "cust 1", "name": "x"}, "customer_id"),
        ({"customer_id": "CUST-1"}, "name"),
        ({"customer_id": "CUST-1", "name": "x", "nmae": "typo"}, "nmae"),
        ({"customer_id": "CUST-1", "name": ""}, "name"),
    ],
)
def test_a_bad_row_refuses_the_file_names_its_line_and_writes_nothing(
    empty_table, tmp_path, capsys, row, says
):
    path = jsonl(tmp_path / "c.jsonl", [{"customer_id": "GOOD-1", "name": "Good"}, row])
    code, out = run(capsys, "reference", "load", str(path))
    assert code == 2
    assert out["error_type"] == "InvalidReferenceData"
    assert out["errors"][0]["line"] == 2 and says in out["errors"][0]["message"], out
    assert "nothing written" in out["error"]
    assert items() == {}


def test_a_duplicate_id_not_json_and_a_wrong_format_are_refused(empty_table, tmp_path, capsys):
    path = tmp_path / "c.jsonl"
    path.write_text('{"customer_id": "A-1", "name": "a"}\n{oops\n{"customer_id": "A-1", "name": "b"}\n')
    code, out = run(capsys, "reference", "load", str(path))
    assert code == 2
    assert [error["line"] for error in out["errors"]] == [2, 3]
    assert "not JSON" in out["errors"][0]["message"] and "first on line 1" in out["errors"][1]["message"]
    other = tmp_path / "c.xlsx"
    other.write_bytes(b"x")
    assert run(capsys, "reference", "load", str(other))[0] == 2
    assert run(capsys, "reference", "load", str(tmp_path / "missing.csv"))[0] == 3
    assert items() == {}


def test_unprocessed_items_are_sent_again(empty_table, context, tmp_path, capsys):
    real = context.client("dynamodb")

    class Throttling:
        """Leaves the last item of each first BatchWriteItem unprocessed, as DynamoDB does when throttled."""

        def __init__(self) -> None:
            self.calls = 0

        def batch_write_item(self, RequestItems: dict[str, Any]) -> dict[str, Any]:  # noqa: N803
            self.calls += 1
            ((table, requests),) = RequestItems.items()
            if self.calls == 1:
                real.batch_write_item(RequestItems={table: requests[:-1]})
                return {"UnprocessedItems": {table: requests[-1:]}}
            return dict(real.batch_write_item(RequestItems=RequestItems))

    fake = Throttling()
    context._clients["dynamodb"] = fake
    path = jsonl(tmp_path / "c.jsonl", [{"customer_id": f"T-{n}", "name": "t"} for n in range(3)])
    assert run(capsys, "reference", "load", str(path))[0] == 0
    assert fake.calls == 2
    assert sorted(items()) == ["T-0", "T-1", "T-2"]


def test_is_empty_reads_one_item(context, empty_table):
    dynamodb = boto3.client("dynamodb")
    assert is_empty(dynamodb, CUSTOMERS_TABLE) is True
    dynamodb.put_item(TableName=CUSTOMERS_TABLE, Item={"customer_id": {"S": "A-1"}, "name": {"S": "a"}})
    assert is_empty(dynamodb, CUSTOMERS_TABLE) is False


def test_preflight_warns_about_an_empty_customers_table(context, empty_table):
    def check() -> Any:
        preflight = Preflight(
            DocAgentConfig(),
            boto3.client,
            region="us-east-1",
            on_aws=False,
            invoke=False,
            local_outputs=context.outputs,
        )
        return preflight.reference_data()

    found = check()
    assert (found.status, found.fix) == ("warn", "docagent reference load FILE")
    assert "UnknownCustomer" in found.detail
    boto3.client("dynamodb").put_item(
        TableName=CUSTOMERS_TABLE, Item={"customer_id": {"S": "A-1"}, "name": {"S": "a"}}
    )
    assert check().status == "ok"


def test_start_warns_before_a_job_when_the_customers_table_is_empty(context, empty_table):
    warnings = _reference_warnings(context)
    assert len(warnings) == 1 and "docagent reference load FILE --table customers" in warnings[0]
    put = {"customer_id": {"S": "A-1"}, "name": {"S": "a"}}
    boto3.client("dynamodb").put_item(TableName=CUSTOMERS_TABLE, Item=put)
    assert _reference_warnings(context) == []
    boto3.client("dynamodb").delete_table(TableName=CUSTOMERS_TABLE)
    assert _reference_warnings(context) == ["could not check the customers table (ResourceNotFoundException)"]
