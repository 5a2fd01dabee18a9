"""No import circle among the project's modules (app.py, stacks/, functions/, docagent/): every import counts,
a function's deferred one too (a deferred import that closes a circle only hides it: app.py and
stacks/document_layer.py were one). The graph is built from the source with ast (0.7 to 1.5 s)."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOPS = ("functions", "stacks", "docagent")


def project_modules() -> dict[str, Path]:
    files = [ROOT / "app.py", *[path for top in TOPS for path in (ROOT / top).rglob("*.py")]]
    return {
        ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): path
        for path in files
    }


def import_graph(modules: Mapping[str, Path]) -> dict[str, set[str]]:
    """Each module's project modules it imports (``from a import b`` is ``a.b`` when that is a module)."""

    def owner(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        imported: set[str | None] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported |= {owner(alias.name) for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parts, *([node.module] if node.module else [])])
                imported |= {
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else owner(base)
                    for alias in node.names
                }
        graph[module] = {name for name in imported if name is not None and name != module}
    return graph


def first_cycle(graph: Mapping[str, set[str]]) -> list[str] | None:
    """One import circle (its modules in import order, the first repeated at the end), None without one."""
    done: set[str] = set()
    for start in sorted(graph):
        path: list[str] = []
        on_path: set[str] = set()
        stack: list[tuple[str, list[str]]] = [(start, sorted(graph[start]))]
        path.append(start)
        on_path.add(start)
        while stack:
            _, pending = stack[-1]
            if not pending:
                node, _ = stack.pop()
                path.pop()
                on_path.discard(node)
                done.add(node)
                continue
            following = pending.pop()
            if following in on_path:
                return [*path[path.index(following) :], following]
            if following in done or following not in graph:
                continue
            stack.append((following, sorted(graph[following])))
            path.append(following)
            on_path.add(following)
    return None


def test_the_project_has_no_import_cycle() -> None:
    modules = project_modules()
    assert len(modules) > 200  # the walk found the project
    cycle = first_cycle(import_graph(modules))
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def test_a_cycle_is_found_and_named() -> None:
    graph = {
        "app": {"stacks.stack"},
        "stacks.stack": {"stacks.layer"},
        "stacks.layer": {"app", "functions.x"},
    }
    assert first_cycle({**graph, "functions.x": set()}) == ["app", "stacks.stack", "stacks.layer", "app"]
    assert first_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_relative_and_from_imports_resolve_to_modules(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("from .a import thing\n")
    (tmp_path / "pkg" / "a.py").write_text("def f():\n    from pkg import b\n")
    (tmp_path / "pkg" / "b.py").write_text("import pkg.a\n")
    modules = {
        "pkg": tmp_path / "pkg" / "__init__.py",
        "pkg.a": tmp_path / "pkg/a.py",
        "pkg.b": tmp_path / "pkg/b.py",
    }
    assert import_graph(modules) == {"pkg": {"pkg.a"}, "pkg.a": {"pkg.b"}, "pkg.b": {"pkg.a"}}
