"""``docagent reference load FILE --table NAME --key FIELD``: the rows a definition's lookup checks find.

One DynamoDB table holds every reference table of every job definition (stacks/storage.py ReferenceTable):
partition key ``table`` (the reference table's name, as a lookup check names it), sort key ``key`` (the value
looked up: the row's FIELD), the row's attributes beside them (functions/checks/references.py reads them).
``cdk deploy`` creates it empty; a lookup check of an empty table fails for every document. This command fills
one reference table from a CSV file (a header row) or JSON Lines (one object a line), locally or on AWS
(``--aws``):

- every row is validated first: an object with FIELD (text, or a number written as text) and no attribute
  named ``table`` or ``key`` (the table's own keys); one bad row refuses the whole file (exit 2, each bad
  line named) and nothing is written;
- a key twice in the file is a bad row (which one would win is not the deployer's intent);
- rows are written with BatchWriteItem, 25 at a time, unprocessed items retried with backoff; a re-run writes
  the same items again (PutItem replaces an item by its keys), so loading twice leaves the same table.

``reference_warnings`` is what ``start`` and ``preflight`` warn with: each lookup table of the definition
that holds no row (one Query with Limit=1 per table).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from boto3.dynamodb.types import TypeSerializer

from docagent.operations.context import (
    EXIT_BAD_REQUEST,
    EXIT_NOT_FOUND,
    EXIT_OK,
    OperatorContext,
    OperatorError,
    command,
    emit,
    target_arguments,
)
from docagent.operations.display import wide_console
from functions.definition.job_spec import DefinitionBundle, LookupCheck
from functions.definition.spec_base import NAME_PATTERN, NAME_RULE
from stacks import outputs as names

# The reference table's own keys (functions/checks/references.py): no row may carry an attribute of these
# names.
TABLE_ATTRIBUTE = "table"
KEY_ATTRIBUTE = "key"
# A sort key value is at most 1024 bytes (as of 2026-12, DynamoDB developer guide, "Service, account, and
# table quotas": "The maximum length of a sort key value is 1024 bytes").
MAX_KEY_BYTES = 1024
_FIELD = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,254}$")
# BatchWriteItem takes at most 25 put requests (as of 2026-12, DynamoDB API reference "BatchWriteItem").
BATCH_SIZE = 25
MAX_UNPROCESSED_ROUNDS = 8
MAX_ERRORS_SHOWN = 20


@dataclass(frozen=True)
class ReferenceRow:
    """One row of a reference table: the looked-up value and every attribute of the row (FIELD included)."""

    key: str
    attributes: dict[str, Any]


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
                    yield number, json.loads(line, parse_float=Decimal)
                except json.JSONDecodeError as error:
                    yield number, error
        return
    if path.suffix.lower() != ".csv":
        raise OperatorError(f"{path}: expected a .csv or .jsonl file (JSON Lines: one object a line)")
    reader = csv.DictReader(io.StringIO(text))
    for row in reader:
        yield reader.line_num, {key: value for key, value in row.items() if value not in (None, "")}


def _row_problem(raw: dict[str, Any], key_field: str) -> str | None:
    reserved = sorted({TABLE_ATTRIBUTE, KEY_ATTRIBUTE} & set(raw))
    if reserved:
        return f"{', '.join(reserved)}: the reference table's own keys; rename the column"
    unnamed = [name for name in raw if not isinstance(name, str) or not name.strip()]
    if unnamed:
        return "a column without a name"
    value = raw.get(key_field)
    if value is None or value == "":
        return f"{key_field}: missing (the --key field of every row)"
    if isinstance(value, bool) or not isinstance(value, (str, int, Decimal)):
        return f"{key_field}: a key is text or a number, not {type(value).__name__}"
    if len(str(value).encode("utf-8")) > MAX_KEY_BYTES:
        return f"{key_field}: longer than {MAX_KEY_BYTES} bytes"
    return None


def read_rows(path: Path, key_field: str) -> tuple[list[ReferenceRow], list[RowError]]:
    """Every row validated: the good rows and the errors by line (nothing is written when there are any)."""
    if not path.is_file():
        raise OperatorError(f"{path}: no such file", EXIT_NOT_FOUND)
    rows: list[ReferenceRow] = []
    errors: list[RowError] = []
    seen: dict[str, int] = {}
    for line, raw in _raw_rows(path):
        if isinstance(raw, json.JSONDecodeError):
            errors.append(RowError(line, f"not JSON: {raw.msg}"))
            continue
        if not isinstance(raw, dict):
            errors.append(RowError(line, "not an object"))
            continue
        problem = _row_problem(raw, key_field)
        if problem is not None:
            errors.append(RowError(line, problem))
            continue
        key = str(raw[key_field]).strip()
        if key in seen:
            errors.append(RowError(line, f"{key_field} {key} again (first on line {seen[key]})"))
            continue
        seen[key] = line
        rows.append(ReferenceRow(key, dict(raw)))
    return rows, errors


def write_rows(dynamodb: Any, table_name: str, table: str, rows: list[ReferenceRow]) -> int:
    """The rows of reference table ``table`` into the reference table ``table_name``: BatchWriteItem in
    batches of 25; unprocessed items (throttling) are sent again with backoff."""
    serializer = TypeSerializer()
    written = 0
    for start in range(0, len(rows), BATCH_SIZE):
        batch = rows[start : start + BATCH_SIZE]
        requests: list[dict[str, Any]] = [
            {
                "PutRequest": {
                    "Item": {
                        **{name: serializer.serialize(value) for name, value in row.attributes.items()},
                        TABLE_ATTRIBUTE: {"S": table},
                        KEY_ATTRIBUTE: {"S": row.key},
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


def validated_rows(path: Path, table: str, key_field: str) -> list[ReferenceRow]:
    """The rows of ``path``, every one valid; else OperatorError (InvalidReferenceData) naming every bad
    line (nothing is written)."""
    if not re.match(NAME_PATTERN, table):
        raise OperatorError(f"--table {table!r}: {NAME_RULE}", EXIT_BAD_REQUEST, "InvalidReferenceData")
    if not _FIELD.match(key_field):
        raise OperatorError(f"--key {key_field!r}: a column name", EXIT_BAD_REQUEST, "InvalidReferenceData")
    rows, errors = read_rows(path, key_field)
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
    return rows


def load_file(dynamodb: Any, table_name: str, table: str, path: Path, key_field: str) -> int:
    """``path`` validated whole, then written (``docagent reference load`` and the drills): rows written."""
    return write_rows(dynamodb, table_name, table, validated_rows(path, table, key_field))


# ---------------------------------------------------------------------------------- empty lookup tables


def is_empty(dynamodb: Any, table_name: str, table: str) -> bool:
    """One Query with Limit=1: reads at most one row of reference table ``table``, whatever its size."""
    found = dynamodb.query(
        TableName=table_name,
        KeyConditionExpression="#table = :table",
        ExpressionAttributeNames={"#table": TABLE_ATTRIBUTE},
        ExpressionAttributeValues={":table": {"S": table}},
        Limit=1,
        Select="COUNT",
    )
    return int(found.get("Count", 0)) == 0


def lookup_checks(bundle: DefinitionBundle) -> dict[str, list[str]]:
    """The reference tables a definition's lookup checks read, each with the checks (``class.check``)."""
    tables: dict[str, list[str]] = {}
    for class_name, spec in bundle.definition.classes.items():
        for check in spec.checks:
            if isinstance(check, LookupCheck):
                tables.setdefault(check.table, []).append(f"{class_name}.{check.name}")
    return tables


