"""What a real invoice holds besides the facts docagent extracts: the seller (address, VAT and company
numbers, contact, bank), the buyer and the delivery address, 5 to 20 priced line items with their VAT rates,
and the VAT breakdown. docagent/drills/synthetic.py draws an invoice's facts; this module draws the rest, and
docagent/drills/invoice_layouts.py prints them.

What an invoice must say (looked up 2026-12-02): Council Directive 2006/112/EC, Article 226 (the EU VAT
directive; https://service.betterregulation.com/document/245496): the date of issue; a sequential number; the
supplier's VAT identification number (and the customer's when the customer is liable for the VAT); the full
name and address of supplier and customer; the quantity and nature of the goods or services; the date of
supply where it differs from the date of issue; the taxable amount per rate, the unit price exclusive of VAT
and any discounts; the VAT rate applied; the VAT amount payable; and for an exempt or reverse-charge supply,
a reference to the provision. Most member states add the company's register number and seat (Austria's
UStG § 11, Coupa's supplier compliance pages). Late payment (Directive 2011/7/EU, EUR-Lex summary
LEGISSUM:mi0074): interest of at least 8 percentage points above the ECB's main refinancing rate and a fixed
EUR 40 for recovery costs, which invoices commonly state.

Deterministic for the ``random.Random`` it is given; nothing here is a real company, person or account.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from decimal import Decimal

CITIES = ("Berlin", "Vienna", "Dublin", "Lyon", "Utrecht", "Zurich", "Leeds", "Porto", "Turku", "Boston")


@dataclass(frozen=True)
class Locale:
    """A city's country, street names, postcode and the shape of its tax and register numbers."""

    country: str
    code: str
    streets: tuple[str, ...]
    postcode: str  # a shape: '#' a digit, '@' a letter
    vat: str  # a shape, as postcode
    register: str  # a shape, as postcode
    phone: str
    bank: str
    bic: str
    iban_length: int


LOCALES: dict[str, Locale] = {
    "Berlin": Locale(
        "Germany", "DE", ("Hafenstraße", "Lindenallee", "Friedrichstraße", "Am Kanal"), "10###",
        "DE#########", "HRB ##### B, Amtsgericht Charlottenburg", "+49 30", "Commerzbank AG", "COBADEFFXXX",
        22,
    ),
    "Vienna": Locale(
        "Austria", "AT", ("Praterstraße", "Mariahilfer Straße", "Ringgasse"), "1###", "ATU########",
        "FN ######a, Handelsgericht Wien", "+43 1", "Erste Bank der oesterreichischen Sparkassen AG",
        "GIBAATWWXXX", 20,
    ),
    "Dublin": Locale(
        "Ireland", "IE", ("Baggot Street", "Harcourt Road", "Grand Canal Quay"), "D## @#@#", "IE#######@",
        "CRO no. ######, registered in Ireland", "+353 1", "Bank of Ireland", "BOFIIE2DXXX", 22,
    ),
    "Lyon": Locale(
        "France", "FR", ("Rue de la République", "Quai Saint-Antoine", "Rue Mercière"), "6####",
        "FR###########", "RCS Lyon ### ### ###, SAS au capital de 50 000 EUR", "+33 4", "BNP Paribas",
        "BNPAFRPPXXX", 27,
    ),
    "Utrecht": Locale(
        "Netherlands", "NL", ("Oudegracht", "Catharijnesingel", "Vredenburg"), "#### @@", "NL#########B01",
        "KvK ########", "+31 30", "ING Bank N.V.", "INGBNL2AXXX", 18,
    ),
    "Zurich": Locale(
        "Switzerland", "CH", ("Bahnhofstrasse", "Seefeldstrasse", "Limmatquai"), "8###",
        "CHE-###.###.### MWST", "Handelsregister des Kantons Zürich, CHE-###.###.###", "+41 44",
        "Zürcher Kantonalbank", "ZKBKCHZZ80A", 21,
    ),
    "Leeds": Locale(
        "United Kingdom", "GB", ("Wellington Street", "Park Row", "Kirkgate"), "LS# #@@", "GB#########",
        "Registered in England and Wales no. 0#######", "+44 113", "Barclays Bank UK PLC", "BUKBGB22XXX", 22,
    ),
    "Porto": Locale(
        "Portugal", "PT", ("Rua de Santa Catarina", "Avenida dos Aliados", "Rua das Flores"), "4###-###",
        "PT#########", "NIPC #########, Conservatória do Registo Comercial do Porto", "+351 22",
        "Millennium bcp", "BCOMPTPLXXX", 25,
    ),
    "Turku": Locale(
        "Finland", "FI", ("Aurakatu", "Linnankatu", "Humalistonkatu"), "20###", "FI########",
        "Business ID #######-#", "+358 2", "Nordea Bank Abp", "NDEAFIHHXXX", 18,
    ),
    "Boston": Locale(
        "United States", "US", ("Atlantic Avenue", "Boylston Street", "Summer Street"), "02###",
        "EIN ##-#######", "a Massachusetts corporation, ID #########", "+1 617", "Citizens Bank, N.A.",
        "CTZIUS33XXX", 0,
    ),
}  # fmt: skip

