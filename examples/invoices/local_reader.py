"""The invoice example's local reader: regular expressions over the label variants of the synthetic invoices
(several label spellings, money and date formats, distractors such as due dates, subtotals and purchase-order
numbers). It stands in for a model on the local cloud for documents that have no label:
``docagent local up --reader examples/invoices/local_reader.py`` makes the local Bedrock answer extract calls
of class ``CLASS_NAME`` with ``reply(text)`` when it holds no label for the document (docs/local-cloud.md).

A reader is any Python file with ``CLASS_NAME`` and ``reply(text) -> str`` (the JSON reply a model would give
for the document's text); it imports nothing from docagent. Its field accuracy against the synthetic ground
truth is a real measurement (tests/unit/test_local_labels.py).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from decimal import Decimal

CLASS_NAME = "invoice"
CATEGORIES: tuple[str, ...] = ("hardware", "software", "services", "travel", "utilities", "other")

_OCR_CLASSES = {"i": "[il1|]", "l": "[il1|]", "o": "[o0]", "e": "[ec]", "c": "[ce]", "m": "(?:m|rn)"}


def tolerant(label: str) -> str:
    """A regex for a label that survives the usual OCR confusions (l/1/I, o/0, e/c, m/rn).

    Spaces match runs of blanks. Used for labels only, never for values.
    """
    parts = []
    for char in label.lower():
        if char == " ":
            parts.append(r"[ \t]+")
        else:
            parts.append(_OCR_CLASSES.get(char, re.escape(char)))
    return "".join(parts)


def _any(*labels: str) -> str:
    return "(?:" + "|".join(tolerant(label) for label in sorted(labels, key=len, reverse=True)) + ")"


_MONTH_NAMES = (
    ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
    ("july", "jul"), ("august", "aug"), ("september", "sept", "sep"), ("october", "oct"),
    ("november", "nov"), ("december", "dec"),
)  # fmt: skip
_MONTH_PATTERNS = [
    (number, re.compile(rf"^{_any(*names)}\.?$", re.IGNORECASE))
    for number, names in enumerate(_MONTH_NAMES, 1)
]
_MONTH = _any(*(name for names in _MONTH_NAMES for name in names))
_DATE = re.compile(
    rf"(?P<iso>\b\d{{4}}-\d{{2}}-\d{{2}}\b)"
    rf"|(?P<dotted>\b\d{{1,2}}\.\d{{1,2}}\.\d{{4}}\b)"
    rf"|(?P<dmy>\b\d{{1,2}}\s+{_MONTH}\.?\s+\d{{4}}\b)"
    rf"|(?P<mdy>\b{_MONTH}\.?\s+\d{{1,2}},?\s+\d{{4}}\b)",
    re.IGNORECASE,
)
_ISSUE_LABEL = re.compile(
    rf"\b{_any('invoice date', 'date of issue', 'issued on', 'issued', 'date')}[ \t]*:?[ \t]*$", re.IGNORECASE
)
_DUE = re.compile(rf"\b{_any('due')}\b", re.IGNORECASE)
_NOT_ISSUE_DATE = re.compile(rf"\b{_any('due', 'by', 'until', 'before', 'valid')}\b", re.IGNORECASE)

SYMBOLS = {"€": "EUR", "$": "USD", "£": "GBP"}
_CODE = r"(?:EUR|USD|GBP|CHF|SEK|NOK|DKK|PLN|JPY)"
_NUMBER = r"\d{1,3}(?:[,.'\u00a0]\d{3})+(?:[.,]\d{2})?|\d+(?:[.,]\d{2})?"
_MONEY = re.compile(
    rf"(?P<pre>{_CODE}|[€$£])\s?(?P<n1>{_NUMBER})|(?P<n2>{_NUMBER})\s?(?P<post>{_CODE}|[€$£])", re.IGNORECASE
)
_TOTAL_LABELS = (
    re.compile(
        rf"\b{_any('total due', 'amount payable', 'amount due', 'grand total', 'balance of', 'balance due')}"
        r"\b",
        re.IGNORECASE,
    ),
    re.compile(rf"(?<!sub)\b{_any('total')}\b", re.IGNORECASE),
    re.compile(rf"\b{_any('to pay', 'payable', 'balance')}\b", re.IGNORECASE),
)

_INVOICE_NUMBER = re.compile(
    rf"(?<![A-Za-z])(?:{_any('invoice')}[ \t]*(?:{_any('number', 'no.', 'no', 'nr.', 'nr')}|#)"
    rf"|{_any('inv.', 'inv')}[ \t]*#|{_any('ref.', 'reference', 'our ref', 'our reference')})"
    r"[ \t]*[:#]?[ \t]*(?P<value>[A-Z0-9][A-Z0-9/_.-]*\d[A-Z0-9/_-]*)",
    re.IGNORECASE,
)
_ORDER_CONTEXT = re.compile(rf"{_any('order', 'purchase', 'po', 'p.o.')}[ \t]*$", re.IGNORECASE)

_CANONICAL_CUSTOMER = re.compile(r"\bCUST-(\d{1,5})\b", re.IGNORECASE)
_CUSTOMER_LABEL = re.compile(
    rf"\b{_any('customer', 'client', 'account')}(?:[ \t]*(?:{_any('id', 'no.', 'no', 'number')}|#))?"
    r"[ \t]*[:#]?[ \t]*(?P<number>\d{1,5})\b",
    re.IGNORECASE,
)
_CATEGORY_LABEL = re.compile(
    rf"\b{_any('category', 'expense type', 'cost category', 'spend category')}"
    r"[ \t]*[:\-][ \t]*(?P<value>[A-Za-z0-9]+)",
    re.IGNORECASE,
)
_CATEGORY_VALUES = [
    (category, re.compile(rf"^{tolerant(category)}$", re.IGNORECASE)) for category in CATEGORIES
]
CATEGORY_SYNONYMS = {
    "it equipment": "hardware",
    "equipment": "hardware",
    "licence": "software",
    "license": "software",
    "consulting": "services",
    "travel expenses": "travel",
    "energy": "utilities",
}


def _month(word: str) -> int:
    for number, pattern in _MONTH_PATTERNS:
        if pattern.match(word):
            return number
    raise KeyError(word)


def _parse_date(match: re.Match[str]) -> dt.date | None:
    text = match.group(0)
    try:
        if match.group("iso"):
            return dt.date.fromisoformat(text)
        if match.group("dotted"):
            day, month, year = (int(part) for part in text.split("."))
            return dt.date(year, month, day)
        words = text.replace(",", " ").split()
        if match.group("dmy"):
            return dt.date(int(words[2]), _month(words[1]), int(words[0]))
        return dt.date(int(words[2]), _month(words[0]), int(words[1]))
    except (ValueError, KeyError):
        return None


def find_invoice_date(text: str) -> dt.date | None:
    labelled: list[dt.date] = []
    others: list[dt.date] = []
    for line in text.splitlines():
        for match in _DATE.finditer(line):
            day = _parse_date(match)
            if day is None:
                continue
            before = line[: match.start()]
            if _ISSUE_LABEL.search(before) and not _DUE.search(before):
                labelled.append(day)
            elif not _NOT_ISSUE_DATE.search(before[-20:]):
                others.append(day)
    candidates = labelled or others
    return candidates[0] if candidates else None


def _money(match: re.Match[str]) -> tuple[Decimal, str] | None:
    number = match.group("n1") or match.group("n2")
    marker = (match.group("pre") or match.group("post") or "").upper()
    currency = SYMBOLS.get(marker, marker)
    text = re.sub(r"['\u00a0]", "", number)
    if "," in text and "." in text:
        decimal_sep = "," if text.rfind(",") > text.rfind(".") else "."
        text = text.replace("." if decimal_sep == "," else ",", "").replace(decimal_sep, ".")
    elif "," in text:
        head, _, tail = text.rpartition(",")
        text = text.replace(",", "") if len(tail) == 3 else f"{head.replace(',', '')}.{tail}"
    elif text.count(".") == 1 and len(text.rpartition(".")[2]) == 3:
        text = text.replace(".", "")
    try:
        return Decimal(text), currency
    except ArithmeticError:
        return None


def find_total(text: str) -> tuple[Decimal, str] | None:
    lines = text.splitlines()
    for label in _TOTAL_LABELS:
        for line in lines:
            found = label.search(line)
            if not found:
                continue
            for match in _MONEY.finditer(line, found.end()):
                money = _money(match)
                if money is not None:
                    return money
    return None


def find_invoice_number(text: str) -> str | None:
    for match in _INVOICE_NUMBER.finditer(text):
        if _ORDER_CONTEXT.search(text[max(0, match.start() - 12) : match.start()]):
            continue
        return match.group("value").rstrip(".")
    return None


def find_customer_id(text: str) -> str | None:
    canonical = _CANONICAL_CUSTOMER.search(text)
    if canonical:
        return f"CUST-{int(canonical.group(1)):05d}"
    labelled = _CUSTOMER_LABEL.search(text)
    if labelled:
        return f"CUST-{int(labelled.group('number')):05d}"
    return None


def find_category(text: str) -> str:
    labelled = _CATEGORY_LABEL.search(text)
    if labelled:
        value = labelled.group("value")
        for category, pattern in _CATEGORY_VALUES:
            if pattern.match(value):
                return category
        return CATEGORY_SYNONYMS.get(value.lower(), "other")
    lowered = text.lower()
    for phrase, category in CATEGORY_SYNONYMS.items():
        if phrase in lowered:
            return category
    return "other"


def reply(text: str) -> str:
    """The JSON reply for a document (missing fields are null, so validation fails as for a model)."""
    date = find_invoice_date(text)
    total = find_total(text)
    number = find_invoice_number(text)
    category = find_category(text)
    facts = {
        "customer_id": find_customer_id(text),
        "invoice_number": number,
        "invoice_date": date.isoformat() if date else None,
        "amount": f"{total[0]:.2f}" if total else None,
        "currency": total[1] if total else None,
        "category": category,
        "summary": f"{category.capitalize()} invoice {number or '(no number)'}"
        + (f" for {total[0]:.2f} {total[1]}" if total else ""),
    }
    return json.dumps(facts)
