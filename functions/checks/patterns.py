"""Regular expressions from a definition (a schema's ``pattern``, a rule's ``pattern``, a JSONata regex
literal in a rule's ``expression``) run against text a model wrote, which a hostile document can steer: no
pattern may hold a worker. Every one of them is matched by RE2 (google-re2), whose matching time is linear in
the text whatever the pattern: no backtracking, so no input makes ``^(a|aa){1,80}$`` or ``^(\\w+\\s?)*$``
slow (docs/security.md, "Regular expressions and expressions", with the figures that chose it).

``pattern_problem`` (``definition validate``, ``publish``) refuses a pattern RE2 cannot compile: a
backreference, a lookaround, a repeat count over 1,000 (``a{0,10000}``), or a program over RE2's memory
budget. The same pattern must also compile in Python's ``re``: fastjsonschema compiles each schema pattern
with it before ``linear_patterns`` swaps the compiled pattern for RE2's.

RE2's syntax is Perl's, as Python's and ECMA-262's (JSON Schema's dialect) are; where they differ RE2 sits
with ECMA-262: ``\\d`` and ``\\w`` are ASCII, and ``$`` matches at the very end of the text only (Python's
also before a final newline; fastjsonschema rewrites ``$`` as ``\\Z`` for the same reason).

The engine is a compiled extension: its manylinux wheels (cp313, x86_64 and aarch64) ship in the document
layer (stacks/sdk_pins.py DOCUMENT_DISTRIBUTIONS), as Pillow's and lxml's do.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from typing import Any

import re2  # type: ignore[import-untyped]  # google-re2: no type information
from jsonata.regex_engine import CompiledPattern, RegexFlags  # type: ignore[import-untyped]

MAX_PATTERN_LENGTH = 1000
# The longest text a JSONata regex function ($match, $replace, $split) walks match by match: google-re2's
# Python wrapper costs about 11 µs a match (finditer over 60,000 one-character matches: 0.38 s, this machine,
# 2026-12-07), so a text of this size takes well under the expression's second. A document's fields are at
# most functions/checks/fields.py MAX_REPLY_CHARS (10,000) characters; only a text an expression built is
# longer.
MAX_REGEX_TEXT = 20_000


@functools.lru_cache(maxsize=1024)
def compiled(pattern: str) -> Any:
    """RE2's program for a pattern, compiled once per process (every reply of a job is matched against the
    same); ``re2.error`` when RE2 cannot run it. Errors are not logged to stderr (RE2's default)."""
    options = re2.Options()
    options.log_errors = False
    return re2.compile(pattern, options)


def _reason(error: Exception) -> str:
    detail = error.args[0] if error.args else error
    return detail.decode(errors="replace") if isinstance(detail, bytes) else str(detail)


def _not_linear(pattern: str, error: Exception) -> str:
    return (
        f"the pattern {pattern!r} cannot run in linear time (RE2: {_reason(error)}): no backreferences, "
        "lookarounds, or repeat counts over 1,000"
    )


def pattern_problem(pattern: str) -> str | None:
    """Why a definition's pattern is refused, or None."""
    if len(pattern) > MAX_PATTERN_LENGTH:
        return f"the pattern is {len(pattern):,} characters long; at most {MAX_PATTERN_LENGTH:,}"
    try:
        re.compile(pattern)
    except (re.error, OverflowError, RecursionError) as error:
        return f"the pattern {pattern!r} is not a regular expression: {error}"
    try:
        compiled(pattern)
    except re2.error as error:
        return _not_linear(pattern, error)
    return None


def matches(pattern: str, text: str) -> bool:
    """True when ``pattern`` matches somewhere in ``text`` (Python's ``re.search``), in linear time."""
    return compiled(pattern).search(text) is not None


def linear_patterns(validator: Callable[[Any], Any], patterns: Iterable[str]) -> Callable[[Any], Any]:
    """A fastjsonschema validator whose schema ``patterns`` are matched by RE2. fastjsonschema (2.21) keeps
    the compiled patterns of the code it generates in the ``REGEX_PATTERNS`` table of the validator's globals,
    keyed by the schema's pattern, and only calls ``.search`` on them: swapping each entry for RE2's program
    is the one place its matching is changed (its own format patterns are left as they are)."""
    table = getattr(validator, "__globals__", {}).get("REGEX_PATTERNS")
    for pattern in patterns:
        if isinstance(table, dict) and pattern in table:
            table[pattern] = compiled(pattern)
    return validator


def jsonata_regex(pattern: str, flags: RegexFlags) -> CompiledPattern:
    """jsonata-python's regex engine (its ``regex_engine`` argument, 0.7): a JSONata regex literal
    (``/^(\\w+\\s?)*$/i``) compiled by RE2 when the expression is parsed, so ``definition validate`` refuses
    one RE2 cannot run (ValueError), and ``$contains``, ``$match``, ``$replace`` and ``$split`` match in
    linear time."""
    inline = ("i" if flags.case_insensitive else "") + ("m" if flags.multiline else "")
    try:
        return _WalkBounded(compiled(f"(?{inline}){pattern}" if inline else pattern))
    except re2.error as error:
        raise ValueError(_not_linear(f"/{pattern}/", error)) from None


class _WalkBounded:
    """RE2's program for a JSONata regex literal: ``search`` as it is (one pass, in C), and the match-by-match
    walks (``finditer``, ``sub``, ``split``) only over a text of at most ``MAX_REGEX_TEXT`` characters."""

    def __init__(self, program: Any) -> None:
        self.program = program

    def __getattr__(self, name: str) -> Any:  # pattern, groups, search, match...: RE2's own
        return getattr(self.program, name)

    def _walkable(self, string: Any) -> Any:
        if isinstance(string, str) and len(string) > MAX_REGEX_TEXT:
            raise ValueError(
                f"a regular expression walked over {len(string):,} characters; at most {MAX_REGEX_TEXT:,}"
            )
        return string

    def finditer(self, string: str, *args: Any) -> Any:
        return self.program.finditer(self._walkable(string), *args)

    def sub(self, repl: Any, string: str, count: int = 0) -> Any:
        return self.program.sub(repl, self._walkable(string), count)

    def split(self, string: str, maxsplit: int = 0) -> Any:
        return self.program.split(self._walkable(string), maxsplit)
