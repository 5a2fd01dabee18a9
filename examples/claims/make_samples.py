"""Writes the claims example's sample documents and their labels (samples/CLASS/NAME.EXT and NAME.label.json).

The files are checked in; run this only to change them: ``.venv/bin/python examples/claims/make_samples.py``.
The output is byte-stable (fixed PDF and DOCX dates), so re-running it changes nothing unless the text does.

Ten documents: four claim forms (two accepted, one above the desk limit that goes to review, one whose
policy is unknown and is rejected) and three repair estimates (multi-page PDFs and a DOCX; one above the
repair limit); and as documents arrive at an intake desk (docagent/drills/scanned.py, Pillow): a scanned
claim form (no text layer), a phone photo of one and a two-page faxed estimate (TIFF); and a packet: a claim
form and its repair estimate scanned into one PDF (samples/packet-0001.pdf), its label listing the sections
(the job splits PDFs: job.json ``split: pages``).
"""

from __future__ import annotations

from pathlib import Path

from docagent.drills.scaffold import Sample, write_samples

HERE = Path(__file__).resolve().parent


def _claim(*, policy: str, claimant: str, email: str, incident: str, kind: str, what: str, items: str) -> str:
    return f"""NORDHAVEN MUTUAL INSURANCE - PROPERTY & MOTOR CLAIM FORM

Section 1  Policy
  Policy number: {policy}

Section 2  Claimant
  Full name: {claimant}
  E-mail: {email}

Section 3  The incident
  Date of incident: {incident}
  Type of loss (water / fire / theft / storm / collision / other): {kind}
  What happened: {what}

Section 4  Damaged or stolen items
{items}

Declaration: I declare the information above is true and complete.
Signed and dated on receipt by the claims desk."""


CLAIMS = (
    Sample(
        "claim-form/claim-0001.pdf",
        (
            _claim(
                policy="Policy no. 100234",
                claimant="Maria Jensen",
                email="maria.jensen@example.com",
                incident="14 March 2025",
                kind="Water",
                what="A burst pipe under the kitchen sink flooded the kitchen overnight.",
                items="  Kitchen floor laminate (18 m2) ........ EUR 1,180.00\n"
                "  Dishwasher, Bosch SMS4 ................ EUR   640.50\n"
                "  TOTAL CLAIMED ......................... EUR 1,820.50",
            ),
        ),
        {
            "policy_number": "POL-100234",
            "claimant": {"name": "Maria Jensen", "email": "maria.jensen@example.com"},
            "incident_date": "2025-03-14",
            "incident_type": "water",
            "description": "A burst pipe under the kitchen sink flooded the kitchen overnight.",
            "damaged_items": [
                {"description": "Kitchen floor laminate (18 m2)", "amount": "1180.00"},
                {"description": "Dishwasher, Bosch SMS4", "amount": "640.50"},
            ],
            "total": "1820.50",
            "currency": "EUR",
        },
    ),
    Sample(
        "claim-form/claim-0002.docx",
        (
            _claim(
                policy="POL-204415",
                claimant="Aisha Rahman",
                email="aisha.rahman@example.org",
                incident="02/06/2025 (day/month/year)",
                kind="Collision",
                what="Another car reversed into mine in a supermarket car park.",
                items="  Rear bumper    £420.00\n  Tail light    £95.00\n  Total claimed    £515.00",
            ),
        ),
        {
            "policy_number": "POL-204415",
            "claimant": {"name": "Aisha Rahman", "email": "aisha.rahman@example.org"},
            "incident_date": "2025-06-02",
            "incident_type": "collision",
            "description": "Another car reversed into mine in a supermarket car park.",
            "damaged_items": [
                {"description": "Rear bumper", "amount": "420.00"},
                {"description": "Tail light", "amount": "95.00"},
            ],
            "total": "515.00",
            "currency": "GBP",
        },
    ),
    Sample(
        "claim-form/claim-0003.pdf",
        (
            _claim(
                policy="pol-310052",
                claimant="Lucia Ferreira",
                email="lucia.ferreira@example.pt",
                incident="2025-09-21",
                kind="Fire",
                what="A pan fire spread to the living room before it was put out.",
                items="  Sofa, three-seater ..................... 2.400,00 EUR\n"
                "  Curtains ............................... 380,00 EUR\n"
                "  Smoke cleaning, whole flat ............. 3.150,00 EUR\n"
                "  Total .................................. 5.930,00 EUR",
            ),
        ),
        {
            "policy_number": "POL-310052",
            "claimant": {"name": "Lucia Ferreira", "email": "lucia.ferreira@example.pt"},
            "incident_date": "2025-09-21",
            "incident_type": "fire",
            "description": "A pan fire spread to the living room before it was put out.",
            "damaged_items": [
                {"description": "Sofa, three-seater", "amount": "2400.00"},
                {"description": "Curtains", "amount": "380.00"},
                {"description": "Smoke cleaning, whole flat", "amount": "3150.00"},
            ],
            "total": "5930.00",
            "currency": "EUR",
        },
    ),
    Sample(
        "claim-form/claim-0004.docx",
        (
            _claim(
                policy="POL-999001",
                claimant="Peter Lindqvist",
                email="(none given)",
                incident="9 August 2025",
                kind="Theft",
                what="My bicycle was stolen from the locked rack outside the station.",
                items="  Bicycle, Trek FX 3    EUR 1,150.00\n  Total claimed    EUR 1,150.00",
            ),
        ),
        {
            "policy_number": "POL-999001",
            "claimant": {"name": "Peter Lindqvist", "email": None},
            "incident_date": "2025-08-09",
            "incident_type": "theft",
            "description": "My bicycle was stolen from the locked rack outside the station.",
            "damaged_items": [{"description": "Bicycle, Trek FX 3", "amount": "1150.00"}],
            "total": "1150.00",
            "currency": "EUR",
        },
    ),
)

