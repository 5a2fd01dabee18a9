"""The fast ``locate_value`` (functions/evidence/value_location.py, #51's fifth pass: lines normalised once a
page, a whole page skipped when it cannot hold the value, a line's dates and amounts read once) gives exactly
the reference's results (tests/reference_value_location.py, the line walk as it was at 0f00d7e): on the demo's
invoices and the claims example's samples as the local model answers them (tests/grounding_corpus.py), their
values changed as a model misreads them, and on seeded random pages: dates, amounts, numbers, codes with
digits, enums, booleans, multi-line values, values split across lines, OCR-like noise, unicode."""

from __future__ import annotations

import random
from typing import Any

import pytest
from pydantic import JsonValue

from docagent.localcloud.bedrock.evidence import found_quote
from functions.evidence import grounding
from functions.evidence.grounding import ground_fields, leaves
from functions.evidence.grounding_modes import name_of
from functions.evidence.quote_matching import Located, _by_character, normalised
from functions.evidence.value_location import locate_value
from functions.inference.evidence import split
from functions.reading.page_texts import PageTexts
from tests import reference_value_location as reference
from tests.grounding_corpus import Extraction, demo_extractions, example_extractions

Case = tuple[JsonValue, list[str], int, dict[str, Any], str]


@pytest.fixture(scope="module")
def corpus() -> list[Extraction]:
    return demo_extractions(24) + example_extractions()


def misread(value: JsonValue, draw: random.Random) -> JsonValue:
    """``value`` as a model might misread it: a digit changed, a case changed, a word dropped."""
    text = str(value)
    digits = [index for index, char in enumerate(text) if char.isdigit()]
    if digits and draw.random() < 0.7:
        at = draw.choice(digits)
        return f"{text[:at]}{(int(text[at]) + 1) % 10}{text[at + 1 :]}"
    return text.swapcase() if draw.random() < 0.5 else " ".join(text.split()[:-1])


def corpus_cases(extractions: list[Extraction]) -> list[Case]:
    draw = random.Random(51)
    cases: list[Case] = []
    for item in extractions:
        if item.pages is None:
            continue
        pages = list(item.pages)
        fields, _ = split(item.record.fields or {})
        for path, value, schema in leaves(fields, dict(item.class_bundle.schema_)):
            for page in {1, len(pages), draw.randint(0, len(pages) + 1)}:
                for name in (name_of(path), ""):
                    cases.append((value, pages, page, schema, name))
                cases.append((misread(value, draw), pages, page, schema, name_of(path)))
    return cases


# --------------------------------------------------------------------------------- seeded random pages

SCHEMAS: list[dict[str, Any]] = [
    {},
    {"type": "string"},
    {"type": "string", "x-normalise": "date"},
    {"type": "string", "format": "date"},
    {"type": "string", "x-normalise": "amount"},
    {"type": "number"},
    {"type": "string", "enum": ["hardware", "water", "other"]},
    {"type": "boolean"},
    {"type": "string", "x-normalise": "upper"},
]
NAMES = [
    "",
    "due_date",
    "invoice_date",
    "amount",
    "total",
    "account_id",
    "policy_number",
    "currency",
    "category",
    "customer-id",
    "name",
    "paid",
    "incident_type",
    "email",
    "total_amount",
]
LABELS = [
    "Invoice date",
    "Due date",
    "Due",
    "Total due",
    "Amount",
    "Account no.",
    "Acct no",
    "Policy no.",
    "Customer no.:",
    "Currency",
    "Cost category",
    "Name",
    "Paid",
    "Email",
    "Incident type",
    "Total",
    "Reference",
    "VAT",
    "Date",
    "Claim",
    "Invoice number",
]
WORDS = [
    "ACME",
    "Supplies",
    "Ltd",
    "hardware",
    "water",
    "EUR",
    "CHF",
    "GBP",
    "£",
    "€",
    "$",
    "kitchen",
    "Σίσυφος",
    "İstanbul",
    "straße",
    "true",
    "false",
    "Yes",
    "No",
    "EUROPE",
    "paid",
    "N/A",
    "—",
    "#",
    "x",
]
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def a_date(draw: random.Random) -> tuple[str, list[str]]:
    """An ISO date and ways a page prints it."""
    year, month, day = draw.choice([2024, 2025, 2026]), draw.randint(1, 12), draw.randint(1, 28)
    iso = f"{year}-{month:02d}-{day:02d}"
    name = MONTHS[month - 1]
    printed = [
        iso,
        f"{day:02d}/{month:02d}/{year}",
        f"{day}.{month}.{year}",
        f"{year}{month:02d}{day:02d}",
        f"{day} {name} {year}",
        f"{name} {day}, {year}",
        f"{day}. {name}. {year}",
        f"{month}/{day}/{year}",
        f"{year}/{month}/{day}",
    ]
    return iso, printed


