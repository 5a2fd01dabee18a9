"""Synthetic invoices with known ground truth, for the offline extractor's accuracy, tests and the local demo.

Real-sized: a page or two each (about 3,000 to 5,000 characters, 5 to 20 line items; what they hold and why:
docagent/drills/invoice_parts.py), so the demo's model calls cost what a real invoice's do (docs/cost.md,
"Token counting"). Several layouts (docagent/drills/invoice_layouts.py) and label variants ("Invoice number:",
"Invoice #", "Ref."; "1,234.56 EUR", "EUR 1234.56", "1.234,56 €"; ISO dates, "14 March 2026", "14.03.2026"),
distractors (due, supply and order dates, purchase-order numbers, unit prices, subtotals, VAT lines) and a
little OCR-style noise, so extraction is real work. Deterministic for a seed. Not used by the handlers.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, field_validator

from docagent.drills import invoice_parts
from docagent.drills.invoice_layouts import LAYOUTS, PrintedInvoice
from functions.checks.fields import normalise_amount

# The invoice example's truth (examples/invoices/classes/invoice.schema.json as a model): moved here from
# functions/models.py when the core stopped knowing the invoice review (kit-examples moves it on).
CATEGORIES: tuple[str, ...] = ("hardware", "software", "services", "travel", "utilities", "other")
Category = Literal["hardware", "software", "services", "travel", "utilities", "other"]
Amount = Annotated[Decimal, PlainSerializer(lambda value: f"{value:.2f}", return_type=str)]


class ExtractedFacts(BaseModel):
    """An invoice's fields, as its label holds them."""

    model_config = ConfigDict(extra="forbid")

    customer_id: str = Field(pattern=r"^[A-Z0-9][A-Z0-9-]{0,39}$")
    invoice_number: str = Field(min_length=1, max_length=64)
    invoice_date: dt.date
    amount: Amount
    currency: str = Field(pattern=r"^[A-Z]{3}$")
    category: Category
    summary: str = Field(min_length=1, max_length=300)

    @field_validator("amount", mode="before")
    @classmethod
    def _normalise_amount(cls, value: Any) -> Any:
        return Decimal(normalise_amount(value))


class CustomerRecord(BaseModel):
    """A row of the invoice example's customers reference table."""

    model_config = ConfigDict(extra="ignore")

    customer_id: str
    name: str
    country: str | None = None
    tier: str | None = None


# The invoice example's reference table customers (its lookup check, examples/invoices/job.json): the rows of
# generate_customers(), as `docagent reference load CUSTOMERS_CSV --table customers --key customer_id` loads
# them (tests/unit/test_local_labels.py keeps the file and the generator in step).
CUSTOMERS_CSV = Path(__file__).resolve().parents[2] / "examples" / "invoices" / "references" / "customers.csv"
CUSTOMERS_TABLE, CUSTOMERS_KEY = "customers", "customer_id"

SUPPLIERS = (
    "Northwind Traders GmbH",
    "Contoso Ltd",
    "Fabrikam Inc.",
    "Globex Corporation",
    "Initech Services",
    "Umbrella Supplies AG",
    "Stark Logistics BV",
    "Wayne Office Solutions",
    "Tyrell Computing SA",
    "Cyberdyne Software Oy",
)
FIRST_NAMES = ("Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "Ken", "Radia", "Tim")
LAST_NAMES = (
    "Lovelace",
    "Hopper",
    "Turing",
    "Dijkstra",
    "Liskov",
    "Knuth",
    "Allen",
    "Thompson",
    "Perlman",
    "Lee",
)
COUNTRIES = ("DE", "AT", "IE", "FR", "NL", "CH", "GB", "PT", "FI", "US")
TIERS = ("standard", "gold", "platinum")
CURRENCY_SYMBOLS = {"EUR": "€", "USD": "$", "GBP": "£", "CHF": None, "SEK": None}
CATEGORY_LABELS = ("Category", "Expense type", "Cost category", "Spend category")
MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip
OCR_CONFUSIONS = (("I", "l"), ("o", "0"), ("l", "1"), ("e", "c"), ("m", "rn"))


class SyntheticDocument(NamedTuple):
    document_id: str
    text: str
    truth: ExtractedFacts


def customer_id_for(number: int) -> str:
    return f"CUST-{number:05d}"


def generate_customers(n: int = 50, seed: int = 7) -> list[CustomerRecord]:
    """Customers CUST-00001 .. CUST-{n}, for the customers table."""
    rng = random.Random(seed)
    return [
        CustomerRecord(
            customer_id=customer_id_for(number),
            name=f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}",
            country=rng.choice(COUNTRIES),
            tier=rng.choice(TIERS),
        )
        for number in range(1, n + 1)
    ]


