"""The text of a Converse document block, for the local cloud's deterministic extractor: pypdf for PDF,
python-docx for DOCX, openpyxl for XLSX and xlrd for XLS (docagent/localcloud/bedrock/spreadsheets.py), the
standard
library for HTML, CSV, Markdown and text.

It refuses what Bedrock refuses, with a message shaped like Bedrock's ValidationException about a document
("... source.bytes: The document source bytes could not be parsed as the specified format"): a corrupt PDF,
an encrypted PDF, a PDF without pages or over the page limit, a DOCX or XLSX that is a zip bomb or broken, an
encrypted (password-protected) workbook, a workbook with no cell values or over the cell limit, bytes that are
not the declared format, a document over 4.5 MB.

A PDF with no text layer (a scan) is not refused: on AWS, Converse without citations reads a PDF by text
extraction only (as of 2026-11, Anthropic docs "PDF support", Amazon Bedrock section: visual understanding
needs citations enabled), so the model sees an empty document and its reply fails the extraction schema. The
local extractor does the same: it returns no text, and the deterministic extractor's reply fails the same way.

Deviation (README): doc (legacy Word binary) is a format Bedrock reads; this module does not (no maintained
pure-Python reader of it exists), and refuses it with a reason that says so.
"""

from __future__ import annotations

import csv
import io
import zipfile
from html.parser import HTMLParser

from docagent.localcloud.bedrock.spreadsheets import SpreadsheetError, xls_text, xlsx_text
from functions.errors import DocumentRejected, DocumentUnreadable
from functions.payloads.common import MAX_CONVERSE_DOCUMENT_BYTES, MAX_CONVERSE_PDF_PAGES
from functions.reading.block_limits import pdf_call_bytes
from functions.reading.documents import detect_format
from functions.reading.page_texts import docx_text, pdf_page_texts

# Claude reads at most 100 PDF pages per request on models with a 200k-token context (functions/payloads/);
# the local runtime refuses more, as a request over the limit is refused.
MAX_PDF_PAGES = MAX_CONVERSE_PDF_PAGES
_BLOCK_TAGS = frozenset(
    {"p", "div", "br", "tr", "li", "h1", "h2", "h3", "h4", "h5", "h6", "table", "section", "header", "footer"}
)
_SKIPPED_TAGS = frozenset({"script", "style", "head", "template", "noscript"})


def refusal(reason: str) -> DocumentUnreadable:
    """A refusal worded as Bedrock's ValidationException about the document block."""
    return DocumentUnreadable(f"The document source bytes could not be parsed: {reason}")


def extract_text(data: bytes, declared_format: str, model_id: str = "") -> str:
    """The document's text as the model would read it, or DocumentUnreadable saying why it cannot be read.
    Its bytes are held to Converse's limit for its kind and ``model_id`` (functions/reading/block_limits.py: a
    PDF on Claude 4 and later is not held to 4.5 MB)."""
    limit = pdf_call_bytes(model_id) if declared_format == "pdf" else MAX_CONVERSE_DOCUMENT_BYTES
    if len(data) > limit:
        raise refusal(f"the document is {len(data)} bytes, over the limit of {limit}")
    try:
        found = detect_format(data)
    except DocumentRejected as problem:
        raise refusal(f"the document is not a valid {declared_format} document ({problem.reason})") from None
    if found != declared_format and not (
        found in {"txt", "md", "csv"} and declared_format in {"txt", "md", "csv"}
    ):
        raise refusal(f"the document is not a valid {declared_format} document (its content is {found})")
    if declared_format == "pdf":
        return _pdf_text(data)
    if declared_format == "docx":
        return _docx_text(data)
    if declared_format in {"xlsx", "xls"}:
        try:
            return xlsx_text(data) if declared_format == "xlsx" else xls_text(data)
        except SpreadsheetError as problem:
            raise refusal(str(problem)) from None
    if declared_format == "html":
        return html_text(data.decode("utf-8-sig"))
    if declared_format == "csv":
        return csv_text(data.decode("utf-8-sig"))
    if declared_format in {"txt", "md"}:
        return data.decode("utf-8-sig")
    raise refusal(  # doc: legacy Word binary, which no maintained pure-Python library reads
        f"the local Bedrock Runtime does not read {declared_format} documents "
        "(Bedrock does: a local deviation; no maintained reader of legacy Word files exists here)"
    )


# pypdf and python-docx are imported by the reader that needs them, when a document of theirs is read, not at
# each local cloud's start (0.3 s of CPU there: `python -X importtime`, 2026-12-02), as spreadsheets.py does.


def _pdf_text(data: bytes) -> str:
    from pypdf import PdfReader  # noqa: PLC0415 (when a PDF is read: see above)
    from pypdf.errors import PyPdfError  # noqa: PLC0415 (as pypdf)

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise refusal("the PDF is encrypted or password-protected")
        pages = reader.pages
        if len(pages) == 0:
            raise refusal("the PDF has no pages")
        if len(pages) > MAX_PDF_PAGES:
            raise refusal(f"the PDF has {len(pages)} pages, over the limit of {MAX_PDF_PAGES}")
        return "\n".join(pdf_page_texts(data))  # the one reading, remembered for the grounding's pages
    except DocumentUnreadable:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError) as error:
        raise refusal(f"the PDF is corrupt ({type(error).__name__}: {error})") from None


def _docx_text(data: bytes) -> str:
    from docx.opc.exceptions import PackageNotFoundError  # noqa: PLC0415 (when a DOCX is read: see above)

    try:  # the one reading of a DOCX's text, remembered for the grounding's pages (functions/reading/)
        return docx_text(data)
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError) as error:
        raise refusal(f"the DOCX is corrupt ({type(error).__name__}: {error})") from None
    except Exception as error:  # lxml's XMLSyntaxError and friends: a broken part of the package
        raise refusal(f"the DOCX is corrupt ({type(error).__name__})") from None


class _HtmlText(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIPPED_TAGS:
            self._skipping += 1
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n")
        elif tag in {"td", "th"}:
            self.parts.append("\t")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIPPED_TAGS:
            self._skipping = max(0, self._skipping - 1)
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self.parts.append(data)


def html_text(source: str) -> str:
    """The visible text of an HTML document, one line per block element, table cells tab-separated."""
    parser = _HtmlText()
    parser.feed(source)
    parser.close()
    lines = (
        " ".join(line.split()) if "\t" not in line else line.strip()
        for line in "".join(parser.parts).splitlines()
    )
    return "\n".join(line for line in lines if line)


def csv_text(source: str) -> str:
    """One line per row, cells tab-separated (the separator sniffed among comma, semicolon and tab)."""
    try:
        dialect: type[csv.Dialect] | csv.Dialect = csv.Sniffer().sniff(source[:4096], delimiters=",;\t")
    except csv.Error:
        dialect = csv.excel
    return "\n".join("\t".join(row) for row in csv.reader(io.StringIO(source), dialect))
