"""The Step Functions interpreter's JSONPath expressions, parsed once per path.

moto's interpreter calls ``jsonpath_ng.parse`` on every evaluation of every path (each ``.$`` parameter,
``ResultPath``, ``ItemsPath``, ...), and ``parse`` builds a new PLY lexer and parser each time: 0.9-1.4 ms of
CPU per call on this machine (measured 2026-12-02 with ``timeit`` at load ~10), against 0.013 ms for the
``find`` that follows. A workflow uses a few dozen distinct paths, so parsed expressions are kept by path.
An expression is a tree of immutable nodes (``find`` and ``update_or_create`` change the data they are
given, never the expression), so one parsed path serves every thread.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from jsonpath_ng import parser
from jsonpath_ng.ext import parser as extended
from moto.stepfunctions.parser.asl.component.common.path import result_path
from moto.stepfunctions.parser.asl.utils import json_path

# Distinct paths of the deployed workflows; a bound keeps a generated path from growing it without end.
PARSED_PATHS = 4096


@functools.lru_cache(maxsize=PARSED_PATHS)
def parse_extended(path: str) -> Any:
    """``jsonpath_ng.ext.parse`` (filters, arithmetic), once per path: what ``extract_json`` evaluates."""
    return extended.parse(path)


@functools.lru_cache(maxsize=PARSED_PATHS)
def parse_basic(path: str) -> Any:
    """``jsonpath_ng.parse``, once per path: what ``ResultPath`` writes the result at."""
    return parser.parse(path)


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