# As documents arrive at the desk (docagent/drills/scanned.py): a scanned claim form (a PDF of page images, no
# text layer: read visually) and a phone photo of one (turned a little, lit unevenly: an image block).
INTAKE_CLAIMS = (
    Sample(
        "claim-form/claim-0005.pdf",
        (
            _claim(
                policy="POL-100871",
                claimant="Tomas Novak",
                email="tomas.novak@example.cz",
                incident="3 November 2025",
                kind="Storm",
                what="A storm tore roof tiles off and rain came into the attic.",
                items="  Roof tiles, replace 30 ............ EUR   690.00\n"
                "  Attic insulation .................. EUR   410.00\n"
                "  TOTAL CLAIMED ..................... EUR 1,100.00",
            ),
        ),
        {
            "policy_number": "POL-100871",
            "claimant": {"name": "Tomas Novak", "email": "tomas.novak@example.cz"},
            "incident_date": "2025-11-03",
            "incident_type": "storm",
            "description": "A storm tore roof tiles off and rain came into the attic.",
            "damaged_items": [
                {"description": "Roof tiles, replace 30", "amount": "690.00"},
                {"description": "Attic insulation", "amount": "410.00"},
            ],
            "total": "1100.00",
            "currency": "EUR",
        },
        scanned=True,
    ),
    Sample(
        "claim-form/claim-0006.jpg",
        (
            _claim(
                policy="POL-204730",
                claimant="Daniel Okafor",
                email="d.okafor@example.co.uk",
                incident="28/10/2025",
                kind="Theft",
                what="The car was broken into overnight and the stereo taken.",
                items="  Car stereo          £380.00\n  Side window         £240.00\n"
                "  Total claimed       £620.00",
            ),
        ),
        {
            "policy_number": "POL-204730",
            "claimant": {"name": "Daniel Okafor", "email": "d.okafor@example.co.uk"},
            "incident_date": "2025-10-28",
            "incident_type": "theft",
            "description": "The car was broken into overnight and the stereo taken.",
            "damaged_items": [
                {"description": "Car stereo", "amount": "380.00"},
                {"description": "Side window", "amount": "240.00"},
            ],
            "total": "620.00",
            "currency": "GBP",
        },
    ),
)


def _estimate_page(header: str, page: int, pages: int, lines: str, footer: str = "") -> str:
    columns = "Description                               Qty      Amount"
    return f"{header}\n\nPage {page} of {pages}\n\n{columns}\n{lines}\n{footer}"


_HANSEN = (
    "HANSEN BYG ApS - REPAIR ESTIMATE E-2025-0412\nCVR/VAT DK12345678\n"
    "Date 20.03.2025   Your policy: POL-100234"
)
_ATLANTICO = (
    "Atlântico Restauro Lda - Orçamento / Estimate AR-2025-118\nNIF/VAT PT501234567\n"
    "Issued 2 October 2025 for insurance policy 310052"
)

