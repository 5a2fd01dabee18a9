"""The Step Functions interpreter's JSONPath expressions, parsed once per path.

moto's interpreter calls ``jsonpath_ng.parse`` on every evaluation of every path (each ``.$`` parameter,
``ResultPath``, ``ItemsPath``, ...), and ``parse`` builds a new PLY lexer and parser each time: 0.9-1.4 ms of
CPU per call on this machine (measured 2026-12-02 with ``timeit`` at load ~10), against 0.013 ms for the
``find`` that follows. A workflow uses a few dozen distinct paths, so parsed expressions are kept by path.
An expression is a tree of immutable nodes (``find`` and ``update_or_create`` change the data they are
given, never the expression), so one parsed path serves every thread.

Each distinct path was still parsed by a parser made for it: ``jsonpath_ng.parse`` builds its PLY parser
(the grammar's functions read, the tables loaded) at every call, 0.35 ms of the 0.45 ms a parse took, for the
54 paths a deploy of the workflow validates and those each job's first run of a state evaluates (measured
2026-12-08). One parser of each kind now reads every path: a PLY parser keeps its state only for the parse
it runs (each gets a fresh lexer), so one at a time, under a lock, gives what a parser of its own gives.
"""

from __future__ import annotations

import functools
import re
import threading
from typing import Any

from jsonpath_ng import parser
from jsonpath_ng.ext import parser as extended
from moto.stepfunctions.parser.asl.component.common.path import result_path
from moto.stepfunctions.parser.asl.utils import json_path

# Distinct paths of the deployed workflows; a bound keeps a generated path from growing it without end.
PARSED_PATHS = 4096


class _Parsers:
    """One parser of each kind, made at its first path, one parse at a time."""

    lock = threading.Lock()
    extended: Any = None
    basic: Any = None


@functools.lru_cache(maxsize=PARSED_PATHS)
def parse_extended(path: str) -> Any:
    """``jsonpath_ng.ext.parse`` (filters, arithmetic), once per path: what ``extract_json`` evaluates."""
    with _Parsers.lock:
        if _Parsers.extended is None:
            _Parsers.extended = extended.ExtendedJsonPathParser()
        return _Parsers.extended.parse(path)


@functools.lru_cache(maxsize=PARSED_PATHS)
def parse_basic(path: str) -> Any:
    """``jsonpath_ng.parse``, once per path: what ``ResultPath`` writes the result at."""
    with _Parsers.lock:
        if _Parsers.basic is None:
            _Parsers.basic = parser.JsonPathParser()
        return _Parsers.basic.parse(path)


_ROOT = re.compile(r"^\$(\$|[A-Za-z_][A-Za-z0-9_]*)?(?P<rest>.*)$", re.DOTALL)


def is_valid(path: str) -> bool:
    """Whether ``path`` is a JSONPath Step Functions accepts in a ``*Path`` field: ``$`` (the input),
    ``$$`` (the context object) or ``$name`` (a variable), then a path that parses."""
    root = _ROOT.match(path)
    if root is None:
        return False
    try:
        parse_extended("$" + root["rest"])
    except Exception:  # jsonpath_ng raises several kinds for a path it cannot read
        return False
    return True


def install() -> None:
    vars(json_path)["parse"] = parse_extended
    vars(result_path)["parse"] = parse_basic
