"""The synthetic invoice's three layouts, each a page or two of text (about 3,000 to 5,000 characters) as
real invoices are: a classic table with bill-to and ship-to blocks, a dense export of an ordering system, and
a letter. What they print comes from docagent/drills/invoice_parts.py; the label variants, money and date
formats and the distractors (due, supply and order dates, purchase-order and sales-order numbers, unit prices,
the subtotal and the VAT per rate, the late-payment compensation) are what make extraction real work.

Every line stays within 95 characters, so the PDF's Courier 9 pt keeps it on the page.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal

from docagent.drills.invoice_parts import Buyer, LineItem, Seller, VatLine

TOTAL_LABELS = ("Total due", "Total", "Grand total", "Amount due")
# Categories whose lines are goods (retention of title, claims on delivery); the others are services.
GOODS = frozenset({"hardware", "other", "utilities"})


@dataclass(frozen=True)
class PrintedInvoice:
    """An invoice as printed: its parties and lines, and its facts in the document's own formats."""

    seller: Seller
    buyer: Buyer
    lines: list[LineItem]
    vat: list[VatLine]
    subtotal: Decimal
    total: Decimal
    money: Callable[[Decimal], str]
    number: str
    date: str
    due: str
    supplied: str
    ordered: str
    po: str
    sales_order: str
    delivery_note: str
    cust_label: str
    customer: str
    cat_label: str
    category: str
    terms_days: int
    early_discount_percent: int  # 0: none
    currency: str

    @property
    def vat_total(self) -> Decimal:
        return sum((line.vat for line in self.vat), Decimal("0.00"))


def _late_payment(rng: random.Random, invoice: PrintedInvoice) -> list[str]:
    """The late-payment clause (Directive 2011/7/EU: at least 8 points above the ECB's rate, EUR 40)."""
    if invoice.seller.country == "United States":
        return [
            "Overdue invoices bear a late charge of 1.5% per month (18% per year) from the day after",
            "the due date, and the costs of collection.",
        ]
    points = rng.choice((8, 9, 10))
    return [
        f"Overdue invoices bear interest at {points} percentage points above the ECB main refinancing",
        "rate, and a fixed compensation of EUR 40.00 for recovery costs (Directive 2011/7/EU).",
    ]


def _early_discount(invoice: PrintedInvoice) -> list[str]:
    if not invoice.early_discount_percent:
        return []
    discount = (invoice.total * invoice.early_discount_percent / 100).quantize(Decimal("0.01"))
    return [
        f"Cash discount: {invoice.early_discount_percent}% ({invoice.money(discount)}) if paid within 10 "
        "days of the invoice date."
    ]


def _reverse_charge(invoice: PrintedInvoice) -> list[str]:
    if any(line.rate for line in invoice.vat):
        return []
    return [
        "VAT 0%: reverse charge, the VAT is to be accounted for by the recipient",
        "(Article 196 of Directive 2006/112/EC).",
    ]


