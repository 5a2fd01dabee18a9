"""``docagent reference load FILE [--table customers]``: the reference data a job checks documents against.

``cdk deploy`` creates the customers table empty, and ProcessDocument rejects every document whose customer
is not in it (``UnknownCustomer``). This command fills it from a CSV file (a header row) or JSON Lines (one
object a line), locally or on AWS (``--aws``):

- every row is validated first (``CustomerRow``); one bad row refuses the whole file (exit 2, each bad line
  named) and nothing is written;
- a customer id twice in the file is a bad row (which one would win is not the deployer's intent);
- rows are written with BatchWriteItem, 25 at a time, unprocessed items retried with backoff; a re-run writes
  the same items again (PutItem replaces an item by its key), so loading twice leaves the same table.

``table_is_empty`` is the check ``start`` and ``preflight`` warn with (one Scan with Limit=1).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from boto3.dynamodb.types import TypeSerializer
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from docagent.operator.context import (
    EXIT_BAD_REQUEST,
    EXIT_NOT_FOUND,
    EXIT_OK,
    OperatorContext,
    OperatorError,
    command,
    emit,
    target_arguments,
)
from docagent.operator.formats import wide_console
from stacks import outputs as names

# The invoice example's customer ids (moved out of functions/models.py; kit-cli makes this command generic).
CUSTOMER_ID_PATTERN = r"^[A-Z0-9][A-Z0-9-]{0,39}$"

# Reference tables by the name the command takes -> the stack output naming the table.
TABLES = {"customers": names.CUSTOMERS_TABLE}
# BatchWriteItem takes at most 25 put requests (as of 2026-12, DynamoDB API reference "BatchWriteItem").
BATCH_SIZE = 25
MAX_UNPROCESSED_ROUNDS = 8
MAX_ERRORS_SHOWN = 20


class CustomerRow(BaseModel):
    """A customers-table row as the deployer writes it: the id in the form the model extracts (an id in
    another form could never be found), a name, and nothing the table's reader would ignore."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    customer_id: str = Field(pattern=CUSTOMER_ID_PATTERN)
    name: str = Field(min_length=1, max_length=400)
    country: str | None = Field(None, max_length=100)
    tier: str | None = Field(None, max_length=100)


@dataclass(frozen=True)
class RowError:
    line: int
    message: str


def _raw_rows(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, parsed row) of a CSV or JSON Lines file; a CSV's empty cells are absent values."""
    text = path.read_text(encoding="utf-8-sig")
    if path.suffix.lower() in {".jsonl", ".ndjson", ".json"}:
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    yield number, json.loads(line)
                except json.JSONDecodeError as error:
                    yield number, error
        return
    if path.suffix.lower() != ".csv":
        raise OperatorError(f"{path}: expected a .csv or .jsonl file (JSON Lines: one object a line)")
    reader = csv.DictReader(io.StringIO(text))
    for row in reader:
        yield reader.line_num, {key: value for key, value in row.items() if value not in (None, "")}


def _message(error: ValidationError | json.JSONDecodeError | str) -> str:
    if isinstance(error, str):
        return error
    if isinstance(error, json.JSONDecodeError):
        return f"not JSON: {error.msg}"
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "row"
    return f"{where}: {first['msg']}"


def read_rows(path: Path) -> tuple[list[CustomerRow], list[RowError]]:
    """Every row validated: the good rows and the errors by line (nothing is written when there are any)."""
    if not path.is_file():
        raise OperatorError(f"{path}: no such file", EXIT_NOT_FOUND)
    rows: list[CustomerRow] = []
    errors: list[RowError] = []
    seen: dict[str, int] = {}
    for line, raw in _raw_rows(path):
        if isinstance(raw, json.JSONDecodeError):
            errors.append(RowError(line, _message(raw)))
            continue
        if not isinstance(raw, dict):
            errors.append(RowError(line, "not an object"))
            continue
        try:
            row = CustomerRow.model_validate(raw)
        except ValidationError as error:
            errors.append(RowError(line, _message(error)))
            continue
        if row.customer_id in seen:
            errors.append(
                RowError(line, f"customer_id {row.customer_id} again (first on line {seen[row.customer_id]})")
            )
            continue
        seen[row.customer_id] = line
        rows.append(row)
    return rows, errors


