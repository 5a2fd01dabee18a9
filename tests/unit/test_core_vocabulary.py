"""The core knows no example: no word of an example's vocabulary in functions/, stacks/ or statemachines/.

The vocabulary is derived from examples/*/job.json and the schemas it names: the definition's, classes',
fields' (nested ones too), checks', tables', attached rows', errors', totals' and actions' names. Each name is
split into words (``policy_number`` -> policy, number; ``UnknownCustomer`` -> unknown, customer) and matched
against the core's words, so ``CustomerRecord``, ``customer_id`` and "the customer's" are all found.

Each word of a name is a term, unless it is the pipeline's own word (``GENERIC``: a field named ``total`` or
``date`` says nothing of an example) or has another meaning in the core (``ALONE``: IAM, removal and retry
*policies*; token *estimates*); a name of several words is a term too unless every word is generic
(``line_items``), so ``policy_number`` and ``known-policy`` are still the example's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CORE = ("functions", "stacks", "statemachines")
TEXT_SUFFIXES = {".py", ".json", ".txt", ".md", ".yaml", ".yml", ".j2", ".jinja"}
GENERIC = frozenset(
    {
        "above", "amount", "by", "currency", "date", "dated", "description", "email", "export", "finished",
        "form", "future", "in", "item", "known", "limit", "line", "name", "not", "number", "past", "result",
        "summary", "total", "type", "unknown",
    }
)  # fmt: skip
ALONE = frozenset({"policy", "estimate"})
_PARTS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def stem(word: str) -> str:
    """customers -> customer, policies -> policy: a name and its plural are one word."""
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def words(text: str) -> tuple[str, ...]:
    """The words of a text or an identifier, lower-case and singular (snake, kebab, camel and Pascal case)."""
    return tuple(stem(part.lower()) for part in _PARTS.findall(text))


def _schema_names(schema: Any) -> Iterator[str]:
    if isinstance(schema, dict):
        for name, sub in (schema.get("properties") or {}).items():
            yield name
            yield from _schema_names(sub)
        yield from _schema_names(schema.get("items"))


def _names(folder: Path) -> Iterator[str]:
    job = json.loads((folder / "job.json").read_text(encoding="utf-8"))
    yield job["name"]
    for class_name, spec in job["classes"].items():
        yield class_name
        yield from _schema_names(json.loads((folder / spec["schema"]).read_text(encoding="utf-8")))
        for check in spec.get("checks", []):
            yield from (check.get(key) for key in ("name", "table", "attach", "error") if check.get(key))
    for item in job.get("totals", []) + job.get("actions", []):
        yield item["name"]


def vocabulary(examples: Path = ROOT / "examples") -> set[tuple[str, ...]]:
    """Every example's names as word sequences, less the generic ones."""
    found = set()
    for folder in sorted(path.parent for path in examples.glob("*/job.json")):
        for name in _names(folder):
            parts = words(name)
            found.update((part,) for part in parts if len(part) > 2 and part not in GENERIC | ALONE)
            if len(parts) > 1 and not set(parts) <= GENERIC:
                found.add(parts)
    return found


def _contains(line: tuple[str, ...], term: tuple[str, ...]) -> bool:
    size = len(term)
    return any(line[start : start + size] == term for start in range(len(line) - size + 1))


def scan(roots: list[Path], terms: set[tuple[str, ...]]) -> list[str]:
    """``file:line: words`` for every line of the text files under ``roots`` holding a term."""
    hits = []
    first_words = {term[0] for term in terms}
    for root in roots:
        for path in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in TEXT_SUFFIXES):
            if "__pycache__" in path.parts:
                continue
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            for number, line in enumerate(lines, start=1):
                line_words = words(line)  # once per line, not once per term
                if first_words.isdisjoint(line_words):
                    continue
                found = sorted("-".join(term) for term in terms if _contains(line_words, term))
                if found:
                    shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
                    hits.append(f"{shown}:{number}: {', '.join(found)}")
    return hits


def test_the_vocabulary_holds_each_examples_own_words() -> None:
    terms = vocabulary()
    for expected in ("invoice", "customer", "ticket", "claim", "repair", "claimant", "incident"):
        assert (expected,) in terms
    assert ("policy", "number") in terms and ("known", "policy") in terms
    assert ("policy",) not in terms and ("total",) not in terms and ("line", "item") not in terms


def test_the_scan_names_file_and_line_and_ignores_other_meanings(tmp_path: Path) -> None:
    planted = tmp_path / "pipeline.py"
    planted.write_text(
        "role.add_to_policy(iam.PolicyStatement())  # IAM\n"
        "estimate = estimate_tokens(text)\n"
        "record = CustomerRecord(policy_number=x)\n"
        "# one ticket per job\n",
        encoding="utf-8",
    )
    hits = [hit.split(": ", 1) for hit in scan([tmp_path], vocabulary())]
    assert [(Path(place).name, found) for place, found in hits] == [
        ("pipeline.py:3", "customer, policy-number"),
        ("pipeline.py:4", "ticket"),
    ]


def test_the_core_holds_no_example_vocabulary() -> None:
    hits = scan([ROOT / name for name in CORE], vocabulary())
    assert hits == [], f"{len(hits)} lines of the core name an example:\n" + "\n".join(hits[:200])
