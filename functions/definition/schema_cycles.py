"""A schema's reference cycles: a ``$ref`` that leads, through the schemas it names, back to where it is.

``#/$defs/a`` that is ``{"$ref": "#/$defs/a"}`` sends every validator (jsonschema at ``definition validate``,
fastjsonschema in the functions) into endless recursion, and so does a cycle through other definitions or
other files (``a.json`` -> ``b.json`` -> ``a.json``). A schema that nests itself through a property (a tree)
terminates on finite data, but its fields are then unbounded in depth: the kit refuses every cycle, so a
class's fields are a finite tree of known depth (docs/defining-a-job.md; docs/security.md).

Pure functions of a self-contained schema (every ``$ref`` local, ``#...``: a bundle's, after
docagent/kit/schema_refs.py resolved the folder's other files into it); no recursion, so a long chain of
references cannot exhaust the stack either.
"""

from __future__ import annotations

import urllib.parse
from typing import Any

# Values that are data, not schemas: a "$ref" key inside them is no reference.
_DATA_KEYWORDS = frozenset({"enum", "const", "examples", "default"})
# Definitions are applied only where a reference names them: they are not part of the schema around them.
_DEFINITIONS = frozenset({"$defs", "definitions"})


def _step(path: str, token: str | int) -> str:
    return f"{path}[{token}]" if isinstance(token, int) else f"{path}.{token}"


def _target(root: Any, ref: str) -> tuple[str, Any] | None:
    """The JSON path and the schema a local ``$ref`` (``#``, ``#/$defs/a``) points at, or None."""
    if not ref.startswith("#"):
        return None
    node, path = root, "$"
    for raw in ref[1:].split("/")[1:] if ref != "#" else []:
        token = urllib.parse.unquote(raw).replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node, path = node[token], _step(path, token)
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node, path = node[int(token)], _step(path, int(token))
        else:
            return None
    return path, node


def _references(node: Any, path: str, definitions: bool = False) -> list[tuple[str, str]]:
    """(JSON path of the ``$ref``, its value) of every reference the schema at ``path`` applies (with
    ``definitions``: also those of the definitions it holds)."""
    found: list[tuple[str, str]] = []
    pending = [(node, path)]
    while pending:
        current, where = pending.pop()
        if isinstance(current, dict):
            for key, value in current.items():
                if key == "$ref" and isinstance(value, str):
                    found.append((f"{where}.$ref", value))
                elif key not in _DATA_KEYWORDS and (definitions or key not in _DEFINITIONS):
                    pending.append((value, _step(where, key)))
        elif isinstance(current, list):
            pending.extend((item, _step(where, index)) for index, item in enumerate(current))
    return found


def reference_cycle(schema: Any) -> tuple[str, str] | None:
    """(JSON path of a ``$ref`` that closes a cycle, its value), or None when the references form no cycle.
    Each referenced schema is visited once (a depth-first walk, without recursion)."""
    edges: dict[str, list[tuple[str, str, str]]] = {}  # schema path -> (ref's path, ref, target path)
    nodes: dict[str, Any] = {"$": schema}

    def out_of(path: str) -> list[tuple[str, str, str]]:
        if path not in edges:
            edges[path] = []
            for where, ref in _references(nodes[path], path):
                found = _target(schema, ref)
                if found is not None:
                    nodes.setdefault(found[0], found[1])
                    edges[path].append((where, ref, found[0]))
        return edges[path]

    done: set[str] = set()  # schemas whose every reference was followed: no cycle through them
    for found in (_target(schema, ref) for _, ref in _references(schema, "$", definitions=True)):
        if found is not None:
            nodes.setdefault(*found)
    for start in list(nodes):
        if start in done:
            continue
        on_path = {start}
        stack = [(start, iter(out_of(start)))]
        while stack:
            path, following = stack[-1]
            step = next(following, None)
            if step is None:
                stack.pop()
                on_path.discard(path)
                done.add(path)
                continue
            where, ref, target = step
            if target in on_path:
                return where, ref
            if target not in done:
                on_path.add(target)
                stack.append((target, iter(out_of(target))))
    return None