def write_rows(ctx: OperatorContext, table_name: str, rows: list[CustomerRow]) -> int:
    """BatchWriteItem in batches of 25; unprocessed items (throttling) are sent again with backoff."""
    dynamodb = ctx.client("dynamodb")
    serializer = TypeSerializer()
    written = 0
    for start in range(0, len(rows), BATCH_SIZE):
        batch = rows[start : start + BATCH_SIZE]
        requests: list[dict[str, Any]] = [
            {
                "PutRequest": {
                    "Item": {
                        key: serializer.serialize(value)
                        for key, value in row.model_dump(exclude_none=True).items()
                    }
                }
            }
            for row in batch
        ]
        for attempt in range(MAX_UNPROCESSED_ROUNDS):
            response = dynamodb.batch_write_item(RequestItems={table_name: requests})
            requests = response.get("UnprocessedItems", {}).get(table_name, [])
            if not requests:
                break
            time.sleep(min(5.0, 0.1 * 2**attempt))
        else:
            raise OperatorError(
                f"DynamoDB left {len(requests)} items unprocessed after {MAX_UNPROCESSED_ROUNDS} rounds "
                f"({written} written): run the same command again (it is idempotent)"
            )
        written += len(batch)
    return written


def is_empty(dynamodb: Any, table_name: str) -> bool:
    """One Scan with Limit=1: reads at most one item, whatever the table's size."""
    found = dynamodb.scan(TableName=table_name, Limit=1, Select="COUNT")
    return int(found.get("Count", 0)) == 0


def table_is_empty(ctx: OperatorContext, table: str = "customers") -> bool | None:
    """True when the table has no item; None when the stack has no such table."""
    name = ctx.outputs.get(TABLES[table])
    return None if not name else is_empty(ctx.client("dynamodb"), name)


def empty_table_warning(table: str = "customers") -> str:
    return (
        f"the {table} table is empty: every document will be rejected UnknownCustomer. Load it first: "
        f"docagent reference load FILE --table {table} (README: Deploying to your account)"
    )


@command
def cmd_reference_load(args: argparse.Namespace) -> int:
    path = Path(args.file)
    rows, errors = read_rows(path)
    if errors:
        shown = errors[:MAX_ERRORS_SHOWN]
        more = len(errors) - len(shown)
        lines = "; ".join(f"line {error.line}: {error.message}" for error in shown)
        raise OperatorError(
            f"{path}: {len(errors)} bad row{'s' if len(errors) != 1 else ''}, nothing written: {lines}"
            + (f" (and {more} more)" if more else ""),
            EXIT_BAD_REQUEST,
            "InvalidReferenceData",
            {"errors": [{"line": error.line, "message": error.message} for error in errors]},
        )
    if not rows:
        raise OperatorError(f"{path}: no rows", EXIT_BAD_REQUEST, "InvalidReferenceData")
    ctx = OperatorContext.from_args(args)
    table_name = ctx.output(TABLES[args.table])
    written = write_rows(ctx, table_name, rows)
    payload = {
        "table": args.table,
        "table_name": table_name,
        "file": str(path),
        "rows": len(rows),
        "written": written,
    }
    emit(
        args,
        payload,
        lambda: wide_console().print(
            f"{written} {args.table} rows written to {table_name} ({ctx.where}) from {path}", markup=False
        ),
    )
    return EXIT_OK


def register(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    common: argparse.ArgumentParser,
) -> None:
    reference = commands.add_parser("reference", help="reference data the jobs check against")
    actions = reference.add_subparsers(dest="reference_command", required=True)
    load = actions.add_parser(
        "load",
        parents=[common, target_arguments()],
        help="load rows from a CSV (header row) or JSON Lines file into a reference table (idempotent)",
    )
    load.add_argument(
        "file", metavar="FILE", help="a .csv or .jsonl file; customers: customer_id, name, country, tier"
    )
    load.add_argument(
        "--table", choices=sorted(TABLES), default="customers", help="the table (default customers)"
    )
    load.set_defaults(handler=cmd_reference_load)
