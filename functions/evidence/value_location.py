"""Where a value is printed when the model gave no quote for it (docs/design.md, "Evidence and confidence", "A
value without a quote"; issue #54): a field read verbatim carries its page only, and the value itself is
looked for in the page texts, by its own text or as its schema reads it (a date, an amount, a code by its
digits: functions/evidence/grounding.py ``value_agrees``), on the lines that name the field when there are
any.

Pure functions of the page texts, the value and its schema; functions/evidence/grounding.py
``located_by_value`` turns what is found into the field's evidence. Every field of a document walks the
same pages, so a page's lines are split and normalised once (``_page_lines``, remembered by the page's text),
a page whose text does not hold the value's own is not walked for it, and a line's dates and amounts are
read once (functions/evidence/quote_matching.py ``dates_in``): the grounding was 15 % of the 200-document
demo's CPU before (py-spy, 2026-12-08, docs/performance.md "Grounding, fifth pass");
tests/unit/test_value_location_equivalence.py holds the results to the line walk as first written.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from pydantic import JsonValue

from functions.evidence.quote_matching import (
    DATE_LIKE,
    NUMBER_LIKE,
    Located,
    amounts_in,
    dates_in,
    normalised,
    value_agrees,
)


@dataclass(frozen=True)
class _Line:
    """A line of a page: where it starts in the page's text, its text, and that text normalised."""

    start: int
    text: str
    normal: Any  # quote_matching's _Normalised: its text, and its span() back into ``text``

    @functools.cached_property
    def padded(self) -> str:
        """Its normalised text between spaces (an anchor " policy " is a whole word of it)."""
        return f" {self.normal.text} "


@dataclass(frozen=True)
class _Page:
    """A page's text normalised as a whole, and its lines."""

    normal: str
    lines: tuple[_Line, ...]


@functools.lru_cache(maxsize=16)
def _page_lines(text: str) -> _Page:
    """``text``'s lines (runs of characters but newlines), each normalised once: for every field of a
    document (``normalised.__wrapped__``: the lines do not push the page texts out of ``normalised``'s
    cache). A few documents' pages are remembered."""
    normalise = normalised.__wrapped__
    lines = tuple(
        _Line(found.start(), found.group(0), normalise(found.group(0)))
        for found in re.finditer(r"[^\n]+", text)
    )
    return _Page(normalise(text).text, lines)


def locate_value(
    value: JsonValue, pages: list[str], page: int, schema: dict[str, Any], name: str = ""
) -> Located | None:
    """Where ``value`` is printed: on ``page`` (1-based) first, then the other pages in order; on each page
    the first line holding the value's own text (case and whitespace normalised), else the first line it
    agrees with as the schema reads it (``value_agrees``: a date, an amount, a code by its digits), narrowed
    to the date or number read when there is one. Lines that name the field (``_anchored``: "Due date"
    for ``due_date``) are the only ones looked at when there are any: a page's other dates are no
    reading of its due date."""
    order = [page - 1] + [index for index in range(len(pages)) if index != page - 1]
    wanted = normalised(str(value)).text
    texts = {index: _page_lines(pages[index]) for index in order if 0 <= index < len(pages)}
    lines = {index: found.lines for index, found in texts.items()}
    anchored = _anchored(lines, name, value, schema)
    read = schema.get("x-normalise") in {"date", "amount"} or schema.get("format") == "date"
    # the value's own text as a whole word ("EUR" is not the start of "EUROPE")
    whole_word = re.compile(rf"(?<!\w){re.escape(wanted)}(?!\w)") if wanted else None
    for exact in (True, False):
        # a value printed as it is is found anywhere, but a date or an amount (one of several a page prints)
        # and any value read from other text (a code by its digits) only on the lines naming the field
        restricted = bool(anchored) and (read or not exact)
        for index, found in lines.items():
            # A line's normalised text is a run of its page's (the page's whitespace runs, its newlines among
            # them, are one space, and lowering the page lowers each line as lowering the line does: no
            # character lowers to whitespace, and a capital sigma is read alike): a page whose text does not
            # hold the value's has no line that holds it.
            if exact and (whole_word is None or wanted not in texts[index].normal):
                continue
            for line in anchored.get(index, ()) if restricted else found:
                span = _exact_span(line, whole_word) if exact else _read_span(value, line, wanted, schema)
                if span is not None:
                    start, end = span
                    return Located(index + 1, line.start + start, line.start + end, 100.0, exact=True)
    return None


