"""Reading a quote against a document's page texts, and a value against its quote (docs/design.md,
"Evidence and confidence"): whitespace and case normalised, exact else fuzzy (rapidfuzz, or difflib where
it is not installed); dates, amounts, numbers and codes read as the schema's ``x-normalise`` reads them.
Used by the grounding check (functions/evidence/grounding.py) and by locating a value without a quote
(functions/evidence/value_location.py). Pure functions."""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from functions.checks.fields import normalise_amount, normalise_date
from functions.reading.page_texts import PageTexts

# A quote found only fuzzily counts when rapidfuzz's partial_ratio_alignment (0-100: the best-matching window
# of the page against the quote, normalised Indel similarity) reaches this: 90 lets a pypdf extraction's
# dropped or doubled space or a hyphenation through, and fails a quote that changed a word of ten. A value
# agrees with its quote textually at the same score (token_set_ratio).
FUZZY_THRESHOLD = 90.0

# On a page read by OCR (functions/reading/page_texts.py, PageTexts.is_ocr) the quote and the page are
# compared with their whitespace taken out (an OCR engine drops or adds spaces between words), at this score:
# measured on an example job's scan, photo and fax (docs/performance.md, "OCR": every quote of their labelled
# values is found at 80 and up, the lowest 84 on the fax; a date or an amount found only fuzzily must also be
# read from the page's own span, so a digit changed is never let through by the tolerance).
OCR_FUZZY_THRESHOLD = 80.0

DATE_LIKE = re.compile(
    r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{4}|\d{8}"
    r"|\d{1,2}\.? [A-Za-z]{3,9}\.? \d{4}|[A-Za-z]{3,9}\.? \d{1,2},? \d{4}"
)

# A number as printed: digits with thousands and decimal separators, no spaces (so the columns of a table row
# stay apart; "1 234,56" reads as two numbers).
NUMBER_LIKE = re.compile(r"-?\d(?:[\d,.'\u00a0]*\d)?")

# A currency code read from its symbol: a quote "£515.00" holds GBP.
CURRENCY_SYMBOLS = {"€": "EUR", "£": "GBP", "$": "USD", "¥": "JPY", "₹": "INR", "CHF": "CHF", "kr": "DKK"}


# ------------------------------------------------------------------------------------------ page texts


@dataclass(frozen=True)
class _Normalised:
    """A text with whitespace runs made one space and lower-cased, and each of its characters' offset in the
    original text (worked out when a match is placed: most texts are only searched)."""

    text: str
    original: str
    spaces: bool = True

    @functools.cached_property
    def offsets(self) -> list[int]:
        if _lowers_alike(self.original, self.original.lower()):
            return _word_offsets(self.original, spaces=self.spaces)
        return _by_character(self.original, spaces=self.spaces)[1]

    def span(self, start: int, end: int, original: str) -> tuple[int, int]:
        if start >= len(self.offsets):
            return len(original), len(original)
        return self.offsets[start], self.offsets[max(start, end - 1)] + 1


# A document's page texts are normalised once for all its fields (each quote is looked for on its page,
# then on the others); a handful of pages is what one call grounds, so a small cache bounds the memory.
@functools.lru_cache(maxsize=32)
def normalised(text: str, *, spaces: bool = True) -> _Normalised:
    """``text`` lower-cased with whitespace runs made one space (``spaces`` False: taken out)."""
    lowered = text.lower()
    if _lowers_alike(text, lowered):
        return _Normalised((" " if spaces else "").join(lowered.split()), text, spaces)
    return _Normalised(_by_character(text, spaces=spaces)[0], text, spaces)


def _lowers_alike(text: str, lowered: str) -> bool:
    """Whether lowering ``text`` as a whole is lowering each of its characters to one (no character lowers
    to two, which lowering never shortens, and no capital sigma, which lowers to a final sigma at a word's
    end): str.split's whitespace being str.isspace's, ``text`` is then normalised word by word, in C, to the
    same text and offsets as character by character."""
    return len(lowered) == len(text) and "Σ" not in text


# A word: a run of characters not whitespace (re's \s of a str pattern is str.isspace).
_WORD = re.compile(r"\S+")


def _word_offsets(text: str, *, spaces: bool) -> list[int]:
    """``_by_character``'s offsets of a text whose characters each lower to one, word by word: each word's
    characters, and (``spaces``) between two words the first whitespace after the first (a page's offsets
    were a tenth of the grounding's CPU character by character, 2026-12-08)."""
    offsets: list[int] = []
    end = 0
    for word in _WORD.finditer(text):
        if spaces and offsets:
            offsets.append(end)
        start, end = word.span()
        offsets.extend(range(start, end))
    return offsets


def _by_character(text: str, *, spaces: bool = True) -> tuple[str, list[int]]:
    chars: list[str] = []
    offsets: list[int] = []
    for index, char in enumerate(text):
        if char.isspace():
            if spaces and chars and chars[-1] != " ":
                chars.append(" ")
                offsets.append(index)
            continue
        for lowered in char.lower():
            chars.append(lowered)
            offsets.append(index)
    if chars and chars[-1] == " ":
        chars.pop()
        offsets.pop()
    return "".join(chars), offsets