ESTIMATES = (
    Sample(
        "repair-estimate/estimate-0001.pdf",
        (
            _estimate_page(
                _HANSEN,
                1,
                2,
                "Remove damaged laminate, hours              6      390.00\n"
                "New laminate flooring, m2                  18    1,080.00",
                "(continued overleaf)",
            ),
            _estimate_page(
                _HANSEN,
                2,
                2,
                "Dehumidifier rental, days                   7      245.00\n"
                "Disposal of waste                           1       85.00",
                "\nSubtotal                                        1,800.00\nVAT 25%                      "
                "                     450.00\nTOTAL (EUR)                                     2,250.00",
            ),
        ),
        {
            "estimate_number": "E-2025-0412",
            "policy_number": "POL-100234",
            "repairer": {"name": "Hansen Byg ApS", "vat_number": "DK12345678"},
            "estimate_date": "2025-03-20",
            "line_items": [
                {"description": "Remove damaged laminate", "quantity": 6, "amount": "390.00"},
                {"description": "New laminate flooring", "quantity": 18, "amount": "1080.00"},
                {"description": "Dehumidifier rental", "quantity": 7, "amount": "245.00"},
                {"description": "Disposal of waste", "quantity": 1, "amount": "85.00"},
            ],
            "total": "2250.00",
            "currency": "EUR",
        },
    ),
    Sample(
        "repair-estimate/estimate-0002.docx",
        (
            "Bridge Street Body Shop Ltd\nVAT reg. GB123456789\n\nESTIMATE BSB-7781    11 July 2025\n"
            "Insurer reference: policy POL-204730\n\n"
            "Front wing panel    1    £310.00\nPaint and refinish (hours)    4.5    £292.50\n"
            "Headlamp unit    1    £185.00\n\nSubtotal £787.50   VAT 20% £157.50\nTotal £945.00",
        ),
        {
            "estimate_number": "BSB-7781",
            "policy_number": "POL-204730",
            "repairer": {"name": "Bridge Street Body Shop Ltd", "vat_number": "GB123456789"},
            "estimate_date": "2025-07-11",
            "line_items": [
                {"description": "Front wing panel", "quantity": 1, "amount": "310.00"},
                {"description": "Paint and refinish", "quantity": 4.5, "amount": "292.50"},
                {"description": "Headlamp unit", "quantity": 1, "amount": "185.00"},
            ],
            "total": "945.00",
            "currency": "GBP",
        },
    ),
    Sample(
        "repair-estimate/estimate-0003.pdf",
        (
            _estimate_page(
                _ATLANTICO,
                1,
                3,
                "Demolition of burnt ceiling, hours         12    1.080,00\n"
                "Plasterboard ceiling, m2                   22    1.540,00",
                "(continua / continued)",
            ),
            _estimate_page(
                _ATLANTICO,
                2,
                3,
                "Electrical rewiring, living room            1    2.350,00\n"
                "Repainting walls and ceiling, m2           64    1.920,00",
                "(continua / continued)",
            ),
            _estimate_page(
                _ATLANTICO,
                3,
                3,
                "Window frame replacement                    1      800,00",
                "\nSubtotal                                        7.690,00\nIVA/VAT 23%                 "
                "                    1.768,70\nTotal (EUR)                                     9.458,70",
            ),
        ),
        {
            "estimate_number": "AR-2025-118",
            "policy_number": "POL-310052",
            "repairer": {"name": "Atlântico Restauro Lda", "vat_number": "PT501234567"},
            "estimate_date": "2025-10-02",
            "line_items": [
                {"description": "Demolition of burnt ceiling", "quantity": 12, "amount": "1080.00"},
                {"description": "Plasterboard ceiling", "quantity": 22, "amount": "1540.00"},
                {"description": "Electrical rewiring, living room", "quantity": 1, "amount": "2350.00"},
                {"description": "Repainting walls and ceiling", "quantity": 64, "amount": "1920.00"},
                {"description": "Window frame replacement", "quantity": 1, "amount": "800.00"},
            ],
            "total": "9458.70",
            "currency": "EUR",
        },
    ),
)

