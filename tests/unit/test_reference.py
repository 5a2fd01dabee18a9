"""``docagent reference load FILE --table NAME --key FIELD``: validated, batched, idempotent loads of one
reference table into the deployment's one reference table (moto), and the empty-table warnings of ``start``
and ``preflight`` per lookup table of the definition."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boto3
import pytest

from docagent import cli
from docagent.drills.synthetic import CUSTOMERS_CSV, CUSTOMERS_KEY, generate_customers
from docagent.kit import registry
from docagent.kit.loader import read_bundle
from docagent.operations.context import OperatorContext
from docagent.operations.preflight import Preflight
from docagent.operations.reference import BATCH_SIZE, is_empty, read_rows
from docagent.operations.sessions import new_session
from docagent.operations.start_job import _reference_warnings
from stacks import outputs as names
from stacks.config import DocAgentConfig
from tests.moto_state import build_once
from tests.support import BUCKET, EXAMPLES, REFERENCE_TABLE, unpublish_definitions

STATE_MACHINE = "arn:aws:states:us-east-1:123456789012:stateMachine:DocAgent-DocumentReview"


@pytest.fixture
def context(cloud, monkeypatch) -> OperatorContext:
    found = OperatorContext(
        endpoint=None,
        stack_name="DocAgent",
        outputs={
            names.BUCKET: BUCKET,
            names.STATE_MACHINE: STATE_MACHINE,
            names.REFERENCE_TABLE: REFERENCE_TABLE,
        },
        session=new_session(),
    )
    monkeypatch.setattr(OperatorContext, "from_args", classmethod(lambda cls, args: found))
    return found


@pytest.fixture
def empty_table(context) -> str:
    """The reference table without the customers the test environment loads, and no definition published:
    emptied through the APIs once per process, then restored (tests/moto_state.py)."""

    def empty() -> None:
        unpublish_definitions()
        dynamodb = boto3.client("dynamodb")
        for item in dynamodb.scan(TableName=REFERENCE_TABLE)["Items"]:
            dynamodb.delete_item(TableName=REFERENCE_TABLE, Key={"table": item["table"], "key": item["key"]})

    build_once("reference.empty_table", empty)
    return REFERENCE_TABLE


def run(capsys, *argv: str) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()
    code = cli.main([*argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def load(
    capsys, path: Path, table: str = "customers", key: str = "customer_id"
) -> tuple[int, dict[str, Any]]:
    return run(capsys, "reference", "load", str(path), "--table", table, "--key", key)


def items(table: str = "customers") -> dict[str, dict[str, Any]]:
    """The rows of one reference table by key, their attributes as plain values (the keys left out)."""
    found = boto3.client("dynamodb").query(
        TableName=REFERENCE_TABLE,
        KeyConditionExpression="#t = :t",
        ExpressionAttributeNames={"#t": "table"},
        ExpressionAttributeValues={":t": {"S": table}},
    )["Items"]
    return {
        item["key"]["S"]: {
            name: next(iter(value.values())) for name, value in item.items() if name not in {"table", "key"}
        }
        for item in found
    }


def jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_a_csv_file_loads_every_row_and_a_rerun_leaves_the_same_table(empty_table, tmp_path, capsys):
    rows = [f"CUST-{n:05d},Customer {n},DE,gold\n" for n in range(1, 61)]
    path = tmp_path / "customers.csv"
    path.write_text("customer_id,name,country,tier\n" + "".join(rows) + "CUST-00999,No tier,FR,\n")
    code, out = load(capsys, path)
    assert code == 0, out
    assert (out["rows"], out["written"], out["table_name"], out["table"]) == (
        61,
        61,
        REFERENCE_TABLE,
        "customers",
    )
    assert 2 * BATCH_SIZE < 61, "more than two batches"
    loaded = items()
    assert loaded["CUST-00042"] == {
        "customer_id": "CUST-00042",
        "name": "Customer 42",
        "country": "DE",
        "tier": "gold",
    }
    assert loaded["CUST-00999"] == {"customer_id": "CUST-00999", "name": "No tier", "country": "FR"}
    assert load(capsys, path)[0] == 0
    assert items() == loaded


def test_tables_live_side_by_side_and_a_changed_row_replaces_the_item(empty_table, tmp_path, capsys):
    path = jsonl(tmp_path / "c.jsonl", [{"customer_id": "ACME-1", "name": "Acme"}])
    assert load(capsys, path)[0] == 0
    jsonl(path, [{"customer_id": "ACME-1", "name": "Acme Corp", "tier": "silver"}])
    assert load(capsys, path)[0] == 0
    policies = jsonl(tmp_path / "p.jsonl", [{"policy": 9001, "holder": "Rowe", "limit": 2500.5}])
    assert load(capsys, policies, "policies", "policy")[0] == 0
    assert items() == {"ACME-1": {"customer_id": "ACME-1", "name": "Acme Corp", "tier": "silver"}}
    assert items("policies") == {"9001": {"policy": "9001", "holder": "Rowe", "limit": "2500.5"}}


@pytest.mark.parametrize(
    ("row", "says"),
    [
        ({"name": "x"}, "customer_id: missing"),
        ({"customer_id": "", "name": "x"}, "customer_id: missing"),
        ({"customer_id": {"a": 1}}, "a key is text or a number"),
        ({"customer_id": "C-1", "table": "x"}, "table: the reference table's own keys"),
        ({"customer_id": "C-1", "key": "x"}, "key: the reference table's own keys"),
        ({"customer_id": "C" * 1025}, "longer than 1024 bytes"),
    ],
)
def test_a_bad_row_refuses_the_file_names_its_line_and_writes_nothing(
    empty_table, tmp_path, capsys, row, says
):
    path = jsonl(tmp_path / "c.jsonl", [{"customer_id": "GOOD-1", "name": "Good"}, row])
    code, out = load(capsys, path)
    assert code == 2
    assert out["error_type"] == "InvalidReferenceData"
    assert out["errors"][0]["line"] == 2 and says in out["errors"][0]["message"], out
    assert "nothing written" in out["error"]
    assert items() == {}


def test_a_duplicate_key_not_json_a_bad_name_and_a_wrong_format_are_refused(empty_table, tmp_path, capsys):
    path = tmp_path / "c.jsonl"
    path.write_text('{"customer_id": "A-1", "name": "a"}\n{oops\n{"customer_id": "A-1", "name": "b"}\n')
    code, out = load(capsys, path)
    assert code == 2
    assert [error["line"] for error in out["errors"]] == [2, 3]
    assert "not JSON" in out["errors"][0]["message"] and "first on line 1" in out["errors"][1]["message"]
    good = jsonl(tmp_path / "good.jsonl", [{"customer_id": "A-1"}])
    code, out = load(capsys, good, table="Not A Name")
    assert (code, out["error_type"]) == (2, "InvalidReferenceData") and "--table" in out["error"]
    other = tmp_path / "c.xlsx"
    other.write_bytes(b"x")
    assert load(capsys, other)[0] == 2
    assert load(capsys, tmp_path / "missing.csv")[0] == 3
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
    assert load(capsys, path)[0] == 0
    assert fake.calls == 2
    assert sorted(items()) == ["T-0", "T-1", "T-2"]


def test_is_empty_reads_one_table(context, empty_table, tmp_path, capsys):
    dynamodb = boto3.client("dynamodb")
    assert is_empty(dynamodb, REFERENCE_TABLE, "customers") is True
    assert load(capsys, jsonl(tmp_path / "p.jsonl", [{"policy": "P-1"}]), "policies", "policy")[0] == 0
    assert is_empty(dynamodb, REFERENCE_TABLE, "customers") is True, "another table's rows are not its rows"
    assert is_empty(dynamodb, REFERENCE_TABLE, "policies") is False


def publish_invoices() -> None:
    """The invoice example published as `docagent definition publish` stores it (bundle, then pointer)."""
    registry.publish(boto3.client("s3"), BUCKET, read_bundle(EXAMPLES / "invoices"))


class InvoicesByDefault(DocAgentConfig):
    default_definition: str = "invoices"


def test_preflight_warns_about_each_empty_lookup_table_of_the_default_definition(
    context, empty_table, tmp_path, capsys
):
    def check() -> Any:
        preflight = Preflight(
            InvoicesByDefault(),
            boto3.client,
            region="us-east-1",
            on_aws=False,
            invoke=False,
            local_outputs=context.outputs,
        )
        return preflight.reference_data()

    assert check().detail == "skipped: definition invoices is not published"
    publish_invoices()
    found = check()
    assert (found.status, found.fix) == ("warn", "docagent reference load FILE --table TABLE --key FIELD")
    assert "reference table customers is empty" in found.detail and "invoice.known-customer" in found.detail
    assert load(capsys, jsonl(tmp_path / "c.jsonl", [{"customer_id": "A-1"}]))[0] == 0
    assert (check().status, check().detail) == (
        "ok",
        "definition invoices: lookup tables with rows: customers",
    )


def test_start_warns_before_a_job_when_a_lookup_table_is_empty(context, empty_table, tmp_path, capsys):
    request = {"definition": "invoices"}
    assert _reference_warnings(context, request) == [], "an unpublished definition is PrepareJob's refusal"
    publish_invoices()
    warnings = _reference_warnings(context, request)
    assert len(warnings) == 1
    assert "docagent reference load FILE --table customers --key FIELD" in warnings[0]
    assert load(capsys, jsonl(tmp_path / "c.jsonl", [{"customer_id": "A-1"}]))[0] == 0
    assert _reference_warnings(context, request) == []
    boto3.client("dynamodb").delete_table(TableName=REFERENCE_TABLE)
    assert _reference_warnings(context, request) == [
        "could not check the reference tables of definition invoices (ResourceNotFoundException)"
    ]


def test_the_invoice_examples_customers_are_the_synthetic_customers():
    """The drills generate invoices for generate_customers(); examples/invoices/references/customers.csv
    must hold exactly those rows (reference load reads the file the drills load)."""
    rows, errors = read_rows(CUSTOMERS_CSV, CUSTOMERS_KEY)
    assert errors == []
    expected = [customer.model_dump(exclude_none=True) for customer in generate_customers()]
    assert [row.attributes for row in rows] == expected
