"""A rule's ``expression``: a JSONata expression over the document's fields (the input) and the rows its
earlier lookups attached (each a variable named by its ``attach``: ``$account``), true when the rule holds
(docs/defining-a-job.md, "Checks"). JSONata is the one expression language of the kit: Step Functions' own,
evaluated by jsonata-python (pure Python, in the functions' layer: stacks/sdk_pins.py), as the local cloud
evaluates the workflow's.

    $sum(line_items.$number(amount)) = $number(total)         the items add up to the total
    end_date > start_date                                     ISO dates compare as text
    $number(total) <= $number($account.limit)                 within the attached row's limit

An expression is compiled at ``definition validate`` (a syntax error names the rule; so does a shape known to
be expensive: ``expression_problem``) and bounded when it runs, in this process (docs/security.md, "Regular
expressions and expressions", with the figures that chose this over a child process per evaluation):

- time and depth: jsonata-python's own bound (``TIMEOUT_MS``, ``MAX_DEPTH``), checked at every step;
- memory: at every ``MEMORY_EVERY``-th step the process's resident memory may have grown by at most
  ``MAX_GROWTH`` since the evaluation began;
- one step cannot allocate past a bound either, the checks above being between steps: a range holds at most
  ``MAX_RANGE`` items; ``$pad``, ``&``, ``$join`` and ``$replace`` make at most ``MAX_TEXT`` characters;
- regex literals are RE2's (functions/checks/patterns.py: linear time), and ``$eval`` (text evaluated as an
  expression: a document's text is a model's, which a document can steer) is refused.

A bound reached fails the rule, with the reason, never the job.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonata  # type: ignore[import-untyped]
from jsonata import jexception, timebox, utils
from jsonata.functions import Functions  # type: ignore[import-untyped]
from jsonata.parser import Parser  # type: ignore[import-untyped]

from functions.checks.patterns import jsonata_regex

TIMEOUT_MS = 1000  # one evaluation (jsonata-python checks it between steps)
MAX_DEPTH = 200  # nested evaluation frames
MAX_RANGE = 100_000  # items of one range ([1..n]): jsonata-python's own limit is 10,000,000
MAX_TEXT = 1_000_000  # characters of one string a step makes
MAX_PAIRWISE = 2_000  # items a step compares each with each ($distinct of objects)
MAX_GROWTH = 256 * 1024 * 1024  # bytes the process's resident memory may grow by during one evaluation
MEMORY_EVERY = 8  # steps between two reads of the resident memory (about 10 µs a read)
_STATM = Path("/proc/self/statm")  # Linux (Lambda): resident pages are its second figure


class ExpressionTooCostly(ValueError):  # noqa: N818 (the outcome reads as the name)
    """An evaluation reached one of the bounds above: the rule fails with this reason."""


def _resident_bytes() -> int | None:
    """The process's resident memory, or None where /proc is not (the time and size bounds still hold)."""
    try:
        return int(_STATM.read_bytes().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


class _Bounds(timebox.Timebox):  # type: ignore[misc]
    """jsonata-python's Timebox (time and depth at every step), with the memory bound added."""

    def __init__(self, evaluator: Any) -> None:
        super().__init__(evaluator.environment, TIMEOUT_MS, MAX_DEPTH)
        self.steps = 0
        self.baseline = _resident_bytes()

    def check_runaway(self) -> None:
        super().check_runaway()
        self.steps += 1
        if self.baseline is None or self.steps % MEMORY_EVERY:
            return
        now = _resident_bytes()
        if now is not None and now - self.baseline > MAX_GROWTH:
            raise ExpressionTooCostly(f"the expression used over {MAX_GROWTH // 2**20} MB of memory")


def _size(characters: int, what: str) -> None:
    if characters > MAX_TEXT:
        raise ExpressionTooCostly(f"{what} would make {characters:,} characters; at most {MAX_TEXT:,}")


def _text(value: str, what: str) -> str:
    _size(len(value), what)
    return value


def _width(width: Any) -> None:
    if isinstance(width, (int, float)) and abs(width) > MAX_TEXT:
        raise ExpressionTooCostly(f"$pad to {width:,.0f} characters; at most {MAX_TEXT:,}")


class _GuardedFunctions:
    """The built-in functions one call of which could allocate past the bounds, checked first (the same
    names and arguments as jsonata-python's Functions, which does the work)."""

    @staticmethod
    def pad(string: Any, width: Any, char: Any) -> Any:
        _width(width)
        return Functions.pad(string, width, char)

    @staticmethod
    def join(strings: Any, separator: Any) -> Any:
        if isinstance(strings, list):
            gaps = len(separator) * max(len(strings) - 1, 0) if isinstance(separator, str) else 0
            _size(sum(len(s) for s in strings if isinstance(s, str)) + gaps, "$join")
        return Functions.join(strings, separator)

    @staticmethod
    def replace(string: Any, pattern: Any, replacement: Any, limit: Any) -> Any:
        if not (isinstance(string, str) and isinstance(replacement, str) and pattern):
            return Functions.replace(string, pattern, replacement, limit)  # its own errors, or a function's
        # at most a match per character, and one more (an empty match at the end)
        found = string.count(pattern) if isinstance(pattern, str) else len(string) + 1
        count = found if not isinstance(limit, (int, float)) else min(found, max(int(limit), 0))
        # each match becomes the replacement, whose $0, $1... can each insert up to the whole text (a regex
        # match's own length is not known before: none is taken off)
        removed = len(pattern) if isinstance(pattern, str) else 0
        per_match = len(replacement) + replacement.count("$") * len(string) - removed
        _size(len(string) + count * per_match, "$replace")
        if isinstance(pattern, str):
            # jsonata-python 0.7.1 copies the rest of the text at each match of a text pattern (quadratic);
            # str.replace gives the same, one match's replacement being the pattern replaced in itself
            one = Functions.replace(pattern, pattern, replacement, None)
            return string.replace(pattern, one, count)
        if limit is not None:  # jsonata-python replaces once per pass over the whole text, ``limit`` times
            _size(count * len(string), f"$replace with a limit of {limit} over {len(string):,} characters")
            limit = count
        return Functions.replace(string, pattern, replacement, limit)

    @staticmethod
    def distinct(values: Any) -> Any:
        """jsonata-python compares each item with every one kept (a list's ``in``): 100,000 numbers took
        109 s. Scalars are kept by one pass of a dict (the same equality); objects and arrays, pairwise, only
        up to ``MAX_PAIRWISE`` items."""
        if not isinstance(values, list) or len(values) <= 1:
            return Functions.distinct(values)
        try:
            unique = list(dict.fromkeys(values))
        except TypeError:  # an object or an array among them
            if len(values) > MAX_PAIRWISE:
                raise ExpressionTooCostly(
                    f"$distinct of {len(values):,} objects or arrays; at most {MAX_PAIRWISE:,}"
                ) from None
            return Functions.distinct(values)
        kept = utils.Utils.create_sequence() if isinstance(values, utils.Utils.JList) else []
        kept.extend(unique)
        return kept

    @staticmethod
    def function_eval(expression: Any, focus: Any) -> Any:
        raise ExpressionTooCostly("$eval is refused: it would evaluate a document's text as an expression")


# Each guarded function with jsonata-python 0.7.1's signature for it (jsonata/jsonata.py register_functions).
_GUARDED = {
    "pad": ("<s-ns?:s>", "pad"),
    "join": ("<a<s>s?:s>", "join"),
    "replace": ("<s-(sf)(sf)n?:s>", "replace"),
    "distinct": ("<x:x>", "distinct"),
    "eval": ("<sx?:x>", "function_eval"),
}


class _Evaluator(jsonata.Jsonata):  # type: ignore[misc]
    """jsonata-python's evaluator with a range's size and a concatenation's length bounded."""

    def evaluate_range_expression(self, lhs: Any, rhs: Any) -> Any:
        if isinstance(lhs, int) and isinstance(rhs, int) and rhs - lhs + 1 > MAX_RANGE:
            raise ExpressionTooCostly(f"a range of {rhs - lhs + 1:,} items; at most {MAX_RANGE:,}")
        return super().evaluate_range_expression(lhs, rhs)

    def evaluate_string_concat(self, lhs: Any, rhs: Any) -> str:
        return _text(super().evaluate_string_concat(lhs, rhs), "&")


def _compiled(expression: str) -> Any:
    """A new evaluator for each evaluation, never a cached one: jsonata-python starts an expression's time
    bound when it is set (its Timebox, jsonata/timebox.py: ``self.time`` set in the constructor) and counts
    its depth on the instance, so an evaluator kept in a warm container fails every evaluation a second after
    it was compiled ("Evaluation timeout after 1000 milliseconds"), and threads sharing one (the local cloud's
    workers) share its depth. Parsing an expression of a rule takes well under a millisecond."""
    evaluator = _Evaluator(expression, jsonata_regex)
    for name, function in _guarded_functions().items():
        evaluator.register_function(name, function)
    _Bounds(evaluator)
    return evaluator


@functools.cache
def _guarded_functions() -> dict[str, Any]:
    """The guarded functions as jsonata-python calls them, made once per process (they hold no state of an
    evaluation: a signature and a method)."""
    return {
        name: jsonata.Jsonata.JNativeFunction(name, signature, _GuardedFunctions, method)
        for name, (signature, method) in _GUARDED.items()
    }


def _nodes(node: Any) -> Iterator[Any]:
    """Every node of a parsed expression (jsonata-python's Parser.Symbol), depth first."""
    seen: set[int] = set()
    pending = [node]
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        for key, value in vars(current).items():
            if key.startswith("_"):
                continue
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, Parser.Symbol):
                    pending.append(item)