COMPANY_FORMS = ("Consulting Ltd", "GmbH", "& Partners", "Analytics BV", "Holding SA", "Labs Oy", "Group AG")
DEPARTMENTS = ("Accounts payable", "Finance department", "Purchasing", "Procurement")
SITES = ("Goods receiving, Gate 2", "Warehouse", "Reception, 3rd floor", "Site office", "Loading bay B")


@dataclass(frozen=True)
class Catalogued:
    """A product or service a supplier of that kind sells: its unit, price range and VAT treatment."""

    description: str
    unit: str
    low: int
    high: int
    detail: str  # serial | period | person | route | meter | note
    reduced_vat: bool = False


CATALOGUE: dict[str, tuple[Catalogued, ...]] = {
    "hardware": (
        Catalogued("Laptop stand, aluminium", "pc", 30, 90, "serial"),
        Catalogued("USB-C dock, 4K dual display", "pc", 120, 260, "serial"),
        Catalogued("27in monitor, IPS, height adjustable", "pc", 180, 420, "serial"),
        Catalogued("Wireless keyboard and mouse set", "set", 40, 110, "serial"),
        Catalogued("Notebook 14in, 16 GB RAM, 512 GB SSD", "pc", 700, 1600, "serial"),
        Catalogued("Headset with noise cancelling", "pc", 60, 240, "serial"),
        Catalogued("Network switch, 24 ports, managed", "pc", 180, 650, "serial"),
        Catalogued("Cat6 patch cable, 2 m", "pc", 3, 9, "note"),
        Catalogued("Webcam, full HD", "pc", 45, 140, "serial"),
        Catalogued("Docking station power supply", "pc", 35, 80, "note"),
        Catalogued("External SSD, 2 TB", "pc", 110, 240, "serial"),
        Catalogued("Installation and cabling", "h", 60, 120, "person"),
        Catalogued("Shipping and packaging", "lot", 15, 60, "note"),
        Catalogued("Extended warranty, 36 months", "pc", 40, 160, "period"),
    ),
    "software": (
        Catalogued("Annual licence, IDE", "licence", 90, 400, "period"),
        Catalogued("Cloud backup seats", "seat", 20, 60, "period"),
        Catalogued("Design suite, named user", "licence", 300, 900, "period"),
        Catalogued("Project tracker, standard plan", "seat", 8, 30, "period"),
        Catalogued("Database support subscription", "month", 400, 1500, "period"),
        Catalogued("Password manager, business", "seat", 3, 9, "period"),
        Catalogued("Static analysis, per committer", "seat", 20, 70, "period"),
        Catalogued("Video conferencing, pro plan", "seat", 10, 25, "period"),
        Catalogued("Onboarding and training", "h", 90, 180, "person"),
        Catalogued("Premium support add-on", "month", 150, 600, "period"),
        Catalogued("Additional storage, 1 TB", "month", 5, 25, "period"),
        Catalogued("Single sign-on connector", "licence", 200, 800, "period"),
        Catalogued("Data migration service", "day", 700, 1300, "person"),
    ),
    "services": (
        Catalogued("Consulting day", "day", 600, 1400, "person"),
        Catalogued("Onsite support hour", "h", 80, 160, "person"),
        Catalogued("Workshop", "day", 900, 2500, "person"),
        Catalogued("Architecture review", "day", 900, 1800, "person"),
        Catalogued("Remote support hour", "h", 60, 130, "person"),
        Catalogued("Project management", "h", 85, 150, "person"),
        Catalogued("Requirements analysis", "day", 700, 1400, "person"),
        Catalogued("Security assessment", "day", 1000, 2200, "person"),
        Catalogued("Travel time, billed at half rate", "h", 40, 75, "person"),
        Catalogued("Documentation and handover", "h", 70, 140, "person"),
        Catalogued("Travel expenses, flat rate", "day", 60, 180, "note"),
        Catalogued("Report writing", "h", 75, 140, "person"),
    ),
    "travel": (
        Catalogued("Rail ticket, 1st class", "ticket", 40, 220, "route", reduced_vat=True),
        Catalogued("Hotel night, single room", "night", 90, 260, "note", reduced_vat=True),
        Catalogued("Airport transfer", "trip", 30, 90, "route", reduced_vat=True),
        Catalogued("Breakfast", "pc", 12, 28, "note"),
        Catalogued("Flight, economy", "ticket", 120, 680, "route"),
        Catalogued("Rental car, compact", "day", 35, 95, "note"),
        Catalogued("Fuel surcharge", "lot", 10, 60, "note"),
        Catalogued("Meeting room, half day", "pc", 120, 450, "note"),
        Catalogued("Parking", "day", 12, 40, "note"),
        Catalogued("Taxi", "trip", 15, 70, "route", reduced_vat=True),
        Catalogued("Booking fee", "pc", 5, 25, "note"),
        Catalogued("City tax", "night", 2, 8, "note", reduced_vat=True),
    ),
    "utilities": (
        Catalogued("Electricity, monthly", "month", 120, 900, "meter"),
        Catalogued("Water, quarterly", "quarter", 60, 300, "meter"),
        Catalogued("Fibre line", "month", 40, 120, "period"),
        Catalogued("Gas, monthly", "month", 80, 600, "meter"),
        Catalogued("Grid usage charge", "month", 30, 180, "meter"),
        Catalogued("Meter rental", "month", 3, 15, "meter"),
        Catalogued("Static IP addresses, block of 8", "month", 10, 40, "period"),
        Catalogued("Waste collection", "month", 40, 220, "period"),
        Catalogued("Heating, district", "month", 90, 700, "meter"),
        Catalogued("Mobile plan, business", "month", 15, 60, "period"),
        Catalogued("Electricity tax", "month", 10, 90, "meter"),
        Catalogued("Service charge", "month", 20, 90, "period"),
    ),
    "other": (
        Catalogued("Office plants, maintenance", "month", 20, 80, "period"),
        Catalogued("Catering, lunch buffet", "pc", 100, 600, "note", reduced_vat=True),
        Catalogued("Courier", "trip", 15, 70, "route"),
        Catalogued("Cleaning service", "h", 25, 45, "person"),
        Catalogued("Printing, brochures", "lot", 80, 900, "note", reduced_vat=True),
        Catalogued("Coffee beans, 1 kg", "pc", 14, 32, "note", reduced_vat=True),
        Catalogued("Office chair", "pc", 180, 650, "serial"),
        Catalogued("Stationery pack", "set", 10, 45, "note"),
        Catalogued("Event tickets", "ticket", 40, 250, "note"),
        Catalogued("Shredding service", "lot", 30, 140, "note"),
        Catalogued("First-aid kit refill", "set", 20, 60, "note"),
        Catalogued("Delivery and set-up", "lot", 25, 120, "note"),
    ),
}
# A reduced rate beside each standard rate docagent draws (0 is an exempt or reverse-charge invoice).
REDUCED_RATE = {0: 0, 7: 7, 10: 5, 19: 7, 20: 5, 21: 9, 25: 12}
ROUTES = ("Berlin - Vienna", "Dublin - Leeds", "Lyon - Zurich", "Utrecht - Berlin", "Porto - Lisbon")


