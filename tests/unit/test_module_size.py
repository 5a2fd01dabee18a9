"""No module in functions/, stacks/ or docagent/operations/ is over 500 lines: a module that grows past it
holds two ideas, and is split along them (docs/contributing.md)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("functions", "stacks", "docagent/operations")
MAX_LINES = 500


def line_counts() -> dict[str, int]:
    return {
        path.relative_to(ROOT).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for folder in FOLDERS
        for path in (ROOT / folder).rglob("*.py")
    }


def test_no_module_is_over_500_lines() -> None:
    counts = line_counts()
    assert len(counts) > 100  # the walk found the folders
    over = {path: lines for path, lines in counts.items() if lines > MAX_LINES}
    assert over == {}