def _number(node: Any) -> float | None:
    return float(node.value) if node is not None and node.type == "number" else None


def _costly_shape(ast: Any) -> str | None:
    """A shape known to be expensive, written out in the expression: ``$eval``, a range of literal bounds
    over ``MAX_RANGE`` items, ``$pad`` to a literal width over ``MAX_TEXT``."""
    for node in _nodes(ast):
        if node.type == "variable" and node.value == "eval":
            return "$eval is refused: it evaluates text (a model's, which a document steers) as an expression"
        if node.type == "binary" and node.value == "..":
            low, high = _number(node.lhs), _number(node.rhs)
            if low is not None and high is not None and high - low + 1 > MAX_RANGE:
                size = high - low + 1
                return f"the range [{low:.0f}..{high:.0f}] holds {size:,.0f} items; at most {MAX_RANGE:,}"
        if node.type == "function" and getattr(node.procedure, "value", None) == "pad":
            arguments = node.arguments or []
            width = _number(arguments[1]) if len(arguments) > 1 else None
            if width is not None and abs(width) > MAX_TEXT:
                return f"$pad to {width:,.0f} characters; at most {MAX_TEXT:,}"
    return None


def expression_problem(expression: str) -> str | None:
    """Why an expression is refused (it does not compile, a regex literal RE2 cannot run, a costly shape),
    or None."""
    try:
        evaluator = _compiled(expression)
    except jexception.JException as error:
        return f"the expression does not compile: {error}"
    except ValueError as error:  # a regex literal RE2 cannot run (functions/checks/patterns.py)
        return f"the expression does not compile: {error}"
    except RecursionError:  # jsonata-python's parser recurses once per nested bracket
        return "the expression nests too deeply to compile"
    costly = _costly_shape(evaluator.ast)
    return None if costly is None else f"the expression is refused: {costly}"


def expression_failure(expression: str, fields: dict[str, Any], attached: dict[str, Any]) -> str | None:
    """None when the expression gives ``true`` for these fields and attached rows; else why not."""
    try:
        value = _compiled(expression).evaluate(fields, dict(attached))
    except RecursionError:
        return "the expression nested too deeply"
    except MemoryError:
        return "the expression ran out of memory"
    except Exception as error:  # jsonata-python raises its JException and Python's own (ValueError, ...)
        return f"the expression failed: {error}"
    if value is True:
        return None
    if value is False:
        return f"{expression} is false"
    if value is None:
        return f"{expression} gave no value (does it read a field this document lacks?)"
    return f"{expression} gave {value!r}, not true or false"
