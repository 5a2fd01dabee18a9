"""A definition folder's files read as ``validate``, ``publish`` and ``start`` read them: a regular file only,
never blocking, and JSON nested at most ``MAX_JSON_DEPTH`` levels, so no input makes them hang or raise.

- A FIFO (or a device, a socket) named as a prompt or a ``$ref``'d schema would block ``read_text`` forever:
  the file is opened without blocking (``O_NONBLOCK``: opening a FIFO with no writer returns at once) and
  refused unless what was opened is a regular file (``fstat`` of the open file, so a file swapped for a FIFO
  after a check cannot slip through).
- JSON nested thousands deep makes Python's parser (and every recursive walk after it) raise RecursionError,
  and pydantic refuses a value nested deeper than about 255 levels (``recursion_depth_exceeded``; 250 pass,
  300 fail, pydantic 2.14, 2026-12-07): a definition file deeper than ``MAX_JSON_DEPTH`` is refused with its
  depth. 64 levels is 32 levels of nested fields in a schema (``properties`` then the field's name): far past
  what a document's fields need, far inside every walk's limit.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

MAX_JSON_DEPTH = 64


class NotARegularFile(OSError):  # noqa: N818 (the outcome reads as the name)
    """The path names a FIFO, a device, a socket or a folder: never read."""


class TooDeep(ValueError):  # noqa: N818 (the outcome reads as the name)
    """JSON nested deeper than MAX_JSON_DEPTH."""


def read_regular(path: Path) -> str:
    """A regular file's text (UTF-8); NotARegularFile for anything else; FileNotFoundError,
    UnicodeDecodeError or another OSError as ``read_text`` raises them."""
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(descriptor, "rb") as file:
        mode = os.fstat(file.fileno()).st_mode
        if not stat.S_ISREG(mode):
            kind = "a FIFO" if stat.S_ISFIFO(mode) else "a folder" if stat.S_ISDIR(mode) else "a special file"
            raise NotARegularFile(f"{path.name} is {kind}, not a regular file")
        return file.read().decode("utf-8")


def _depth(value: Any) -> int:
    """How deeply arrays and objects nest in ``value`` (a scalar: 0), walked without recursion."""
    deepest, pending = 0, [(value, 1)]
    while pending:
        node, level = pending.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else None
        if children is None:
            continue
        deepest = max(deepest, level)
        pending.extend((child, level + 1) for child in children)
    return deepest


def parse_json(text: str) -> Any:
    """JSON text; TooDeep when it nests deeper than MAX_JSON_DEPTH, ValueError when it is not JSON."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise TooDeep(f"nested too deeply to read (at most {MAX_JSON_DEPTH} levels)") from None
    depth = _depth(value)
    if depth > MAX_JSON_DEPTH:
        raise TooDeep(f"nested {depth:,} levels deep; at most {MAX_JSON_DEPTH}")
    return value


def read_json_file(path: Path) -> Any:
    """A regular file's JSON, nested at most MAX_JSON_DEPTH levels (the errors of the two above)."""
    return parse_json(read_regular(path))