# Words of a field's name that say its kind, not which of the document's values it is.
_KIND_WORDS = frozenset({"date", "number", "no", "id", "amount", "total", "code", "value", "name", "type"})


def _anchored(
    lines: dict[int, tuple[_Line, ...]], name: str, value: JsonValue, schema: dict[str, Any]
) -> dict[int, list[_Line]]:
    """The lines, by page, that name the field and hold a value of its kind: its whole name when it has two
    words or more (``due_date``: "due date"), else, for a value read rather than printed as it is
    (a date, a number, a code by its digits), a word of its name that is not a kind word ("policy",
    "account": a page's "Account no.: 19" names ``account_id``), else a code's own letters; {} when no
    line does (every line is then looked at)."""
    words = name.replace("_", " ").replace("-", " ").lower().split()
    read_as = schema.get("x-normalise")
    if read_as == "date" or schema.get("format") == "date":
        kind = "date"
    elif read_as == "amount" or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        kind = "number"
    elif any(char.isdigit() for char in str(value)):
        kind = "digits"
    else:
        kind = "text"

    def holds_kind(text: str) -> bool:
        if kind == "date":
            return bool(dates_in(text))
        if kind == "number":
            return bool(amounts_in(text))
        return kind == "text" or any(char.isdigit() for char in text)

    anchors = [" ".join(words)] if len(words) > 1 else []  # one word ("amount") is too common an anchor
    if kind != "text" and len(words) > 1:
        anchors += [f" {word} " for word in words if word not in _KIND_WORDS]
    if kind == "digits":  # a code's letters ("ACCT-00019": "acct", in "ACCT-00019" and "Acct no.")
        anchors += [run.lower() for run in re.findall(r"[A-Za-z]{3,}", str(value))]
    for anchor in anchors:
        found = {
            index: [line for line in page if anchor in line.padded and holds_kind(line.text)]
            for index, page in lines.items()
        }
        if any(found.values()):
            return found
    return {}


def _exact_span(line: _Line, whole_word: re.Pattern[str] | None) -> tuple[int, int] | None:
    """The span of ``line`` that holds the value's own text as a whole word (``whole_word``; None: an empty
    value, never), None when it does not."""
    found = None if whole_word is None else whole_word.search(line.normal.text)
    return None if found is None else line.normal.span(found.start(), found.end(), line.text)


def _read_span(value: JsonValue, line: _Line, wanted: str, schema: dict[str, Any]) -> tuple[int, int] | None:
    """The span of ``line`` that holds ``value`` as the schema reads it: the date or number the schema reads
    it from, else the line's text when it agrees as a whole; None when the line does not hold it."""
    # the value's text inside a longer word is no reading of it ("EUR" in "EUROPE"): agreement by another
    # rule (digits, a currency symbol, a date or an amount read) only
    scrubbed = line.normal.text.replace(wanted, " ") if wanted else line.text
    if value_agrees(value, scrubbed, schema) is not True:
        return None
    text = line.text
    read_as = schema.get("x-normalise")
    if read_as == "date" or schema.get("format") == "date":
        for match in DATE_LIKE.finditer(text):
            if str(value) in dates_in(match.group(0)):
                return match.span()
    if read_as == "amount" or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        for match in NUMBER_LIKE.finditer(text):
            if value_agrees(value, match.group(0), schema) is True:
                return match.span()
    stripped = text.strip()
    start = text.index(stripped) if stripped else 0
    return start, start + len(stripped)
