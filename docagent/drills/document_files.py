"""The synthetic invoices as real files: PDF (fpdf2), DOCX (python-docx), HTML, Markdown and text, in a mix
that looks like an inbox (PDF 50 %, DOCX 20 %, HTML 15 %, text and Markdown 15 %), each with its ground truth.
XLSX (openpyxl) is rendered on request only (``--formats ...,xlsx``, weight 10 % before renormalising): the
default demo corpus stays as it was.

The file's extension is the format's, but docagent never trusts it: ProcessDocument detects the format from
the content (functions/reading/documents.py).
"""

from __future__ import annotations

import datetime as dt
import html
import io
import random
import re
import zipfile
from collections.abc import Sequence
from typing import Literal, NamedTuple

from docagent.drills.synthetic import ExtractedFacts, SyntheticDocument
from functions.payloads.common import DocumentFormat

# What the demo's corpus renders: a Converse document format, or a document as it arrives at an intake desk:
# a scanned PDF (page images, no text layer) or a phone photo of the page (docagent/drills/scanned.py).
CorpusFormat = DocumentFormat | Literal["scan", "photo"]
FIXED_TIME = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
# The default mix: share of the corpus per format.
DEFAULT_MIX: dict[CorpusFormat, float] = {"pdf": 0.50, "docx": 0.20, "html": 0.15, "txt": 0.08, "md": 0.07}
DEFAULT_FORMATS: tuple[CorpusFormat, ...] = tuple(DEFAULT_MIX)
# The weight of each format docagent renders, for a mix of chosen formats (renormalised over them).
WEIGHTS: dict[CorpusFormat, float] = {**DEFAULT_MIX, "xlsx": 0.10, "scan": 0.10, "photo": 0.10}
RENDERED_FORMATS: tuple[CorpusFormat, ...] = tuple(WEIGHTS)
EXTENSIONS: dict[CorpusFormat, str] = {
    "scan": ".pdf",
    "photo": ".jpg",
    "pdf": ".pdf",
    "docx": ".docx",
    "html": ".html",
    "txt": ".txt",
    "md": ".md",
    "xlsx": ".xlsx",
}
_COLUMN_GAP = re.compile(r" {2,}")


class RenderedDocument(NamedTuple):
    document_id: str
    format: CorpusFormat
    file_name: str
    data: bytes
    truth: ExtractedFacts


def parse_formats(value: str) -> list[CorpusFormat]:
    """``pdf,docx,html`` as a list of rendered formats; a format docagent cannot render is a ValueError."""
    chosen: list[CorpusFormat] = []
    for part in (item.strip().lower() for item in value.split(",")):
        if not part:
            continue
        matching = [fmt for fmt in RENDERED_FORMATS if fmt == part]
        if not matching:
            raise ValueError(f"unknown format {part!r}: choose from {', '.join(RENDERED_FORMATS)}")
        if matching[0] not in chosen:
            chosen.append(matching[0])
    if not chosen:
        raise ValueError("--formats names no format")
    return chosen


def assign_formats(n: int, formats: Sequence[CorpusFormat], seed: int) -> list[CorpusFormat]:
    """Exactly proportional to the default mix renormalised over ``formats`` (largest remainder), shuffled
    deterministically for the seed."""
    weights = {fmt: WEIGHTS[fmt] for fmt in formats}
    total = sum(weights.values())
    quotas = {fmt: n * weight / total for fmt, weight in weights.items()}
    counts = {fmt: int(quota) for fmt, quota in quotas.items()}
    by_remainder = sorted(formats, key=lambda fmt: (quotas[fmt] - counts[fmt], weights[fmt]), reverse=True)
    for fmt in by_remainder[: n - sum(counts.values())]:
        counts[fmt] += 1
    assigned = [fmt for fmt in formats for _ in range(counts[fmt])]
    random.Random(seed).shuffle(assigned)
    return assigned


