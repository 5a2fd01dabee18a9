"""Regular expressions from a definition (a schema's ``pattern``, a rule's ``pattern``) run against text a
model wrote, which a hostile document can steer: a pattern that backtracks must not hold a worker.

Two guards (docs/security.md, "Regular expressions"):

- **At validate and at load** (``pattern_problem``): a pattern that does not compile, or has a shape whose
  backtracking is exponential (a repeated group that itself repeats, ``(a+)+``, or repeats a choice whose
  alternatives start alike, ``(a|aa)*``) is refused, with the pattern named. ``definition validate``,
  ``publish`` and every function that loads the bundle refuse it alike (functions/definition.py).
- **At run time** (``bounded``): what is left can still backtrack polynomially (``a*a*a*b`` against 1,000
  a's took 46 s, 2026-12-04, this machine). A check whose patterns have more than one unbounded repeat runs
  in a forked child under ``PATTERN_SECONDS``; past it the child is killed and the field or check fails with
  the pattern named. A pattern with at most one unbounded repeat (``^POL-[0-9]{6}$``, ``^[0-9]+\\.[0-9]{2}$``:
  nearly every pattern of a real schema) runs in place, as before.

A linear-time engine (google-re2, or ``regex`` with its ``timeout``) would be the better tool, but both are
compiled extensions: the functions' layer is built from this environment's installed files
(stacks/sdk_pins.py), for Python 3.13 on Lambda from 3.11 here, so only pure-Python code can be in it.
"""

from __future__ import annotations

import functools
import os
import pickle
import re
import select
import signal
import time
import warnings
from collections.abc import Callable, Iterable
from re import _parser as sre_parse  # type: ignore[attr-defined]  # the standard re module's own parser
from typing import Any, TypeVar

T = TypeVar("T")


class PatternTooSlow(ValueError):  # noqa: N818 (the outcome reads as the name)
    """Matching text against a definition's pattern ran past ``PATTERN_SECONDS``: the field or check fails."""


PATTERN_SECONDS = 1.0  # how long the checks of one reply may take against patterns that can backtrack
MAX_PATTERN_LENGTH = 1000
_UNBOUNDED = sre_parse.MAXREPEAT
_REPEATS = {sre_parse.MAX_REPEAT, sre_parse.MIN_REPEAT, getattr(sre_parse, "POSSESSIVE_REPEAT", object())}


def _nodes(parsed: Any) -> Iterable[tuple[Any, Any]]:
    """Every (op, argument) of a parsed pattern, depth first."""
    for op, argument in parsed:
        yield op, argument
        for sub in _children(op, argument):
            yield from _nodes(sub)


def _children(op: Any, argument: Any) -> list[Any]:
    if op in _REPEATS:
        return [argument[2]]
    if op is sre_parse.SUBPATTERN:
        return [argument[-1]]
    if op is sre_parse.BRANCH:
        return list(argument[1])
    if op in (sre_parse.ASSERT, sre_parse.ASSERT_NOT):
        return [argument[1]]
    if op is getattr(sre_parse, "ATOMIC_GROUP", None):
        return [argument]
    if op is sre_parse.GROUPREF_EXISTS:
        return [branch for branch in argument[1:] if branch is not None]
    return []


def _unbounded(op: Any, argument: Any) -> bool:
    return op in _REPEATS and argument[1] == _UNBOUNDED


_ANY = None  # a first character that cannot be told (any character may start the alternative)


def _first_characters(parsed: Any) -> set[int] | None:
    """The characters an alternative can start with, or None when that cannot be told cheaply."""
    for op, argument in parsed:
        if op is sre_parse.LITERAL:
            return {argument}
        if op is sre_parse.IN:
            found: set[int] = set()
            for item_op, item in argument:
                if item_op is sre_parse.LITERAL:
                    found.add(item)
                elif item_op is sre_parse.RANGE and item[1] - item[0] < 4096:
                    found.update(range(item[0], item[1] + 1))
                else:
                    return _ANY
            return found
        if op is sre_parse.SUBPATTERN:
            return _first_characters(argument[-1])
        if op in _REPEATS and argument[0] >= 1:
            return _first_characters(argument[2])
        if op is sre_parse.AT:  # an anchor takes no character: the next node starts the text
            continue
        return _ANY
    return _ANY


