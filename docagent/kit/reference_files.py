"""A definition folder's reference tables: ``references/TABLE.csv`` (or ``.jsonl``), one file per table its
lookup checks name, loaded into the deployment's one reference table by ``docagent reference load FILE
--table TABLE --key FIELD``. The key column of a folder's file is the field its lookup checks look up (the
last part of a dotted field: ``policy_number`` for a check on ``policy_number``), else the file's first
column."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

from functions.definition.job_spec import DefinitionBundle, LookupCheck

REFERENCES_FOLDER = "references"
SUFFIXES = (".csv", ".jsonl")


@dataclass(frozen=True)
class ReferenceFile:
    """One reference table of a folder: its name (the file's stem), its file and its key column."""

    table: str
    path: Path
    key_field: str


def _columns(path: Path) -> list[str]:
    with path.open(encoding="utf-8-sig", newline="") as file:
        if path.suffix == ".csv":
            return list(csv.DictReader(file).fieldnames or [])
        first = next((line for line in file if line.strip()), "")
    row = json.loads(first) if first else {}
    return list(row) if isinstance(row, dict) else []


def reference_files(folder: Path, bundle: DefinitionBundle) -> list[ReferenceFile]:
    """The reference files of ``folder`` with the key column each is loaded by; a ValueError for a file
    with no columns."""
    looked_up: dict[str, list[str]] = {}
    for class_bundle in bundle.classes.values():
        for check in class_bundle.spec.checks:
            if isinstance(check, LookupCheck):
                looked_up.setdefault(check.table, []).append(check.field.rsplit(".", 1)[-1])
    found = []
    root = folder / REFERENCES_FOLDER
    # regular files only (is_file): a FIFO named like a table would block the read
    for path in (
        sorted(p for p in root.glob("*") if p.suffix in SUFFIXES and p.is_file()) if root.is_dir() else []
    ):
        columns = _columns(path)
        if not columns:
            raise ValueError(f"{path}: no columns (a CSV file starts with its header row)")
        key_field = next((f for f in looked_up.get(path.stem, []) if f in columns), columns[0])
        found.append(ReferenceFile(path.stem, path, key_field))
    return found