@dataclass(frozen=True)
class Seller:
    name: str
    street: str
    city_line: str
    country: str
    vat_id: str
    register: str  # a shape, as postcode
    phone: str
    email: str
    website: str
    bank: str
    iban: str
    bic: str
    directors: str
    city: str


@dataclass(frozen=True)
class Buyer:
    contact: str
    company: str
    department: str
    street: str
    city_line: str
    country: str
    vat_id: str
    ship_to: tuple[str, ...]  # the delivery address' lines; () when goods go to the billing address


@dataclass(frozen=True)
class LineItem:
    position: int
    description: str
    detail: str
    quantity: int
    unit: str
    unit_price: Decimal
    vat_rate: int

    @property
    def net(self) -> Decimal:
        return self.quantity * self.unit_price


@dataclass(frozen=True)
class VatLine:
    rate: int
    net: Decimal
    vat: Decimal


def _pattern(rng: random.Random, shape: str) -> str:
    return "".join(
        str(rng.randrange(10)) if c == "#" else chr(rng.randrange(65, 91)) if c == "@" else c for c in shape
    )


def _iban(rng: random.Random, locale: Locale) -> str:
    """An IBAN with valid check digits (ISO 13616: mod 97 of the rearranged digits is 1), grouped by four."""
    if not locale.iban_length:
        return f"routing {_pattern(rng, '#########')}, account {_pattern(rng, '##########')}"
    bban = _pattern(rng, "#" * (locale.iban_length - 4))
    digits = "".join(str(int(c, 36)) for c in bban + locale.code + "00")
    check = 98 - int(digits) % 97
    iban = f"{locale.code}{check:02d}{bban}"
    return " ".join(iban[i : i + 4] for i in range(0, len(iban), 4))


