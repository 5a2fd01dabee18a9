"""What the code and the docs cite exists in the repository: no file outside it, every cited test file,
every cited section of README.md or a docs/ page, every item of docs/semantics.md."""

from __future__ import annotations

import re
import subprocess
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TEXT_SUFFIXES = {".py", ".md", ".json", ".yml", ".yaml", ".toml", ".txt", ".cfg", ""}

# Built from parts so that this file does not cite them itself.
OUTSIDE = re.compile("|".join([r"\.\./" + "shared", "/work" + "/", r"\bshared/" + "step-functions"]))
TEST_FILE = re.compile(r"\btests/[A-Za-z0-9_/]+\.py\b")
DOC_FILE = re.compile(r"\b(?:README\.md|docs/[A-Za-z0-9_./-]+\.md)\b")
QUOTED_SECTION = re.compile(r'(README(?:\.md)?|docs/[A-Za-z0-9_./-]+\.md)[,:]? "([^"\n]+)"')
SEMANTICS_CITATION = re.compile(r"docs/semantics\.md[,:]?\s+((?:[RMDLP]\d+(?:-[RMDLP]?\d+)?(?:, ?| and )?)+)")
ITEM = re.compile(r"^- \*\*([RMDLP]\d+)\*\*", re.MULTILINE)


@cache
def tracked_text_files() -> tuple[Path, ...]:
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split("\0")
    paths = [ROOT / name for name in listed if name]
    return tuple(
        path
        for path in paths
        if path.is_file() and path.suffix in TEXT_SUFFIXES and "fixtures" not in path.parts
    )


def occurrences(pattern: re.Pattern[str]) -> list[tuple[str, re.Match[str]]]:
    found = []
    for path in tracked_text_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for match in pattern.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            found.append((f"{path.relative_to(ROOT)}:{line}", match))
    return found


def sections(document: Path) -> list[str]:
    """A page's headings and bold lead-ins ("**Source locations.** ...")."""
    text = document.read_text(encoding="utf-8")
    headings = re.findall(r"^#+ (.+)$", text, re.MULTILINE)
    lead_ins = re.findall(r"^\*\*([^*]+?)\.?\*\*", text, re.MULTILINE)
    return [*headings, *lead_ins]


def document_path(name: str) -> Path:
    return ROOT / ("README.md" if name.startswith("README") else name)


def test_nothing_cites_a_file_outside_the_repository() -> None:
    assert [f"{where} {match.group()}" for where, match in occurrences(OUTSIDE)] == []


def test_every_cited_test_file_exists() -> None:
    missing = [f"{where} {match.group()}" for where, match in occurrences(TEST_FILE)]
    assert [entry for entry in missing if not (ROOT / entry.split()[1]).exists()] == []


def test_every_cited_page_exists() -> None:
    missing = [f"{where} {match.group()}" for where, match in occurrences(DOC_FILE)]
    assert [entry for entry in missing if not (ROOT / entry.split()[1]).exists()] == []


def test_every_cited_section_exists() -> None:
    missing = []
    for where, match in occurrences(QUOTED_SECTION):
        document, section = document_path(match.group(1)), match.group(2).strip()
        if not document.exists() or not any(found.startswith(section) for found in sections(document)):
            missing.append(f"{where}: {match.group()}")
    assert missing == []


def test_every_cited_semantics_item_exists() -> None:
    items = set(ITEM.findall((ROOT / "docs" / "semantics.md").read_text(encoding="utf-8")))
    assert len(items) >= 30
    missing = []
    for where, match in occurrences(SEMANTICS_CITATION):
        for token in re.findall(r"[RMDLP]\d+(?:-[RMDLP]?\d+)?", match.group(1)):
            first, _, last = token.partition("-")
            ends = [first] + ([first[0] + last.lstrip("RMDLP")] if last else [])
            missing += [f"{where}: {end}" for end in ends if end not in items]
    assert missing == []


@pytest.mark.parametrize("pattern", [QUOTED_SECTION, SEMANTICS_CITATION])
def test_the_citation_patterns_find_citations(pattern: re.Pattern[str]) -> None:
    # A check that finds nothing checks nothing: each pattern matches real citations in the repository.
    assert occurrences(pattern)