def an_amount(draw: random.Random) -> tuple[str, list[str]]:
    whole, cents = draw.choice([0, 7, 19, 515, 1180, 17254, 1234567]), draw.randint(0, 99)
    plain = f"{whole}.{cents:02d}"
    printed = [
        plain,
        f"{whole:,}.{cents:02d}",
        f"{whole:,}.{cents:02d}".replace(",", "'"),
        f"{whole:,}.{cents:02d}".replace(",", "X").replace(".", ",").replace("X", "."),
        f"€{whole:,}.{cents:02d}",
        f"CHF {whole:,}.{cents:02d}",
        f"{whole} {cents:02d}",
        f"-{plain}",
        f"{whole:,}.{cents:02d}".replace(",", "\u00a0"),
    ]
    return plain, printed


def a_code(draw: random.Random) -> tuple[str, list[str]]:
    number = draw.choice([5, 19, 100234, 4021, 77])
    prefix = draw.choice(["CUST", "ACCT", "POL", "INV"])
    code = f"{prefix}-{number:05d}"
    return code, [code, str(number), f"{prefix.lower()}{number}", f"{number:05d}", code.replace("-", " - ")]


def a_text(draw: random.Random) -> tuple[JsonValue, list[str]]:
    choice = draw.randrange(9)
    if choice == 0:
        name = "Maria Jensen"
        return name, [name, "MARIA  JENSEN", "Maria\nJensen", "Jensen, Maria", "Maria Jensens"]
    if choice == 1:
        word = draw.choice(["EUR", "GBP", "CHF", "USD"])
        return word, [word, word.lower(), "€", "£", "EUROPE", f"{word}X"]
    if choice == 2:
        return draw.choice(["hardware", "water", "other"]), ["Hardware", "water damage", "OTHER", "hard ware"]
    if choice == 3:
        flag = draw.random() < 0.5
        return flag, ["true", "false", "True", "Yes", "1"]
    if choice == 4:
        number: JsonValue = draw.choice([19, 1180.5, 0, -3, 17254.27, 1e3])
        return number, [str(number), f"{number:,}", "19.00", "1,180.50", "1000"]
    if choice == 5:
        odd = "Σίσυφος İstanbul straße"  # a final sigma, a capital that lowers to two characters
        return odd, ["ΣΊΣΥΦΟΣ İSTANBUL STRASSE", "σίσυφος i̇stanbul straße", "Σίσυφος\u2028İstanbul"]
    if choice == 6:
        return "", ["", " ", "x"]
    if choice == 7:
        item = "Kitchen floor laminate (18 m2)"
        return item, [
            item,
            "Kitchen floor\nlaminate (18 m2)",
            "kitchen  floor laminate 18 m2",
            "floor (18 m2)",
        ]
    return "A burst pipe\nunder the sink", ["A burst pipe under the sink", "a burst pipe\n\nunder the sink"]


def ocr_noise(line: str, draw: random.Random) -> str:
    """A line as an OCR engine might read it: spaces lost or added, 0 read as O, l as 1, a line broken."""
    noisy = []
    for char in line:
        roll = draw.random()
        if char == " " and roll < 0.15:
            continue
        read = {"0": "O", "l": "1"}.get(char, char) if roll < 0.1 else char
        noisy.append(read + (" " if roll > 0.97 else "") + ("\n" if roll > 0.99 else ""))
    return "".join(noisy)