# ------------------------------------------------------------------------------------------ formatting


def _format_number(value: Decimal, style: str) -> str:
    whole, _, cents = f"{value:.2f}".partition(".")
    grouped = f"{int(whole):,}"
    if style == "plain":
        return f"{whole}.{cents}"
    if style == "european":
        return f"{grouped.replace(',', '.')},{cents}"
    return f"{grouped}.{cents}"


def _money_formatter(rng: random.Random, currency: str) -> Callable[[Decimal], str]:
    """One money style per document, as a real invoice template would have."""
    symbol = CURRENCY_SYMBOLS[currency]
    styles = ["suffix_code", "prefix_code", "prefix_code_plain"] + (
        ["symbol", "european_symbol"] if symbol else []
    )
    style = rng.choice(styles)

    def money(value: Decimal) -> str:
        if style == "suffix_code":
            return f"{_format_number(value, 'grouped')} {currency}"
        if style == "prefix_code":
            return f"{currency} {_format_number(value, 'grouped')}"
        if style == "prefix_code_plain":
            return f"{currency} {_format_number(value, 'plain')}"
        if style == "symbol":
            return f"{symbol}{_format_number(value, 'grouped')}"
        return f"{_format_number(value, 'european')} {symbol}"

    return money


def _date_formatter(rng: random.Random) -> Callable[[dt.date], str]:
    """One date style per document, as a real invoice template would have."""
    style = rng.randrange(5)

    def date(day: dt.date) -> str:
        if style == 0:
            return day.isoformat()
        if style == 1:
            return f"{day.day} {MONTHS[day.month - 1]} {day.year}"
        if style == 2:
            return f"{MONTHS[day.month - 1]} {day.day}, {day.year}"
        if style == 3:
            return f"{day.day:02d}.{day.month:02d}.{day.year}"
        return f"{day.day} {MONTHS[day.month - 1][:3]} {day.year}"

    return date


def _format_customer(rng: random.Random, customer_id: str) -> tuple[str, str]:
    """A label and the customer id as printed: canonical, lower-case, or just the number."""
    number = int(customer_id.split("-")[1])
    style = rng.randrange(4)
    if style == 0:
        return rng.choice(("Customer ID", "Customer", "Account")), customer_id
    if style == 1:
        return rng.choice(("Customer ID", "Account")), customer_id.lower()
    if style == 2:
        return rng.choice(("Customer no.", "Customer number", "Account no.")), f"{number:05d}"
    return rng.choice(("Customer no.", "Client no.")), str(number)


def _invoice_number(rng: random.Random, day: dt.date) -> str:
    style = rng.randrange(4)
    if style == 0:
        return f"INV-{day.year}-{rng.randrange(1, 99999):05d}"
    if style == 1:
        return f"{day.year}/{rng.randrange(1, 9999):04d}"
    if style == 2:
        return f"{rng.choice('ABCDEFGH')}-{rng.randrange(10000, 99999)}"
    return f"F{day.year}-{rng.randrange(100, 9999)}"


def _ocr_noise(rng: random.Random, text: str, rate: float) -> str:
    """Corrupt a few characters, as a poor scan would."""
    if rng.random() >= rate:
        return text
    chars = list(text)
    for _ in range(rng.randrange(1, 4)):
        old, new = rng.choice(OCR_CONFUSIONS)
        positions = [i for i, c in enumerate(chars) if c == old]
        if positions:
            chars[rng.choice(positions)] = new
    return "".join(chars)


# --------------------------------------------------------------------------------------------- invoices


