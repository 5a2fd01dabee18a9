"""docs/architecture.md's diagram is the import graph: every arrow between rooms that an import makes is
drawn, and every solid arrow drawn is made by an import (dotted arrows are files, subprocesses or lazy
local-only imports)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PLAIN_STACKS = {"stacks.outputs", "stacks.config", "stacks.powertools", "stacks.sdk_pins"}
# A dotted arrow whose label says it is not an import.
NOT_IMPORTS = {"loads", "synthesizes, by subprocess"}
# docagent's top-level modules drawn as a node: the CLI (its parser and the local cloud's commands), the docs.
ROOMS = {"cli": "cli", "local_commands": "cli", "docs_gen": "docsgen", "docs_meanings": "docsgen"}


def room(module: str) -> str | None:
    """The diagram's node of a module of the repository, None for anything else."""
    parts = module.split(".")
    if parts[0] == "functions":
        return "functions"
    if parts[0] == "app" or (parts[0] == "stacks" and ".".join(parts[:2]) not in PLAIN_STACKS):
        return "stacks"
    if parts[0] == "stacks":
        return "plain"
    if parts[0] == "docagent" and len(parts) > 1:
        return ROOMS.get(parts[1]) or (
            parts[1] if parts[1] in {"operations", "localcloud", "drills", "evaluation", "kit"} else None
        )
    return None


def imported_modules(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # `from stacks import outputs` is stacks.outputs; `from stacks.config import X` stacks.config
            found += [
                f"{node.module}.{alias.name}"
                if (ROOT / node.module.replace(".", "/") / f"{alias.name}.py").exists()
                else node.module
                for alias in node.names
            ]
    return found


def import_arrows() -> dict[tuple[str, str], set[str]]:
    arrows: dict[tuple[str, str], set[str]] = {}
    files = [
        ROOT / "app.py",
        *[path for top in ("functions", "stacks", "docagent") for path in (ROOT / top).rglob("*.py")],
    ]
    for path in files:
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        source = room(module)
        for imported in imported_modules(ast.parse(path.read_text(encoding="utf-8"))):
            target = room(imported)
            if source and target and target != source:
                arrows.setdefault((source, target), set()).add(str(path.relative_to(ROOT)))
    return arrows


def drawn_arrows() -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """(solid arrows, dotted arrows that are imports) of the diagram."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    diagram = text[text.index("```mermaid") : text.index("```", text.index("```mermaid") + 3)]
    node = r"(\w+)(?:\[[^\]]*\]|\{\{[^}]*\}\})?"
    solid = set(re.findall(node + r" --> " + node, diagram))
    dotted = {
        (source, target)
        for source, label, target in re.findall(node + r" -\. ([^.]+) \.-> " + node, diagram)
        if label not in NOT_IMPORTS
    }
    return {(a, b) for a, b in solid}, dotted


def test_every_import_between_rooms_is_drawn() -> None:
    solid, dotted = drawn_arrows()
    undrawn = {
        arrow: sorted(files) for arrow, files in import_arrows().items() if arrow not in solid | dotted
    }
    assert undrawn == {}


def test_every_solid_arrow_is_an_import() -> None:
    solid, _ = drawn_arrows()
    assert solid - import_arrows().keys() == set()


def test_the_diagram_has_arrows() -> None:
    solid, _ = drawn_arrows()
    assert len(solid) >= 10 and ("kit", "functions") in solid