_NOVAK_ROOFER = (
    "Střechy Brno s.r.o. - ESTIMATE SB-2025-077\nDIČ/VAT CZ27451234\nDate 10.11.2025   Policy POL-100871"
)
# A two-page fax of an estimate (a bilevel TIFF, each page an image block).
INTAKE_ESTIMATES = (
    Sample(
        "repair-estimate/estimate-0004.tif",
        (
            _estimate_page(
                _NOVAK_ROOFER,
                1,
                2,
                "Scaffolding, days                           2      300,00\n"
                "Roof tiles, supply and lay                 30      690,00",
                "(continued)",
            ),
            _estimate_page(
                _NOVAK_ROOFER,
                2,
                2,
                "Attic insulation, m2                       12      410,00",
                "\nTOTAL (EUR)                                     1.400,00",
            ),
        ),
        {
            "estimate_number": "SB-2025-077",
            "policy_number": "POL-100871",
            "repairer": {"name": "Střechy Brno s.r.o.", "vat_number": "CZ27451234"},
            "estimate_date": "2025-11-10",
            "line_items": [
                {"description": "Scaffolding", "quantity": 2, "amount": "300.00"},
                {"description": "Roof tiles, supply and lay", "quantity": 30, "amount": "690.00"},
                {"description": "Attic insulation", "quantity": 12, "amount": "410.00"},
            ],
            "total": "1400.00",
            "currency": "EUR",
        },
    ),
)

_BRIDGE_STREET = (
    "Bridge Street Body Shop Ltd - ESTIMATE BSB-7912\nVAT reg. GB123456789\n"
    "Date 21 October 2025   Insurer reference: policy POL-204415"
)
_PACKET_CLAIM = {
    "policy_number": "POL-204415",
    "claimant": {"name": "Aisha Rahman", "email": "aisha.rahman@example.org"},
    "incident_date": "2025-10-17",
    "incident_type": "collision",
    "description": "A van clipped the driver's side while the car was parked on the street.",
    "damaged_items": [
        {"description": "Driver's door", "amount": "640.00"},
        {"description": "Wing mirror", "amount": "145.00"},
    ],
    "total": "785.00",
    "currency": "GBP",
}
_PACKET_ESTIMATE = {
    "estimate_number": "BSB-7912",
    "policy_number": "POL-204415",
    "repairer": {"name": "Bridge Street Body Shop Ltd", "vat_number": "GB123456789"},
    "estimate_date": "2025-10-21",
    "line_items": [
        {"description": "Driver's door, replace and paint", "quantity": 1, "amount": "520.00"},
        {"description": "Wing mirror unit", "quantity": 1, "amount": "95.00"},
        {"description": "Labour, hours", "quantity": 2, "amount": "110.00"},
    ],
    "total": "725.00",
    "currency": "GBP",
}
# A packet: the claim form (page 1) and its two-page repair estimate (pages 2-3) in one PDF. Its label lists
# the sections the job makes of it (docagent/kit/samples.py).
PACKETS = (
    Sample(
        "packet-0001.pdf",
        (
            _claim(
                policy="POL-204415",
                claimant="Aisha Rahman",
                email="aisha.rahman@example.org",
                incident="17 October 2025",
                kind="Collision",
                what="A van clipped the driver's side while the car was parked on the street.",
                items="  Driver's door ........................ £640.00\n"
                "  Wing mirror .......................... £145.00\n"
                "  TOTAL CLAIMED ........................ £785.00",
            ),
            _estimate_page(
                _BRIDGE_STREET,
                1,
                2,
                "Driver's door, replace and paint            1      £520.00\n"
                "Wing mirror unit                            1       £95.00",
                "(continued overleaf)",
            ),
            _estimate_page(
                _BRIDGE_STREET,
                2,
                2,
                "Labour, hours                               2      £110.00",
                "\nTOTAL (GBP)                                       £725.00",
            ),
        ),
        {
            "sections": [
                {"class": "claim-form", "pages": [1, 1], "fields": _PACKET_CLAIM},
                {"class": "repair-estimate", "pages": [2, 3], "fields": _PACKET_ESTIMATE},
            ]
        },
    ),
)


if __name__ == "__main__":
    samples = CLAIMS + ESTIMATES + INTAKE_CLAIMS + INTAKE_ESTIMATES + PACKETS
    for path in write_samples(HERE / "samples", samples):
        print(path.relative_to(HERE), path.stat().st_size, "bytes")