def render_scanned_appendix_pdf(text: str, target_bytes: int, *, pages: int = 20, seed: int = 0) -> bytes:
    """A real-looking large PDF: the invoice's text on page 1, then ``pages`` pages each carrying a noisy
    photograph-like image (random pixels, so neither JPEG nor Flate shrinks them) sized so the file comes
    to about ``target_bytes``: a manual or an invoice with scanned attachments, the ordinary 1-5 MB PDF."""
    from fpdf import FPDF  # noqa: PLC0415
    from PIL import Image  # noqa: PLC0415

    pdf = FPDF(format="A4")
    pdf.set_creation_date(FIXED_TIME)
    pdf.core_fonts_encoding = "cp1252"
    pdf.set_auto_page_break(auto=True, margin=15)
    pdf.add_page()
    pdf.set_font("Courier", size=9)
    for line in text.splitlines():
        pdf.cell(text=line or " ", new_x="LMARGIN", new_y="NEXT")
    per_page = max(1, (target_bytes - len(render_pdf(text))) // pages)
    side = max(8, int((per_page / 3) ** 0.5))  # raw RGB, stored without compression loss: ~3 bytes a pixel
    noise = random.Random(seed)
    for page in range(pages):
        image = Image.frombytes("RGB", (side, side), noise.randbytes(side * side * 3))
        pdf.add_page()
        pdf.cell(text=f"Attachment {page + 1} of {pages}", new_x="LMARGIN", new_y="NEXT")
        pdf.image(image, x=15, y=25, w=180)
    return bytes(pdf.output())


def render_pdf(text: str, *, title: str = "Invoice", author: str = "docagent synthetic") -> bytes:
    """One A4 page per 60 lines, Courier 9 pt (the columns stay aligned), cp1252 so € and £ survive.
    Byte-stable: the creation date is fixed, so the same text always gives the same sha256."""
    from fpdf import FPDF  # noqa: PLC0415 (each renderer imports its library: a cached corpus needs none)

    pdf = FPDF(format="A4")
    pdf.set_creation_date(FIXED_TIME)
    pdf.core_fonts_encoding = "cp1252"
    pdf.set_title(title)
    pdf.set_author(author)
    pdf.set_auto_page_break(auto=True, margin=15)
    pdf.add_page()
    pdf.set_font("Courier", size=9)
    for line in text.splitlines():
        pdf.cell(text=line or " ", new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())


def render_docx(text: str) -> bytes:
    """Byte-stable: fixed core-property dates and zip member times (python-docx stamps the current time)."""
    import docx  # noqa: PLC0415

    document = docx.Document()
    document.core_properties.created = document.core_properties.modified = FIXED_TIME.replace(tzinfo=None)
    for line in text.splitlines():
        document.add_paragraph(line)
    buffer = io.BytesIO()
    document.save(buffer)
    return _fixed_zip_times(buffer.getvalue())


def _fixed_zip_times(data: bytes) -> bytes:
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as target:
        for member in source.infolist():
            info = zipfile.ZipInfo(member.filename, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            target.writestr(info, source.read(member.filename))
    return out.getvalue()


def render_xlsx(text: str) -> bytes:
    """One sheet, one row per line, a cell per column of the text (split where two or more spaces align
    it), every cell a string as the invoice prints it. Byte-stable: fixed workbook dates and zip times."""
    import openpyxl  # noqa: PLC0415
    from openpyxl.writer.excel import ExcelWriter  # noqa: PLC0415

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    assert sheet is not None
    sheet.title = "Invoice"
    for line in text.splitlines():
        sheet.append([cell for cell in _COLUMN_GAP.split(line.strip()) if cell] or [None])
    workbook.properties.created = workbook.properties.modified = FIXED_TIME.replace(tzinfo=None)
    buffer = io.BytesIO()
    # ExcelWriter, not Workbook.save: save stamps the modified date with the current time.
    ExcelWriter(workbook, zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED)).save()
    return _fixed_zip_times(buffer.getvalue())


def render_html(text: str) -> bytes:
    paragraphs = "\n".join(f"<p>{html.escape(line)}</p>" for line in text.splitlines() if line.strip())
    page = (
        '<!DOCTYPE html>\n<html lang="en">\n<head><meta charset="utf-8"><title>Invoice</title>'
        f"<style>p {{ margin: 0 }}</style></head>\n<body>\n{paragraphs}\n</body>\n</html>\n"
    )
    return page.encode()


def render_markdown(text: str) -> bytes:
    lines = text.splitlines()
    heading = next((line for line in lines if line.strip()), "Invoice")
    body = "\n".join(f"{line}  " if line.strip() else "" for line in lines[lines.index(heading) + 1 :])
    return f"# {heading}\n\n{body}\n".encode()


def render(text: str, fmt: CorpusFormat) -> bytes:
    if fmt in {"scan", "photo"}:
        from docagent.drills import scanned  # noqa: PLC0415 (Pillow only for the formats that need it)

        return scanned.scanned_pdf([text]) if fmt == "scan" else scanned.phone_photo(text)
    if fmt == "pdf":
        return render_pdf(text)
    if fmt == "docx":
        return render_docx(text)
    if fmt == "html":
        return render_html(text)
    if fmt == "xlsx":
        return render_xlsx(text)
    if fmt == "md":
        return render_markdown(text)
    return text.encode()


def file_name(document_id: str, fmt: CorpusFormat) -> str:
    """A rendered document's file name: ``doc-NNNNN.<ext>``."""
    return f"{document_id}{EXTENSIONS[fmt]}"


def render_corpus(
    documents: Sequence[SyntheticDocument],
    formats: Sequence[CorpusFormat] = DEFAULT_FORMATS,
    seed: int = 7,
) -> list[RenderedDocument]:
    """Each document in its assigned format, named ``doc-NNNNN.<ext>``."""
    assigned = assign_formats(len(documents), formats, seed)
    return [
        RenderedDocument(
            document.document_id,
            fmt,
            file_name(document.document_id, fmt),
            render(document.text, fmt),
            document.truth,
        )
        for document, fmt in zip(documents, assigned, strict=True)
    ]
