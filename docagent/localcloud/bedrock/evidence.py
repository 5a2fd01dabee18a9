"""The local model's evidence (docs/design.md, "Evidence and confidence"): each value of an extract reply
quoted from the document, as a real model is asked to (functions/inference/evidence.py). A label may give a
field's supporting text (its ``_evidence``, docagent/kit/samples.py: a summary's or a judgement's, which is
not the value), quoted on the page that holds it; otherwise each value's own text is looked for in the
document's page texts, line by line, and the line that holds it is the quote. A value the document does not
hold gets itself as the quote (and the grounding check then finds it not grounded, as it should). A reply
that carries its own ``_evidence`` (a reader's) is kept as it is. As a model reads its prompt, only the
fields the prompt asks quotes for are quoted; every other value gets the number of the page it is on
(functions/inference/evidence.py), so the output tokens the local endpoint counts are what a real model's
reply to that prompt would take.

The ``misquote=FIELD[:RATE]`` fault (ModelFaults) replaces that field's quotes with a sentence the document
does not hold.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any, NamedTuple

from pydantic import JsonValue

from functions.evidence.grounding import leaves
from functions.evidence.grounding_modes import schema_path
from functions.evidence.quote_matching import locate, normalised, value_agrees
from functions.inference.evidence import EVIDENCE_KEY

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_AMOUNT = re.compile(r"^-?\d+\.\d{2}$")
MISQUOTE = "as confirmed to the adjuster by telephone: {value}"


def _holds(line: str, value: JsonValue) -> bool:
    """Whether ``line`` holds ``value``, read as the grounding check reads it (a value shaped as a date or an
    amount as those)."""
    text = str(value)
    schema = {"x-normalise": "date"} if _DATE.match(text) else {}
    if _AMOUNT.match(text):
        schema = {"x-normalise": "amount"}
    return value_agrees(value, line, schema) is True


def quote_for(value: JsonValue, pages: list[str]) -> dict[str, JsonValue]:
    """The first line of the document that holds ``value`` as it is written, else the first that holds it as
    the grounding check reads it, with its page; else the value itself on page 1."""
    return found_quote(value, pages) or {"quote": str(value), "page": 1}


def found_quote(value: JsonValue, pages: list[str]) -> dict[str, JsonValue] | None:
    """``quote_for``'s quote when the document holds ``value``, else None."""
    wanted = normalised(str(value)).text
    verbatim = isinstance(value, str) and not _DATE.match(value) and not _AMOUNT.match(value)

    def as_written(line: _Line) -> bool:
        return verbatim and wanted in line.normal

    for holds in (as_written, lambda line: _holds(line.text, value)):
        for number, page in enumerate(pages, start=1):
            for line in _lines(page):
                if holds(line):
                    return {"quote": line.quote, "page": number}
    return None


class _Line(NamedTuple):
    text: str
    quote: str  # stripped
    normal: str  # normalised


@functools.lru_cache(maxsize=16)
def _lines(page: str) -> tuple[_Line, ...]:
    """A page's lines that are not blank, each normalised once for all of a reply's values (#51: a line
    normalised once a value, through a cache the lines pushed the pages out of, was 1.2 % of the demo's CPU,
    2026-12-08)."""
    normalise = normalised.__wrapped__
    return tuple(
        _Line(line, line.strip(), normalise(line).text) for line in page.splitlines() if line.strip()
    )


def given_quote(text: str, pages: list[str]) -> dict[str, JsonValue]:
    """A label's supporting ``text`` for a field as the local model quotes it: on the page that holds it
    (page 1 when none does)."""
    found = locate(text, pages, 1)
    return {"quote": text, "page": found.page if found is not None else 1}


def with_evidence(
    reply: str, pages: list[str], given: dict[str, str] | None = None, quoted: list[str] | None = None
) -> str:
    """An extract reply with ``_evidence`` for each of its values, ``given``'s text (a label's quotes by
    path) where it names one (a reply that has ``_evidence``, or is no JSON object, is returned as it is).
    ``quoted``: the fields the prompt asks quotes for (functions/inference/evidence.py ``asked_quotes``),
    every other value given its page number alone; None: a quote for every value."""
    try:
        fields: Any = json.loads(reply)
    except ValueError:
        return reply
    if not isinstance(fields, dict) or EVIDENCE_KEY in fields:
        return reply
    given = given or {}

    def evidence(path: str, value: JsonValue) -> JsonValue:
        if path in given:
            return given_quote(given[path], pages)
        if quoted is None or schema_path(path) in quoted:
            return quote_for(value, pages)
        return (found_quote(value, pages) or {"page": 1})["page"]

    quotes = {path: evidence(path, value) for path, value, _ in leaves(fields, {})}
    body = reply.rstrip()[:-1]  # the reply as it is (its size and layout), one key added at its end
    separator = ", " if fields else " "
    return f"{body}{separator}{json.dumps(EVIDENCE_KEY)}: {json.dumps(quotes)}}}"


def misquoted(reply: str, field: str) -> str:
    """``reply`` with every quote of ``field`` (and of its nested values) replaced by one the document does
    not hold."""
    try:
        data: Any = json.loads(reply)
    except ValueError:
        return reply
    quotes = data.get(EVIDENCE_KEY) if isinstance(data, dict) else None
    if not isinstance(quotes, dict):
        return reply
    for path, item in quotes.items():
        if not (path == field or path.startswith((f"{field}.", f"{field}["))):
            continue
        if isinstance(item, dict):
            item["quote"] = MISQUOTE.format(value=json.dumps(data.get(field)))
        elif isinstance(item, int):  # a page alone: a quote the document does not hold, on that page
            quotes[path] = {"quote": MISQUOTE.format(value=json.dumps(data.get(field))), "page": item}
    return json.dumps(data)
