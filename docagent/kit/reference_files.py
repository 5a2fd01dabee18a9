"""A definition folder's reference tables, ``references/TABLE.csv``, as items of the deployment's one
reference table (docs/design.md: partition key ``table``, sort key ``key``, the row's attributes beside them),
which lookup checks read. A file has a header row; the column ``key`` (else the first column) is the row's
key, the others its attributes, as a lookup check attaches them."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

REFERENCES = "references"
KEY_COLUMN = "key"
TABLE_ATTRIBUTE = "table"


def reference_items(folder: Path) -> list[dict[str, str]]:
    """Every row of ``references/*.csv`` as a reference table item: ``table`` (the file's stem), ``key`` and
    the row's other non-empty columns. A file without rows or a row without a key is a ValueError."""
    items: list[dict[str, str]] = []
    for path in sorted((folder / REFERENCES).glob("*.csv")):
        with path.open(encoding="utf-8", newline="") as file:
            reader = csv.DictReader(file)
            columns = reader.fieldnames or []
            if not columns:
                raise ValueError(f"{path}: no header row")
            key_column = KEY_COLUMN if KEY_COLUMN in columns else columns[0]
            for line, row in enumerate(reader, start=2):
                key = (row.get(key_column) or "").strip()
                if not key:
                    raise ValueError(f"{path}:{line}: the row has no {key_column}")
                attributes = {
                    column: value.strip()
                    for column, value in row.items()
                    if column not in (key_column, TABLE_ATTRIBUTE, KEY_COLUMN) and value and value.strip()
                }
                items.append({**attributes, TABLE_ATTRIBUTE: path.stem, KEY_COLUMN: key})
    return items


def load_references(dynamodb: Any, table_name: str, folder: Path) -> int:
    """Put the folder's reference rows into the deployment's reference table; the number of rows."""
    items = reference_items(folder)
    for item in items:
        dynamodb.put_item(TableName=table_name, Item={name: {"S": value} for name, value in item.items()})
    return len(items)
