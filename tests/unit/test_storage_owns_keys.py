"""Only functions/storage.py builds a key of the job bucket: every other module calls it (issue 9)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("app.py", "functions", "stacks", "docagent")
OWNER = ROOT / "functions" / "storage.py"
# The top-level folders of the bucket's layout (docs/design.md), and the job's own folders.
KEY_SHAPED = re.compile(r"(^|[^A-Za-z0-9_.-])(jobs|map-runs|incoming|action-ledger|model-calls|results)/")


def _docstrings(tree: ast.AST) -> set[int]:
    found: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            value = body[0].value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                found.add(id(value))
    return found


def key_shaped_strings(source: str) -> list[tuple[int, str]]:
    """The string literals (plain, or the literal parts of an f-string) that spell a bucket key's folder."""
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        is_text = isinstance(node, ast.Constant) and isinstance(node.value, str)
        if is_text and id(node) not in docstrings and KEY_SHAPED.search(node.value):
            found.append((node.lineno, node.value))
    return found


def test_the_scan_finds_a_key_built_by_hand() -> None:
    assert key_shaped_strings('key = f"jobs/{job_id}/report.json"') == [(1, "jobs/")]
    assert key_shaped_strings('key = "map-runs/" + run_id') == [(1, "map-runs/")]
    assert key_shaped_strings('key = f"{prefix}model-calls/"') == [(1, "model-calls/")]
    assert key_shaped_strings('def f():\n    """Reads jobs/{job_id}/report.json."""') == []
    assert key_shaped_strings('text = "the results are in"') == []


def test_only_storage_builds_job_bucket_keys() -> None:
    offenders = []
    for name in SCANNED:
        path = ROOT / name
        for file in [path] if path.is_file() else sorted(path.rglob("*.py")):
            if file == OWNER:
                continue
            for line, text in key_shaped_strings(file.read_text(encoding="utf-8")):
                offenders.append(f"{file.relative_to(ROOT)}:{line}: {text!r}")
    assert offenders == [], "build these keys with functions/storage.py:\n" + "\n".join(offenders)