def empty_table_warning(table: str, checks: list[str]) -> str:
    return (
        f"the reference table {table} is empty: every document fails its lookup ({', '.join(checks)}). "
        f"Load it first: docagent reference load FILE --table {table} --key FIELD"
    )


def reference_warnings(dynamodb: Any, table_name: str, bundle: DefinitionBundle) -> list[str]:
    """One warning per lookup table of ``bundle`` that holds no row."""
    return [
        empty_table_warning(table, checks)
        for table, checks in sorted(lookup_checks(bundle).items())
        if is_empty(dynamodb, table_name, table)
    ]


@command
def cmd_reference_load(args: argparse.Namespace) -> int:
    path = Path(args.file)
    rows = validated_rows(path, args.table, args.key)  # refused before the deployment is looked up
    ctx = OperatorContext.from_args(args)
    table_name = ctx.output(names.REFERENCE_TABLE)
    written = write_rows(ctx.client("dynamodb"), table_name, args.table, rows)
    payload = {
        "table": args.table,
        "key": args.key,
        "table_name": table_name,
        "file": str(path),
        "rows": len(rows),
        "written": written,
    }
    emit(
        args,
        payload,
        lambda: wide_console().print(
            f"{written} rows of reference table {args.table} (key {args.key}) written to {table_name} "
            f"({ctx.where}) from {path}",
            markup=False,
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
    load.add_argument("file", metavar="FILE", help="a .csv or .jsonl file, one row per looked-up value")
    load.add_argument(
        "--table", required=True, help="the reference table's name, as the definition's lookup checks name it"
    )
    load.add_argument(
        "--key", required=True, metavar="FIELD", help="the column whose value a lookup check looks up"
    )
    load.set_defaults(handler=cmd_reference_load)
