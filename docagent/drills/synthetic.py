"""Synthetic invoices with known ground truth, for the offline extractor's accuracy, tests and the local demo.

Several layouts and label variants ("Invoice number:", "Invoice #", "Ref."; "1,234.56 EUR", "EUR 1234.56",
"1.234,56 €"; ISO dates, "14 March 2026", "14.03.2026"), distractors (due dates, purchase-order numbers,
subtotals, VAT lines) and a little OCR-style noise, so extraction is real work. Deterministic for a seed.
Not used by the handlers.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, field_validator

from functions.fields import normalise_amount

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
CITIES = ("Berlin", "Vienna", "Dublin", "Lyon", "Utrecht", "Zurich", "Leeds", "Porto", "Turku", "Boston")
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
ITEMS: dict[str, tuple[tuple[str, int, int], ...]] = {
    "hardware": (("Laptop stand", 30, 90), ("USB-C dock", 120, 260), ("27in monitor", 180, 420)),
    "software": (
        ("Annual licence, IDE", 90, 400),
        ("Cloud backup seats", 20, 60),
        ("Design suite", 300, 900),
    ),
    "services": (("Consulting day", 600, 1400), ("Onsite support hour", 80, 160), ("Workshop", 900, 2500)),
    "travel": (("Rail ticket", 40, 220), ("Hotel night", 90, 260), ("Airport transfer", 30, 90)),
    "utilities": (("Electricity, monthly", 120, 900), ("Water, quarterly", 60, 300), ("Fibre line", 40, 120)),
    "other": (("Office plants", 20, 80), ("Catering", 100, 600), ("Courier", 15, 70)),
}
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


def _format_date(rng: random.Random, day: dt.date) -> str:
    style = rng.randrange(5)
    if style == 0:
        return day.isoformat()
    if style == 1:
        return f"{day.day} {MONTHS[day.month - 1]} {day.year}"
    if style == 2:
        return f"{MONTHS[day.month - 1]} {day.day}, {day.year}"
    if style == 3:
        return f"{day.day:02d}.{day.month:02d}.{day.year}"
    return f"{day.day} {MONTHS[day.month - 1][:3]} {day.year}"


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


# --------------------------------------------------------------------------------------------- layouts


def _line_items(rng: random.Random, category: str) -> list[tuple[str, int, Decimal]]:
    lines = []
    for description, low, high in rng.sample(ITEMS[category], k=rng.randrange(1, 4)):
        price = Decimal(rng.randrange(low * 100, high * 100)) / 100
        lines.append((description, rng.randrange(1, 5), price))
    return lines


def _classic(rng: random.Random, f: dict[str, str], items: list[str]) -> str:
    inv_label = rng.choice(("Invoice number:", "Invoice No.", "Invoice #", "INVOICE NUMBER:"))
    date_label = rng.choice(("Invoice date:", "Date of issue:", "Date:", "Issued:"))
    header = [
        f["supplier"].upper(),
        f"{rng.randrange(1, 200)} Market Street, {f['city']}",
        f"VAT ID: {f['vat_id']}",
    ]
    body = [
        "",
        "INVOICE",
        "",
        f"{inv_label} {f['number']}",
        f"{date_label} {f['date']}",
        f"Due date: {f['due']}",
        f"{f['cust_label']}: {f['customer']}",
        f"Purchase order: {f['po']}",
        f"{f['cat_label']}: {f['category'].capitalize()}",
        "",
        "Description                      Qty   Line total",
        *items,
        "",
        f"Subtotal: {f['subtotal']}",
        f"VAT {f['vat_rate']}%: {f['vat']}",
        f"{rng.choice(('Total due', 'Total', 'Grand total', 'Amount due'))}: {f['total']}",
        "",
        f"Please pay within 30 days. Questions? Call +49 30 {rng.randrange(1000000, 9999999)}.",
    ]
    return "\n".join(header + body)


def _compact(rng: random.Random, f: dict[str, str], items: list[str]) -> str:
    return "\n".join(
        [
            f"{f['supplier']} | Invoice # {f['number']} | {f['date']}",
            f"Bill to: {f['customer_name']} ({f['cust_label']} {f['customer']})",
            f"{f['cat_label']}: {f['category']}",
            "Items: " + "; ".join(item.strip() for item in items),
            f"Net {f['subtotal']}, tax {f['vat']}",
            f"Amount payable: {f['total']} - due {f['due']}",
            f"Order ref {f['po']}",
        ]
    )


def _letter(rng: random.Random, f: dict[str, str], items: list[str]) -> str:
    return "\n".join(
        [
            f["supplier"],
            f"{f['city']}, {f['date']}",
            "",
            f"Dear {f['customer_name']},",
            "",
            f"Ref. {f['number']}",
            f"{f['cust_label']}: {f['customer']}",
            "",
            f"thank you for your order {f['po']}. This letter is our invoice for the following:",
            *items,
            f"The net amount is {f['subtotal']} plus VAT of {f['vat']}.",
            f"Please pay the balance of {f['total']} by {f['due']}.",
            f"{f['cat_label']}: {f['category'].upper()}",
            "",
            "Kind regards,",
            f"Accounts team, {f['supplier']}",
        ]
    )


LAYOUTS = (_classic, _compact, _letter)


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
        due = issued + dt.timedelta(days=rng.choice((14, 30, 45)))
        if rng.random() < unknown_customer_rate:
            customer_id = customer_id_for(rng.randrange(90000, 99999))
        else:
            customer_id = rng.choice(known)
        lines = _line_items(rng, category)
        subtotal = sum((qty * price for _, qty, price in lines), Decimal("0.00"))
        vat_rate = rng.choice((0, 7, 10, 19, 20, 21, 25))
        vat = (subtotal * vat_rate / 100).quantize(Decimal("0.01"))
        total = subtotal + vat
        number = _invoice_number(rng, issued)
        supplier = rng.choice(SUPPLIERS)
        cust_label, customer_printed = _format_customer(rng, customer_id)
        money = _money_formatter(rng, currency)
        fields = {
            "supplier": supplier,
            "city": rng.choice(CITIES),
            "vat_id": f"EU{rng.randrange(100000000, 999999999)}",
            "number": number,
            "date": _format_date(rng, issued),
            "due": _format_date(rng, due),
            "cust_label": cust_label,
            "customer": customer_printed,
            "customer_name": f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}",
            "po": f"PO-{rng.randrange(10000, 99999)}",
            "cat_label": rng.choice(CATEGORY_LABELS),
            "category": category,
            "subtotal": money(subtotal),
            "vat_rate": str(vat_rate),
            "vat": money(vat),
            "total": money(total),
        }
        items = [f"{description:<32} {qty:>3}   {money(qty * price)}" for description, qty, price in lines]
        text = rng.choice(LAYOUTS)(rng, fields, items)
        text = "\n".join(_ocr_noise(rng, line, noise_rate) for line in text.splitlines()) + "\n"
        truth = ExtractedFacts(
            customer_id=customer_id,
            invoice_number=number,
            invoice_date=issued,
            amount=total,
            currency=currency,
            category=category,
            summary=f"{category.capitalize()} invoice {number} from {supplier}",
        )
        documents.append(SyntheticDocument(f"doc-{index:05d}", text, truth))
    return documents