def random_case(draw: random.Random) -> Case:
    kind = draw.randrange(4)
    value: JsonValue
    value, printed = (a_date, an_amount, a_code, a_text)[kind](draw)
    if kind == 0:
        schema = draw.choice([SCHEMAS[2], SCHEMAS[3], SCHEMAS[0]])
    elif kind == 1:
        schema = draw.choice([SCHEMAS[4], SCHEMAS[5], SCHEMAS[0]])
        value = draw.choice([value, float(str(value)), str(value)]) if schema is SCHEMAS[5] else value
    else:
        schema = draw.choice(SCHEMAS)
    pages = []
    for _ in range(draw.randint(1, 3)):
        lines = []
        for _ in range(draw.randint(0, 10)):
            roll = draw.random()
            label = draw.choice(LABELS)
            if roll < 0.3:
                lines.append(f"{label}: {draw.choice(printed)}")
            elif roll < 0.4:
                lines.append(f"{label} {draw.choice(a_date(draw)[1])}  {draw.choice(an_amount(draw)[1])}")
            elif roll < 0.45:  # the value second of two of its kind on a line: its span narrowed to it
                other = draw.choice([a_date, an_amount, a_code])(draw)[1]
                lines.append(f"{label}: {draw.choice(other)}   {draw.choice(LABELS)}: {draw.choice(printed)}")
            elif roll < 0.55:
                lines.append(draw.choice(printed))
            elif roll < 0.65:
                lines.append("")
            else:
                lines.append(" ".join(draw.choice(WORDS + LABELS) for _ in range(draw.randint(1, 6))))
        text = draw.choice(["\n", "\r\n", "\n\n", "\n \t"]).join(lines)
        pages.append(ocr_noise(text, draw) if draw.random() < 0.25 else text)
    name = draw.choice(NAMES)
    return value, pages, draw.randint(0, len(pages) + 1), schema, name


def test_the_fast_line_walk_finds_exactly_what_the_reference_finds(corpus: list[Extraction]) -> None:
    draw = random.Random(20261208)
    cases = corpus_cases(corpus) + [random_case(draw) for _ in range(3000)]
    found: dict[str, int] = {"located": 0, "none": 0, "exact pass": 0, "moved": 0}
    for value, pages, page, schema, name in cases:
        expected = reference.locate_value(value, pages, page, schema, name)
        assert locate_value(value, pages, page, schema, name) == expected, (value, pages, page, schema, name)
        found["none" if expected is None else "located"] += 1
        if expected is not None:
            held = pages[expected.page - 1][expected.start : expected.end]
            found["exact pass"] += str(value).lower() in held.lower()
            found["moved"] += expected.page != page
    # the cases reach every way out: found on the lines, on another page, and not at all
    assert min(found.values()) > 100, found


def test_the_local_model_quotes_what_it_quoted_before(corpus: list[Extraction]) -> None:
    """docagent/localcloud/bedrock/evidence.py ``found_quote``, its lines normalised once a page."""
    draw = random.Random(1208)
    cases = list(
        {(repr(value), id(pages)): (value, pages) for value, pages, *_ in corpus_cases(corpus)}.values()
    )
    cases += [(value, pages) for value, pages, *_ in (random_case(draw) for _ in range(3000))]
    quoted = 0
    for value, pages in cases:
        expected = reference.found_quote(value, pages)
        assert found_quote(value, pages) == expected, (value, pages)
        quoted += expected is not None
    assert 100 < quoted < len(cases) - 100


def test_a_page_s_offsets_read_word_by_word_are_those_read_character_by_character(
    corpus: list[Extraction],
) -> None:
    draw = random.Random(8)
    texts = [text for item in corpus for text in item.pages or []]
    texts += ["".join(random_case(draw)[1]) for _ in range(300)]
    texts += [
        "".join(draw.choice(" \t\n\x1c\x85\u2028\u3000\u00a0aB1_Σσς.İß") for _ in range(40))
        for _ in range(300)
    ]
    for text in texts:
        for spaces in (True, False):
            found = normalised.__wrapped__(text, spaces=spaces)
            assert (found.text, found.offsets) == _by_character(text, spaces=spaces), (text, spaces)


def test_every_field_of_the_corpus_has_the_reference_s_evidence(
    corpus: list[Extraction], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole grounding of each document, its boxes and notes included, is the reference's."""

    def fresh(pages: PageTexts | None) -> PageTexts | None:  # no memo of the run before is reused
        return None if pages is None else PageTexts(list(pages), ocr=pages.ocr, pdf=pages.pdf)

    grounded = 0
    for item in corpus:
        fields, quotes = split(item.record.fields or {})
        schema = dict(item.class_bundle.schema_)
        fast = ground_fields(fields, quotes, fresh(item.pages), schema)
        with monkeypatch.context() as patched:
            patched.setattr(grounding, "locate_value", reference.locate_value)
            assert ground_fields(fields, quotes, fresh(item.pages), schema) == fast, item.name
        grounded += sum(evidence.start is not None for evidence in fast.values())
    assert grounded > 100


def test_the_reference_is_not_the_fast_one() -> None:
    """The equivalence compares two implementations (a copy, not the same function imported twice)."""
    assert reference.locate_value is not locate_value
    assert reference.locate_value.__module__ != locate_value.__module__
    assert isinstance(reference.locate_value("19", ["Customer no.: 19"], 1, {}, ""), Located)