@dataclass(frozen=True)
class Located:
    page: int  # 1-based
    start: int
    end: int
    score: float
    exact: bool


def _locate_on(quote: _Normalised, page_text: str, *, ocr: bool = False) -> Located | None:
    page = normalised(page_text, spaces=not ocr)
    if not quote.text:
        return None
    found = page.text.find(quote.text)
    if found >= 0:
        start, end = page.span(found, found + len(quote.text), page_text)
        return Located(0, start, end, 100.0, exact=True)
    aligned = partial_alignment(quote.text, page.text, OCR_FUZZY_THRESHOLD if ocr else FUZZY_THRESHOLD)
    if aligned is None:
        return None
    score, dest_start, dest_end = aligned
    start, end = page.span(dest_start, dest_end, page_text)
    return Located(0, start, end, score, exact=False)


def partial_alignment(
    quote: str, page: str, threshold: float = FUZZY_THRESHOLD
) -> tuple[float, int, int] | None:
    """The window of ``page`` most like ``quote`` (score 0-100, start, end) when it reaches FUZZY_THRESHOLD:
    rapidfuzz's partial_ratio_alignment (on Lambda from the document layer), or where rapidfuzz is not
    installed the same idea with the standard library's difflib (windows anchored on matching
    blocks)."""
    try:
        from rapidfuzz import fuzz  # noqa: PLC0415 (only where a document is grounded)
    except ImportError:
        return _difflib_alignment(quote, page, threshold)
    aligned = fuzz.partial_ratio_alignment(quote, page, score_cutoff=threshold)
    return None if aligned is None else (float(aligned.score), aligned.dest_start, aligned.dest_end)


def _difflib_alignment(quote: str, page: str, threshold: float) -> tuple[float, int, int] | None:
    best: tuple[float, int, int] | None = None
    matcher = difflib.SequenceMatcher(None, quote, page, autojunk=False)
    slack = max(2, len(quote) // 10)  # a window a few characters longer or shorter than the quote
    for block in matcher.get_matching_blocks():
        start = max(0, block.b - block.a)
        for length in range(max(1, len(quote) - slack), len(quote) + slack + 1):
            window = page[start : start + length]
            score = difflib.SequenceMatcher(None, quote, window, autojunk=False).ratio() * 100
            if best is None or score > best[0]:
                best = (score, start, start + len(window))
    return best if best is not None and best[0] >= threshold else None


def token_set_ratio(text: str, said: str) -> float:
    """rapidfuzz's token_set_ratio (0-100), or difflib's ratio of the sorted tokens without rapidfuzz (100
    when one's tokens are all in the other's)."""
    try:
        from rapidfuzz import fuzz  # noqa: PLC0415 (only where a document is grounded)
    except ImportError:
        mine, theirs = set(text.split()), set(said.split())
        if mine <= theirs or theirs <= mine:
            return 100.0
        return difflib.SequenceMatcher(None, " ".join(sorted(mine)), " ".join(sorted(theirs))).ratio() * 100
    return float(fuzz.token_set_ratio(text, said))


def locate(quote: str, pages: list[str], page: int) -> Located | None:
    """Where ``quote`` is: on ``page`` (1-based) first, else the first other page that holds it."""
    order = [page - 1] + [index for index in range(len(pages)) if index != page - 1]
    for index in order:
        if 0 <= index < len(pages):
            ocr = isinstance(pages, PageTexts) and pages.is_ocr(index + 1)
            found = _locate_on(normalised(quote, spaces=not ocr), pages[index], ocr=ocr)
            if found is not None:
                return Located(index + 1, found.start, found.end, found.score, found.exact)
    return None


# ------------------------------------------------------------------------------- value against quote


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


# A document's lines are read for each of its fields (a value without a quote is looked for line by line:
# functions/evidence/value_location.py): the dates and amounts of a line are read once and remembered, a few
# documents' lines at most (2026-12-08, #51: 20,000 amount readings for 850 fields in a 100-document demo).
@functools.lru_cache(maxsize=2048)
def dates_in(text: str) -> frozenset[str]:
    """``date_candidates`` of ``text``, as a set."""
    return frozenset(date_candidates(text))


@functools.lru_cache(maxsize=2048)
def amounts_in(text: str) -> frozenset[str]:
    """``amount_candidates`` of ``text``, as a set."""
    return frozenset(amount_candidates(text))


def _digits(text: str) -> str:
    return "".join(char for char in text if char.isdigit())


def value_agrees(value: Any, quote: str, schema: dict[str, Any]) -> bool | None:
    """Whether ``value`` is what its quote says, read as the schema reads it; None when the schema gives no
    way to compare (an enum names a kind the text need not spell)."""
    normaliser = schema.get("x-normalise")
    if normaliser == "date" or schema.get("format") == "date":
        return str(value) in dates_in(quote)
    if normaliser == "amount":
        try:
            return normalise_amount(value) in amounts_in(quote)
        except ValueError:
            return False
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return Decimal(str(value)) in {Decimal(text) for text in amounts_in(quote)}
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
