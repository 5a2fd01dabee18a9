"""A definition's parse tree, made once a process, and for a large definition once a machine.

moto parses a state machine's definition with ANTLR at every CreateStateMachine and UpdateStateMachine (to
validate it), every StartExecution and every redrive. For the document-review workflow (16 KB) that is 0.11 s
of CPU, and 0.19 s for a process's first parse (measured 2026-12-03). In the integration tests it was 9 % of
the Python CPU: 21 s at StartExecution, 14 s at CreateStateMachine, 7 s at redrives (py-spy,
docs/performance.md).

The tree depends only on the text, and moto's preprocessor only reads it. So each process parses a text
once and keeps the tree; it keeps the last ``KEPT`` texts. The program (moto's evaluation components) is
built from the tree anew at every call, as before, so no two executions share one. A text moto refuses
(syntax errors, or a preprocessor's) is never kept: its errors are raised at every call, as moto raises them.

Every local cloud deploys the same workflow (28 KB once synthesized), so each paid that first parse again in
its own process: 0.24 s of CPU, about half of a deploy's (a py-spy profile of a cloud's start and deploy,
2026-12-08). A tree of a definition of ``STORED_FROM_CHARS`` or more is therefore also kept on disk
(``project.PARSE_CACHE``) by the hash of its text and of the versions that made it (moto's, ANTLR's runtime,
Python's): a later process reads it (0.02 s) instead of parsing. Writing costs about half a parse, which a
small definition, seldom parsed in a second process, would not win back. A tree is pickled without its
parser and lexer (the ANTLR objects that made it: the tree's contexts point at the parser, its tokens at the
lexer, and neither is read by moto's preprocessor; the tokens keep their input stream, from which they read
their text). A file that cannot be read (cut short, or from another version) is parsed again and rewritten.
The files are this project's own, written next to its code cache (whose code the local cloud runs).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.metadata
import io
import os
import pickle
import sys
import tempfile
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

import moto
from moto.stepfunctions.parser.asl.antlr.runtime.ASLLexer import ASLLexer
from moto.stepfunctions.parser.asl.antlr.runtime.ASLParser import ASLParser
from moto.stepfunctions.parser.asl.parse.asl_parser import AmazonStateLanguageParser
from moto.stepfunctions.parser.asl.parse.preprocessor import Preprocessor

from docagent import project

KEPT = 32
STORED_FROM_CHARS = 8_000  # definitions at least this long keep their tree on disk too
STORED = 16  # the newest files kept on disk
FORMAT = 1  # bumped when what a file holds changes
# What unpickling a file cut short, or written by another version of a class, raises.
_UNREADABLE = (
    pickle.UnpicklingError,
    EOFError,
    AttributeError,
    ImportError,
    LookupError,
    TypeError,
    ValueError,
)
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
    if tree is None:
        tree = _stored(definition)
        if tree is not None:
            _keep(definition, tree)
    if tree is not None:
        return Preprocessor().visit(tree), tree
    program, tree = _moto_parse(definition)  # its errors raised, nothing kept
    _keep(definition, tree)
    _store(definition, tree)
    return program, tree


def _keep(definition: str, tree: Any) -> None:
    with _Trees.lock:
        _Trees.by_text[definition] = tree
        while len(_Trees.by_text) > KEPT:
            _Trees.by_text.popitem(last=False)


def forget() -> None:
    """Drop every kept tree of this process (tests); the files on disk stay."""
    with _Trees.lock:
        _Trees.by_text.clear()


@functools.cache
def _versions() -> str:
    runtime = importlib.metadata.version("antlr4-python3-runtime")
    return f"{FORMAT} {moto.__version__} {runtime} {sys.version_info[0]}.{sys.version_info[1]}"


def _path(definition: str) -> Path:
    digest = hashlib.sha256(f"{_versions()}\n{definition}".encode()).hexdigest()
    return project.PARSE_CACHE / f"{digest[:40]}.pickle"


def _stored(definition: str) -> Any:
    """The tree kept on disk for this text, or None (none kept, or a file that cannot be read)."""
    if len(definition) < STORED_FROM_CHARS:
        return None
    try:
        data = _path(definition).read_bytes()
    except OSError:
        return None
    try:
        return pickle.loads(data)  # the project's own cache (module docstring)
    except _UNREADABLE:
        return None


def _without_recognizer(recognizer: object) -> tuple[type[None], tuple[()]]:
    """Pickles the parser or lexer a tree points at as None."""
    return type(None), ()


def _store(definition: str, tree: Any) -> None:
    """Write the tree to disk for later processes (a large definition only); nothing when it cannot be."""
    if len(definition) < STORED_FROM_CHARS:
        return
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = {ASLParser: _without_recognizer, ASLLexer: _without_recognizer}
    try:
        pickler.dump(tree)
    except (pickle.PicklingError, RecursionError, TypeError, AttributeError):
        return
    path = _path(definition)
    part = ""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, suffix=".part", delete=False) as file:
            part = file.name
            file.write(buffer.getvalue())
        os.replace(part, path)  # whole or not at all, whichever process writes it
    except OSError:
        if part:
            with contextlib.suppress(OSError):
                os.unlink(part)
        return
    _prune(path.parent)


def _prune(folder: Path) -> None:
    """Keep the ``STORED`` newest files (each edit of the workflow makes a new one, about 0.5 MB)."""
    files = []
    for path in folder.glob("*.pickle"):
        with contextlib.suppress(OSError):
            files.append((path.stat().st_mtime, path))
    for _, path in sorted(files, reverse=True)[STORED:]:
        with contextlib.suppress(OSError):
            path.unlink()
