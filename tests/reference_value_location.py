"""The reference of ``locate_value`` (functions/evidence/value_location.py as it was at 0f00d7e, before #51's
fifth pass made it cheap): the line walk as first written, kept only so tests/unit/test_value_location_
equivalence.py can hold the fast one to exactly its results; and the local model's ``found_quote``
(docagent/localcloud/bedrock/evidence.py) as it was then. Not used by the product."""

from __future__ import annotations

import re
from collections.abc import Iterator
from decimal import Decimal, InvalidOperation
from typing import Any

from pydantic import JsonValue

from functions.checks.fields import normalise_amount, normalise_date
from functions.evidence.quote_matching import (
    CURRENCY_SYMBOLS,
    DATE_LIKE,
    FUZZY_THRESHOLD,
    NUMBER_LIKE,
    Located,
    normalised,
    token_set_ratio,
)


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
    lines = {index: list(re.finditer(r"[^\n]+", pages[index])) for index in order if 0 <= index < len(pages)}
    anchored = _anchored(lines, name, value, schema)
    read = schema.get("x-normalise") in {"date", "amount"} or schema.get("format") == "date"
    for exact in (True, False):
        # a value printed as it is is found anywhere, but a date or an amount (one of several a page prints)
        # and any value read from other text (a code by its digits) only on the lines naming the field
        restricted = bool(anchored) and (read or not exact)
        for index, found in lines.items():
            for line in anchored.get(index, []) if restricted else found:
                span = _value_span(value, line.group(0), wanted, schema, exact=exact)
                if span is not None:
                    start, end = span
                    return Located(index + 1, line.start() + start, line.start() + end, 100.0, exact=True)
    return None


# Words of a field's name that say its kind, not which of the document's values it is.
_KIND_WORDS = frozenset({"date", "number", "no", "id", "amount", "total", "code", "value", "name", "type"})


def _anchored(
    lines: dict[int, list[re.Match[str]]], name: str, value: JsonValue, schema: dict[str, Any]
) -> dict[int, list[re.Match[str]]]:
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
            return any(True for _ in date_candidates(text))
        if kind == "number":
            return any(True for _ in amount_candidates(text))
        return kind == "text" or any(char.isdigit() for char in text)

    anchors = [" ".join(words)] if len(words) > 1 else []  # one word ("amount") is too common an anchor
    if kind != "text" and len(words) > 1:
        anchors += [f" {word} " for word in words if word not in _KIND_WORDS]
    if kind == "digits":  # a code's letters ("ACCT-00019": "acct", in "ACCT-00019" and "Acct no.")
        anchors += [run.lower() for run in re.findall(r"[A-Za-z]{3,}", str(value))]
    for anchor in anchors:
        found = {
            index: [
                line for line in page if anchor in f" {normalised(line[0]).text} " and holds_kind(line[0])
            ]
            for index, page in lines.items()
        }
        if any(found.values()):
            return found
    return {}


def _value_span(
    value: JsonValue, line: str, wanted: str, schema: dict[str, Any], *, exact: bool
) -> tuple[int, int] | None:
    """The span of ``line`` that holds ``value``: its own text (``exact``), else the date or number the
    schema reads it from, else the line's text when it agrees as a whole; None when the line does not
    hold it."""
    if exact:  # the value's own text as a whole word ("EUR" is not the start of "EUROPE")
        text = normalised(line)
        found = re.search(rf"(?<!\w){re.escape(wanted)}(?!\w)", text.text) if wanted else None
        return None if found is None else text.span(found.start(), found.end(), line)
    # the value's text inside a longer word is no reading of it ("EUR" in "EUROPE"): agreement by another
    # rule (digits, a currency symbol, a date or an amount read) only
    scrubbed = re.sub(re.escape(wanted), " ", normalised(line).text) if wanted else line
    if value_agrees(value, scrubbed, schema) is not True:
        return None
    read_as = schema.get("x-normalise")
    if read_as == "date" or schema.get("format") == "date":
        for match in DATE_LIKE.finditer(line):
            if str(value) in set(date_candidates(match.group(0))):
                return match.span()
    if read_as == "amount" or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        for match in NUMBER_LIKE.finditer(line):
            if value_agrees(value, match.group(0), schema) is True:
                return match.span()
    stripped = line.strip()
    start = line.index(stripped) if stripped else 0
    return start, start + len(stripped)


# functions/evidence/quote_matching.py's readings of a value as they were at 0f00d7e


def date_candidates(text: str) -> Iterator[str]:
    """Every date in ``text`` the ``date`` normaliser reads, as YYYY-MM-DD."""
    for match in DATE_LIKE.finditer(text):
        try:
            yield normalise_date(match.group(0))
        except ValueError:
            continue


def amount_candidates(text: str) -> Iterator[str]:
    """Every number in ``text`` as the ``amount`` normaliser reads it ("1234.56")."""
    for match in NUMBER_LIKE.finditer(text):
        try:
            yield normalise_amount(match.group(0))
        except ValueError:
            continue


def _digits(text: str) -> str:
    return "".join(char for char in text if char.isdigit())


def value_agrees(value: Any, quote: str, schema: dict[str, Any]) -> bool | None:
    """Whether ``value`` is what its quote says, read as the schema reads it; None when the schema gives no
    way to compare (an enum names a kind the text need not spell)."""
    normaliser = schema.get("x-normalise")
    if normaliser == "date" or schema.get("format") == "date":
        return str(value) in set(date_candidates(quote))
    if normaliser == "amount":
        try:
            return normalise_amount(value) in set(amount_candidates(quote))
        except ValueError:
            return False
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return Decimal(str(value)) in {Decimal(text) for text in amount_candidates(quote)}
        except InvalidOperation:
            return False
    text, said = normalised(str(value)).text, normalised(quote).text
    if text in said:
        return True
    if isinstance(schema.get("enum"), list) or isinstance(value, bool):
        return None
    if re.fullmatch(r"[a-z]{3}", text) and any(
        code.lower() == text and symbol.lower() in said for symbol, code in CURRENCY_SYMBOLS.items()
    ):
        return True
    digits = _digits(text)
    if len(digits) >= 4:  # a code (POL-100234 from "Policy no. 100234"; CUST-00005 from "Client no. 5")
        numbers = {run.lstrip("0") or "0" for run in re.findall(r"\d+", said)}
        return digits in _digits(said) or all(
            (run.lstrip("0") or "0") in numbers for run in re.findall(r"\d+", text)
        )
    return token_set_ratio(text, said) >= FUZZY_THRESHOLD


# docagent/localcloud/bedrock/evidence.py's found_quote as it was at 0f00d7e


def found_quote(value: JsonValue, pages: list[str]) -> dict[str, JsonValue] | None:
    wanted = normalised(str(value)).text
    verbatim = isinstance(value, str) and not _DATE.match(value) and not _AMOUNT.match(value)

    def as_written(line: str) -> bool:
        return verbatim and wanted in normalised(line).text

    for holds in (as_written, lambda line: _holds(line, value)):
        for number, page in enumerate(pages, start=1):
            for line in page.splitlines():
                if line.strip() and holds(line):
                    return {"quote": line.strip(), "page": number}
    return None


def _holds(line: str, value: JsonValue) -> bool:
    text = str(value)
    schema = {"x-normalise": "date"} if _DATE.match(text) else {}
    if _AMOUNT.match(text):
        schema = {"x-normalise": "amount"}
    return value_agrees(value, line, schema) is True


_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_AMOUNT = re.compile(r"^-?\d+\.\d{2}$")