def _overlapping(branch: Any) -> bool:
    """True when two alternatives of a choice can start with the same character (``a|aa``): repeated, such a
    choice backtracks exponentially; ``foo|bar`` cannot."""
    seen: set[int] = set()
    for alternative in branch[1]:
        first = _first_characters(alternative)
        if first is _ANY or first & seen:
            return True
        seen |= first
    return False


def pattern_problem(pattern: str) -> str | None:
    """Why a definition's pattern is refused, or None."""
    if len(pattern) > MAX_PATTERN_LENGTH:
        return f"the pattern is {len(pattern):,} characters long; at most {MAX_PATTERN_LENGTH:,}"
    try:
        parsed = sre_parse.parse(pattern)
    except re.error as error:
        return f"the pattern {pattern!r} is not a regular expression: {error}"
    for op, argument in _nodes(parsed):
        if op not in _REPEATS or argument[1] in (0, 1):
            continue
        inner = list(_nodes(argument[2]))
        if any(_unbounded(*node) for node in inner) or (
            argument[1] == _UNBOUNDED
            and any(sub_op is sre_parse.BRANCH and _overlapping(sub) for sub_op, sub in inner)
        ):
            return (
                f"the pattern {pattern!r} repeats a group that itself repeats or chooses between "
                "alternatives that start alike: matching it can take exponential time on text a model "
                "writes; rewrite it without the nested repeat (e.g. (a+)+ as a+)"
            )
    return None


def can_backtrack(patterns: Iterable[str]) -> bool:
    """True when any pattern has more than one unbounded repeat (what ``bounded`` runs in a child)."""
    return any(_backtracks(pattern) for pattern in patterns)


@functools.lru_cache(maxsize=1024)
def _backtracks(pattern: str) -> bool:
    """One pattern's answer, parsed once per process: every reply of a job is checked against the same."""
    try:
        parsed = sre_parse.parse(pattern)
    except re.error:
        return False
    return sum(1 for node in _nodes(parsed) if _unbounded(*node)) > 1


def bounded(patterns: Iterable[str], work: Callable[[], T], seconds: float = PATTERN_SECONDS) -> T:
    """``work()`` (which matches ``patterns``), in a forked child under ``seconds`` where a pattern can
    backtrack, in place otherwise; PatternTooSlow when the child runs out of time."""
    named = list(patterns)
    if not can_backtrack(named) or not hasattr(os, "fork"):
        return work()
    read_end, write_end = os.pipe()
    with (
        warnings.catch_warnings()
    ):  # Python 3.12+ warns of fork in a process with threads: the child only matches
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # pragma: no cover (the child: coverage does not follow it)
        os.close(read_end)
        try:
            outcome: tuple[bool, Any] = (True, work())
        except BaseException as error:
            outcome = (False, error)
        try:
            data = pickle.dumps(outcome)
        except Exception as error:
            data = pickle.dumps((False, RuntimeError(f"unpicklable outcome: {error}")))
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(data)
        os._exit(0)
    os.close(write_end)
    answer: T = _await_child(pid, read_end, named, seconds)
    return answer


def _await_child(pid: int, read_end: int, patterns: list[str], seconds: float) -> Any:
    deadline = time.monotonic() + seconds
    chunks: list[bytes] = []
    with os.fdopen(read_end, "rb", buffering=0) as pipe:
        while True:
            left = deadline - time.monotonic()
            ready = select.select([pipe], [], [], max(left, 0))[0] if left > 0 else []
            if not ready:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                slow = [pattern for pattern in patterns if can_backtrack([pattern])]
                raise PatternTooSlow(
                    f"matching the reply against {', '.join(repr(p) for p in slow)} took over {seconds:g} s "
                    "(a pattern that backtracks on this text): the document is not checked further"
                )
            chunk = pipe.read(65536)
            if not chunk:
                break
            chunks.append(chunk)
    os.waitpid(pid, 0)
    ok, value = pickle.loads(b"".join(chunks))
    if ok:
        return value
    raise value