def _printed(
    rng: random.Random, facts: ExtractedFacts, supplier: str, money: Callable[[Decimal], str], vat_rate: int
) -> PrintedInvoice:
    """Everything the invoice prints around its facts: parties, 5 to 20 lines, VAT, references, terms."""
    date = _date_formatter(rng)
    issued = facts.invoice_date
    people = [f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}" for _ in range(4)]
    month = dt.date(issued.year, issued.month, 1)
    periods = [
        f"{date(month)} - {date(month + dt.timedelta(days=rng.choice((29, 89, 364))))}",
        f"{date(issued - dt.timedelta(days=30))} - {date(issued - dt.timedelta(days=1))}",
    ]
    days = [date(issued - dt.timedelta(days=back)) for back in rng.sample(range(1, 40), k=6)]
    words = {"people": people, "periods": periods, "days": days}
    lines = invoice_parts.line_items(rng, facts.category, vat_rate, words)
    vat = invoice_parts.vat_breakdown(lines)
    subtotal = sum((line.net for line in lines), Decimal("0.00"))
    terms = rng.choice((14, 30, 45))
    cust_label, customer_printed = _format_customer(rng, facts.customer_id)
    return PrintedInvoice(
        seller=invoice_parts.seller(rng, supplier, rng.choice(invoice_parts.CITIES), (people[0], people[1])),
        buyer=invoice_parts.buyer(rng, f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"),
        lines=lines,
        vat=vat,
        subtotal=subtotal,
        total=subtotal + sum((line.vat for line in vat), Decimal("0.00")),
        money=money,
        number=facts.invoice_number,
        date=date(issued),
        due=date(issued + dt.timedelta(days=terms)),
        supplied=date(issued - dt.timedelta(days=rng.randrange(0, 10))),
        ordered=date(issued - dt.timedelta(days=rng.randrange(10, 40))),
        po=f"PO-{rng.randrange(10000, 99999)}",
        sales_order=f"SO-{rng.randrange(100000, 999999)}",
        delivery_note=f"DN-{rng.randrange(100000, 999999)}",
        cust_label=cust_label,
        customer=customer_printed,
        cat_label=rng.choice(CATEGORY_LABELS),
        category=facts.category,
        terms_days=terms,
        early_discount_percent=rng.choice((0, 0, 2, 3)),
        currency=facts.currency,
    )


def generate_documents(
    n: int,
    seed: int,
    customer_ids: Sequence[str] | None = None,
    *,
    noise_rate: float = 0.03,
    unknown_customer_rate: float = 0.0,
) -> list[SyntheticDocument]:
    """``n`` invoices as (document_id, text, ground truth).

    Customer ids come from ``customer_ids`` (default: the 50 ids of ``generate_customers()``); a fraction
    ``unknown_customer_rate`` of the documents use ids outside that set.
    """
    rng = random.Random(seed)
    known = list(customer_ids) if customer_ids else [c.customer_id for c in generate_customers()]
    documents = []
    for index in range(n):
        category = rng.choice(CATEGORIES)
        currency = rng.choice(tuple(CURRENCY_SYMBOLS))
        issued = dt.date(2025, 1, 1) + dt.timedelta(days=rng.randrange(0, 540))
        if rng.random() < unknown_customer_rate:
            customer_id = customer_id_for(rng.randrange(90000, 99999))
        else:
            customer_id = rng.choice(known)
        number = _invoice_number(rng, issued)
        supplier = rng.choice(SUPPLIERS)
        vat_rate = rng.choice(tuple(invoice_parts.REDUCED_RATE))
        printed = _printed(
            rng,
            ExtractedFacts(
                customer_id=customer_id,
                invoice_number=number,
                invoice_date=issued,
                amount=Decimal(0),
                currency=currency,
                category=category,
                summary=f"{category.capitalize()} invoice {number} from {supplier}",
            ),
            supplier,
            _money_formatter(rng, currency),
            vat_rate,
        )
        text = rng.choice(LAYOUTS)(rng, printed)
        text = "\n".join(_ocr_noise(rng, line, noise_rate) for line in text.splitlines()) + "\n"
        truth = ExtractedFacts(
            customer_id=customer_id,
            invoice_number=number,
            invoice_date=issued,
            amount=printed.total,
            currency=currency,
            category=category,
            summary=f"{category.capitalize()} invoice {number} from {supplier}",
        )
        documents.append(SyntheticDocument(f"doc-{index:05d}", text, truth))
    return documents
