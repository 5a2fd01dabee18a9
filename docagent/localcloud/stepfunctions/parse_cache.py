"""A definition's parse tree, made once a process.

moto parses a state machine's definition with ANTLR at every CreateStateMachine and UpdateStateMachine (to
validate it), every StartExecution and every redrive. For the document-review workflow (16 KB) that is 0.11 s
of CPU, and 0.19 s for a process's first parse (measured 2026-12-03). In the integration tests it was 9 % of
the Python CPU: 21 s at StartExecution, 14 s at CreateStateMachine, 7 s at redrives (py-spy,
docs/performance.md).

The tree depends only on the text, and moto's preprocessor only reads it. So each process parses a text
once and keeps the tree; it keeps the last ``KEPT`` texts. The program (moto's evaluation components) is
built from the tree anew at every call, as before, so no two executions share one. A text moto refuses
(syntax errors, or a preprocessor's) is never kept: its errors are raised at every call, as moto raises them.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from moto.stepfunctions.parser.asl.parse.asl_parser import AmazonStateLanguageParser
from moto.stepfunctions.parser.asl.parse.preprocessor import Preprocessor

KEPT = 32
_moto_parse = AmazonStateLanguageParser.parse  # taken before map_extras.install() puts its own in its place


class _Trees:
    lock = threading.Lock()
    by_text: OrderedDict[str, Any] = OrderedDict()


def parse(definition: str) -> tuple[Any, Any]:
    """(program, parse tree) of a definition, as moto's ``AmazonStateLanguageParser.parse`` returns them."""
    with _Trees.lock:
        tree = _Trees.by_text.get(definition)
        if tree is not None:
            _Trees.by_text.move_to_end(definition)
    if tree is not None:
        return Preprocessor().visit(tree), tree
    program, tree = _moto_parse(definition)  # its errors raised, nothing kept
    with _Trees.lock:
        _Trees.by_text[definition] = tree
        while len(_Trees.by_text) > KEPT:
            _Trees.by_text.popitem(last=False)
    return program, tree


def forget() -> None:
    """Drop every kept tree (tests)."""
    with _Trees.lock:
        _Trees.by_text.clear()
