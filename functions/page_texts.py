"""A document's text page by page, for the grounding check (functions/grounding.py): the ONE function that
reads it, so a later reader (visual pages, packets) replaces it in one place.

PDF: pypdf's text of each page; DOCX: its paragraphs and tables as one page; text, Markdown and CSV: their
text as one page. Anything else (HTML, spreadsheets, a PDF without a text layer, a reader not installed):
None, and the grounding check marks the fields unverified (page only).
"""

from __future__ import annotations

import io

from functions.payloads.common import SourceFormat


def page_texts(data: bytes, document_format: SourceFormat | None) -> list[str] | None:
    """The text of each page (None: no text layer this function reads)."""
    try:
        if document_format == "pdf":
            from pypdf import PdfReader  # noqa: PLC0415 (read only when a PDF is grounded)

            pages = [page.extract_text() or "" for page in PdfReader(io.BytesIO(data)).pages]
            return pages if any(text.strip() for text in pages) else None
        if document_format == "docx":
            import docx  # noqa: PLC0415 (read only when a DOCX is grounded)

            document = docx.Document(io.BytesIO(data))
            lines = [paragraph.text for paragraph in document.paragraphs]
            for table in document.tables:
                lines.extend("\t".join(cell.text for cell in row.cells) for row in table.rows)
            return ["\n".join(lines)]
        if document_format in {"txt", "md", "csv"}:
            return [data.decode("utf-8", errors="replace")]
    except ImportError:
        return None
    except Exception:
        return None
    return None
