"""The modules of a code root that every function deployed with it imports: what its code template imports.

The functions of a stack share one code package (the project's seven share ``functions/``), and each
function's template imported that package's common modules again: its payload models, the job definition,
the storage helpers (about 0.1 s of CPU a template, most of each one's import, 2026-12-08). A code template
(forking.py) imports them once, and each function's template is forked from it with them imported.

Which ones: the modules every handler imports for sure, read from the code, never run. A module's imports
are its unconditional top-level ``import`` and ``from ... import`` statements (not those under ``if``,
``try`` or in a function or class: those may not run), followed through the modules of the code root (a
``from package import name`` imports ``package.name`` when that is a module of the code root). So each
handler's set is at most what its import loads, and the modules kept are in every handler's: a function
forked from the code template has imported nothing its own import would not have. The order is the first
handler's (each module before what it imports, as its import statements run them).
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable, Iterator
from pathlib import Path


@functools.lru_cache(maxsize=4096)
def _source(code_root: Path, module: str) -> Path | None:
    """The file of ``module`` in the code root (a package's ``__init__.py``), None if not there."""
    base = code_root.joinpath(*module.split("."))
    for candidate in (base / "__init__.py", base.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def _with_parents(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[: end + 1]) for end in range(len(parts))]


_IMPORT = re.compile(r"import\s+(?P<names>.+)")
_FROM = re.compile(r"from\s+(?P<dots>\.*)(?P<module>[\w.]*)\s+import\s+(?P<names>\([^)]*\)?|.+)")


def _top_level_imports(text: str) -> Iterator[str]:
    """The import statements that start a line outside a triple-quoted string: the unconditional top-level
    ones (a statement under ``if``, ``try``, ``def`` or ``class`` is indented). A parenthesized list of
    names goes on to its closing bracket. Read as text, not parsed: parsing the project's code package took
    0.16 s of CPU, this 0.01 s."""
    lines = text.splitlines()
    quoted = False
    for number, line in enumerate(lines):
        if quoted or not line.startswith(("import ", "from ")):
            quoted ^= (line.count('"""') + line.count("'''")) % 2 == 1
            continue
        statement = line.split("#", 1)[0]
        if "(" in statement and ")" not in statement:
            rest = itertools.takewhile(lambda part: ")" not in part, lines[number + 1 :])
            statement = " ".join([statement, *(part.split("#", 1)[0] for part in rest), ")"])
        yield statement


def _imported_by(code_root: Path, module: str, path: Path) -> list[str]:
    """What ``module``'s unconditional top-level imports load from the code root, in their order."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[str] = []
    for statement in _top_level_imports(path.read_text(encoding="utf-8")):
        if (plain := _IMPORT.fullmatch(statement.strip())) is not None:
            for alias in plain["names"].split(","):
                found += _with_parents(alias.split()[0])
        elif (fromed := _FROM.fullmatch(statement.strip())) is not None:
            level = len(fromed["dots"])
            base = package.split(".")[: len(package.split(".")) - level + 1] if level else []
            parent = ".".join([*base, *([fromed["module"]] if fromed["module"] else [])])
            found += _with_parents(parent)
            names = fromed["names"].strip("() ").split(",")
            found += [f"{parent}.{alias.split()[0]}" for alias in names if alias.strip() not in {"", "*"}]
    return [name for name in found if _source(code_root, name) is not None]


def imported_modules(code_root: Path, module: str, read: dict[str, list[str]] | None = None) -> list[str]:
    """``module`` and what its import surely loads from the code root, each before what it imports
    (``read``: each module's own imports, kept between calls)."""
    read = {} if read is None else read
    order: list[str] = []
    pending = _with_parents(module)[::-1]
    while pending:
        name = pending.pop()
        if name in order:
            continue
        if name not in read:
            path = _source(code_root, name)
            read[name] = [] if path is None else [name, *_imported_by(code_root, name, path)]
        if read[name]:
            order.append(name)
            pending += read[name][:0:-1]
    return order


def shared_modules(code_root: Path, handlers: Iterable[str]) -> list[str]:
    """The modules of the code root that every handler (``module.function``) imports, in the first one's
    order; none with fewer than two handlers (nothing to share)."""
    modules = sorted({handler.rpartition(".")[0] for handler in handlers if "." in handler})
    if len(modules) < 2:
        return []
    read: dict[str, list[str]] = {}
    closures = [imported_modules(code_root, module, read) for module in modules]
    common = set(closures[0]).intersection(*closures[1:])
    return [name for name in closures[0] if name in common]