def _fulfilment(rng: random.Random, invoice: PrintedInvoice) -> str:
    """How the goods went out (carrier, parcels, weight, tracking), or who accepted the services."""
    if invoice.category in GOODS:
        carrier = rng.choice(("DHL Freight", "DPD", "UPS Standard", "GLS", "own vehicle"))
        parcels = rng.randrange(1, 2 + len(invoice.lines) // 3)
        return (
            f"Shipped with {carrier}: {parcels} parcel(s), {rng.randrange(2, 40 * parcels)} kg gross, "
            f"tracking {rng.randrange(10**9, 10**10)}."
        )
    return (
        f"Performed by our team for {invoice.buyer.company}; timesheets accepted by {invoice.buyer.contact}."
    )


def _seller_footer(seller: Seller) -> list[str]:
    return [
        f"{seller.name} | Registered office: {seller.city}, {seller.country}",
        seller.register,
        f"Directors: {seller.directors}",
    ]


def _account(seller: Seller) -> str:
    """IBAN and BIC, or a US bank's routing and account numbers."""
    if seller.iban[:2].isalpha():
        return f"IBAN: {seller.iban} | BIC: {seller.bic}"
    return f"ABA {seller.iban} | SWIFT: {seller.bic}"


def _payment(seller: Seller, number: str) -> list[str]:
    return [
        "Payment details",
        f"Account holder: {seller.name}",
        f"Bank: {seller.bank}",
        _account(seller),
        f"Payment reference: {number}",
    ]


def _conditions(rng: random.Random, seller: Seller, goods: bool) -> list[str]:
    """The small print of a supplier's invoice: title, claims, prices, jurisdiction, privacy."""
    lines = ["Terms and conditions"]
    if goods:
        lines += [
            "Goods remain our property until this invoice has been paid in full. Please check deliveries",
            "on receipt; claims for defects or missing items must reach us in writing within 8 days.",
        ]
    else:
        lines += [
            "Services are billed as performed and accepted; objections to this invoice must reach us in",
            "writing within 14 days of receipt, after which it is deemed accepted.",
        ]
    lines += [
        "Prices are exclusive of VAT unless stated otherwise. Our general terms of sale apply; you find",
        f"them at {seller.website}/terms. Place of performance and jurisdiction: {seller.city}.",
        "Our liability is limited as set out in those terms. Bank charges are borne by the payer;",
        "we do not accept cheques. Please notify us of any change to your billing address.",
        rng.choice(
            (
                f"Contact data is processed for this order only; see {seller.website}/privacy.",
                "Personal data is processed under our privacy notice, available on request.",
            )
        ),
    ]
    return lines


def _contact(invoice: PrintedInvoice) -> str:
    seller = invoice.seller
    return f"Your contact: {seller.directors.split(', ')[1]}, {seller.phone}-{len(invoice.lines):02d}"


def _itemised(invoice: PrintedInvoice, head: Callable[[LineItem], str], detail: str) -> list[str]:
    """Each line item's line, then its detail on a line of its own (``detail``: a format of ``{detail}``)."""
    return [text for line in invoice.lines for text in (head(line), detail.format(detail=line.detail))]


def classic(rng: random.Random, invoice: PrintedInvoice) -> str:
    seller, buyer, money = invoice.seller, invoice.buyer, invoice.money
    inv_label = rng.choice(("Invoice number:", "Invoice No.", "Invoice #", "INVOICE NUMBER:"))
    date_label = rng.choice(("Invoice date:", "Date of issue:", "Date:", "Issued:"))
    supply_label = rng.choice(("Date of supply:", "Delivery date:", "Delivered on:"))
    bill = [
        "Bill to:",
        buyer.company,
        f"Attn. {buyer.contact}, {buyer.department}",
        buyer.street,
        buyer.city_line,
        buyer.country,
        f"VAT ID: {buyer.vat_id}",
    ]
    ship = ["Ship to:", *(buyer.ship_to or ("Same as billing address",))]
    addresses = [
        f"{left:<48}{right}".rstrip()
        for left, right in zip(bill, ship + [""] * (len(bill) - len(ship)), strict=False)
    ]
    table = [f"{'Pos':<4}{'Description':<38}{'Qty':>4} {'Unit':<8}{'Unit price':>14}{'VAT':>5}{'Amount':>16}"]
    for line in invoice.lines:
        table.append(
            f"{line.position:<4}{line.description[:37]:<38}{line.quantity:>4} {line.unit:<8}"
            f"{money(line.unit_price):>14}{line.vat_rate:>4}%{money(line.net):>16}"
        )
        table.append(f"{'':<4}{line.detail}")
    vat_lines = [f"VAT {vat.rate}% on {money(vat.net)}: {money(vat.vat)}" for vat in invoice.vat]
    total_label = rng.choice(TOTAL_LABELS)
    return "\n".join(
        [
            seller.name.upper(),
            f"{seller.street}, {seller.city_line}, {seller.country}",
            f"Phone {seller.phone} | {seller.email} | {seller.website}",
            f"VAT ID: {seller.vat_id} | {seller.register}",
            "",
            "INVOICE",
            "",
            f"{inv_label} {invoice.number}",
            f"{date_label} {invoice.date}",
            f"{supply_label} {invoice.supplied}",
            f"Due date: {invoice.due}",
            f"{invoice.cust_label}: {invoice.customer}",
            f"Purchase order: {invoice.po}",
            f"Sales order: {invoice.sales_order}, order date {invoice.ordered}",
            f"Delivery note: {invoice.delivery_note}",
            f"{invoice.cat_label}: {invoice.category.capitalize()}",
            "",
            *addresses,
            "",
            *table,
            "",
            f"Subtotal: {money(invoice.subtotal)}",
            *vat_lines,
            f"{total_label}: {money(invoice.total)}",
            "",
            _fulfilment(rng, invoice),
            f"Payment terms: {invoice.terms_days} days net. Please transfer the invoice amount to the",
            f"account below and quote invoice number {invoice.number} as the payment reference.",
            *_early_discount(invoice),
            *_reverse_charge(invoice),
            "",
            *_payment(seller, invoice.number),
            "",
            *_late_payment(rng, invoice),
            "",
            *_conditions(rng, seller, invoice.category in GOODS),
            "",
            "Notes: this invoice was issued electronically and is valid without signature.",
            _contact(invoice),
            f"Questions? Call {seller.phone} or write to {seller.email}.",
            "Thank you for your business.",
            *_seller_footer(seller),
        ]
    )


def compact(rng: random.Random, invoice: PrintedInvoice) -> str:
    seller, buyer, money = invoice.seller, invoice.buyer, invoice.money
    ship = "; ".join(buyer.ship_to[1:]) if buyer.ship_to else "billing address"
    items = _itemised(
        invoice,
        lambda line: (
            f"{line.position:>2}. {line.description} | {line.quantity} {line.unit} x "
            f"{money(line.unit_price)} | VAT {line.vat_rate}% | {money(line.net)}"
        ),
        "    {detail}",
    )
    taxes = "; ".join(f"VAT {vat.rate}% {money(vat.vat)} on {money(vat.net)}" for vat in invoice.vat)
    return "\n".join(
        [
            f"{seller.name} | Invoice # {invoice.number} | {invoice.date}",
            f"{seller.street}, {seller.city_line}, {seller.country} | VAT {seller.vat_id}",
            seller.register,
            f"{seller.phone} | {seller.email} | {seller.website}",
            f"Bill to: {buyer.contact} ({invoice.cust_label} {invoice.customer})",
            f"{buyer.company}, {buyer.street}, {buyer.city_line}, {buyer.country}",
            f"Buyer VAT {buyer.vat_id}",
            f"Ship to: {ship}",
            f"{invoice.cat_label}: {invoice.category}",
            f"Order ref {invoice.po} | Sales order {invoice.sales_order} of {invoice.ordered}",
            f"Delivery {invoice.delivery_note}, supplied {invoice.supplied}",
            f"Document: commercial invoice (UNTDID 1001 code 380) | Currency: {invoice.currency}",
            "Payment means: credit transfer (code 58) | Delivery terms: DAP, Incoterms 2020",
            "Items: pos. description | quantity x unit price | VAT | net",
            *items,
            f"Net {money(invoice.subtotal)}, tax {money(invoice.vat_total)}",
            taxes,
            f"Amount payable: {money(invoice.total)} - due {invoice.due}",
            f"Terms: {invoice.terms_days} days net",
            _fulfilment(rng, invoice),
            *_early_discount(invoice),
            *_reverse_charge(invoice),
            *_payment(seller, invoice.number),
            *_late_payment(rng, invoice),
            *_conditions(rng, seller, invoice.category in GOODS),
            "Notes: generated by the supplier's ordering system; valid without signature.",
            _contact(invoice),
            *_seller_footer(seller),
        ]
    )


def letter(rng: random.Random, invoice: PrintedInvoice) -> str:
    seller, buyer, money = invoice.seller, invoice.buyer, invoice.money
    items = _itemised(
        invoice,
        lambda line: (
            f"  - {line.quantity} {line.unit} {line.description} at {money(line.unit_price)} each,"
            f" VAT {line.vat_rate}%: {money(line.net)}"
        ),
        "    ({detail})",
    )
    rates = ", ".join(f"{vat.rate}% on {money(vat.net)}" for vat in invoice.vat)
    site = f"{buyer.ship_to[1]} in {buyer.ship_to[3].rsplit(' ', 1)[1]}" if buyer.ship_to else ""
    delivered = f"delivered to {site}" if site else "delivered"
    return "\n".join(
        [
            seller.name,
            seller.street,
            f"{seller.city_line}, {seller.country}",
            f"VAT ID {seller.vat_id} | {seller.register}",
            "",
            buyer.contact,
            buyer.company,
            f"Attn. {buyer.department}",
            buyer.street,
            f"{buyer.city_line}, {buyer.country}",
            "",
            f"{seller.city}, {invoice.date}",
            "",
            f"Ref. {invoice.number}",
            f"{invoice.cust_label}: {invoice.customer}",
            f"Your VAT ID: {buyer.vat_id}",
            "",
            f"Dear {buyer.contact},",
            "",
            f"thank you for your order {invoice.po} of {invoice.ordered} (our order {invoice.sales_order}).",
            "We were glad to work with your team again and hope that everything arrived as agreed.",
            f"This letter is our invoice for the following, {delivered}",
            f"on {invoice.supplied} with delivery note {invoice.delivery_note}:",
            *items,
            f"The net amount is {money(invoice.subtotal)} plus VAT of {money(invoice.vat_total)}",
            f"(VAT {rates}).",
            f"Please pay the balance of {money(invoice.total)} by {invoice.due} to our account",
            f"with {seller.bank},",
            f"{_account(seller)},",
            f"quoting Ref. {invoice.number}.",
            _fulfilment(rng, invoice),
            f"{invoice.cat_label}: {invoice.category.upper()}",
            *_early_discount(invoice),
            *_reverse_charge(invoice),
            *_late_payment(rng, invoice),
            "",
            *_conditions(rng, seller, invoice.category in GOODS),
            "",
            "Should you have any questions about this invoice, please do not hesitate to contact us;",
            "we will gladly send you copies of the delivery notes or the timesheets on request.",
            _contact(invoice),
            "",
            "Kind regards,",
            f"Accounts team, {seller.name}",
            f"{seller.phone} | {seller.email} | {seller.website}",
            *_seller_footer(seller),
        ]
    )


LAYOUTS = (classic, compact, letter)