def _slug(name: str) -> str:
    return "".join(c for c in name.split(maxsplit=1)[0].lower() if c.isalnum())


def seller(rng: random.Random, name: str, city: str, people: tuple[str, str]) -> Seller:
    locale = LOCALES[city]
    domain = f"{_slug(name)}-{rng.choice(('invoicing', 'billing', 'group', 'trade'))}.example"
    return Seller(
        name=name,
        street=f"{rng.choice(locale.streets)} {rng.randrange(1, 200)}",
        city_line=f"{_pattern(rng, locale.postcode)} {city}",
        country=locale.country,
        vat_id=_pattern(rng, locale.vat),
        register=_pattern(rng, locale.register),
        phone=f"{locale.phone} {rng.randrange(1000000, 9999999)}",
        email=f"{rng.choice(('accounts', 'billing', 'invoices', 'finance'))}@{domain}",
        website=f"www.{domain}",
        bank=locale.bank,
        iban=_iban(rng, locale),
        bic=locale.bic,
        directors=f"{people[0]}, {people[1]}",
        city=city,
    )


def buyer(rng: random.Random, contact: str) -> Buyer:
    city = rng.choice(CITIES)
    locale = LOCALES[city]
    company = f"{contact.rsplit(maxsplit=1)[-1]} {rng.choice(COMPANY_FORMS)}"
    street = f"{rng.choice(locale.streets)} {rng.randrange(1, 200)}"
    ship_to: tuple[str, ...] = ()
    if rng.random() < 0.5:
        site = rng.choice(CITIES)
        ship_to = (
            company,
            rng.choice(SITES),
            f"{rng.choice(LOCALES[site].streets)} {rng.randrange(1, 200)}",
            f"{_pattern(rng, LOCALES[site].postcode)} {site}",
            LOCALES[site].country,
        )
    return Buyer(
        contact=contact,
        company=company,
        department=rng.choice(DEPARTMENTS),
        street=street,
        city_line=f"{_pattern(rng, locale.postcode)} {city}",
        country=locale.country,
        vat_id=_pattern(rng, locale.vat),
        ship_to=ship_to,
    )


def line_items(
    rng: random.Random, category: str, vat_rate: int, detail: dict[str, list[str]]
) -> list[LineItem]:
    """5 to 20 priced lines of the category's catalogue (a line may repeat an item for another person,
    route or period, as timesheets and travel bills do); ``detail`` holds the words each kind of detail is
    drawn from (people; periods and days of service as printed)."""
    catalogue = CATALOGUE[category]
    count = rng.randrange(5, 21)
    chosen = rng.sample(catalogue, k=min(count, len(catalogue)))
    chosen += [rng.choice(catalogue) for _ in range(count - len(chosen))]
    lines = []
    for position, item in enumerate(chosen, 1):
        price = Decimal(rng.randrange(item.low * 100, item.high * 100)) / 100
        lines.append(
            LineItem(
                position=position,
                description=item.description,
                detail=_detail(rng, item.detail, detail),
                quantity=rng.randrange(1, 9 if item.unit in {"h", "seat", "pc"} else 5),
                unit=item.unit,
                unit_price=price,
                vat_rate=REDUCED_RATE[vat_rate] if item.reduced_vat else vat_rate,
            )
        )
    return lines


def _detail(rng: random.Random, kind: str, words: dict[str, list[str]]) -> str:
    if kind == "serial":
        return f"S/N {_pattern(rng, '@@####-#####')}, warranty {rng.choice((12, 24, 36))} months"
    if kind == "period":
        return f"period {rng.choice(words['periods'])}"
    if kind == "person":
        role = rng.choice(("consultant", "engineer", "trainer"))
        return f"{role}: {rng.choice(words['people'])}, {rng.choice(words['days'])}"
    if kind == "route":
        return f"{rng.choice(ROUTES)}, {rng.choice(words['days'])}"
    if kind == "meter":
        return f"meter {_pattern(rng, '#######')}, reading {rng.randrange(1000, 99999)} kWh"
    return rng.choice(("as agreed", "see delivery note", "per quotation", "as ordered", "standard terms"))


def vat_breakdown(lines: list[LineItem]) -> list[VatLine]:
    """The taxable amount and VAT per rate (Article 226 (8) and (10)), highest rate first."""
    rates = sorted({line.vat_rate for line in lines}, reverse=True)
    breakdown = []
    for rate in rates:
        net = sum((line.net for line in lines if line.vat_rate == rate), Decimal("0.00"))
        breakdown.append(VatLine(rate, net, (net * rate / 100).quantize(Decimal("0.01"))))
    return breakdown
