"""The evidence a reviewer chooses for a field (docs/design.md, "Review"): a page of the document and the
text read there, typed (``docagent review accept --evidence FIELD=PAGE:QUOTE``) or selected in the console's
page text (with the selection's offsets). It is checked against the document as the job read it: the quote
must be on that page (docagent finds it there as the grounding check finds a model's quote,
functions/evidence/grounding.py ``locate``, and records its span); a document without a text layer keeps the
page and the quote as given.
"""

from __future__ import annotations

from docagent.operations.context import RefusedError
from docagent.operations.records import JobRecords
from functions.evidence.quote_matching import locate
from functions.payloads.document import DocumentResult
from functions.reading.documents import detect_format
from functions.reading.page_texts import page_texts
from functions.reviews import ChosenEvidence

# The most of a document read to check a reviewer's evidence: Converse's limit per document (the job read no
# more).
EVIDENCE_MAX_BYTES = 4_500_000


def parse_evidence(values: list[str]) -> dict[str, ChosenEvidence]:
    """``FIELD=PAGE:QUOTE`` pairs as typed (``--evidence``)."""
    chosen: dict[str, ChosenEvidence] = {}
    for value in values:
        name, sep, rest = value.partition("=")
        page, colon, quote = rest.partition(":")
        if not sep or not name.strip() or not colon or not page.strip().isdigit() or not quote.strip():
            raise RefusedError(
                "InvalidEvidence", f"--evidence {value!r}: expected FIELD=PAGE:QUOTE (PAGE from 1)"
            )
        if int(page) < 1:
            raise RefusedError("InvalidEvidence", f"--evidence {value!r}: pages count from 1")
        chosen[name.strip()] = ChosenEvidence(page=int(page), quote=quote.strip())
    return chosen


def resolved(
    records: JobRecords, result: DocumentResult, chosen: dict[str, ChosenEvidence]
) -> dict[str, ChosenEvidence]:
    """Each field's chosen evidence with its span in its page's text, or RefusedError (``InvalidEvidence``)
    naming the field whose quote is not on its page, or whose page the document (a packet's section: its
    pages, counted in the packet) does not have."""
    if not chosen:
        return {}
    for name, evidence in chosen.items():  # a packet's section is read on its pages only
        if result.pages is not None and not result.pages[0] <= evidence.page <= result.pages[1]:
            first, last = result.pages
            raise RefusedError(
                "InvalidEvidence",
                f"evidence for {name}: section {result.section_id} is pages {first}-{last}, not page "
                f"{evidence.page}",
            )
    pages = _pages(records, result)
    if pages is None:  # no text layer (an image, a scan): the page and the quote as the reviewer gave them
        return chosen
    found: dict[str, ChosenEvidence] = {}
    for name, evidence in chosen.items():
        if evidence.page > len(pages):
            raise RefusedError(
                "InvalidEvidence",
                f"evidence for {name}: the document has {len(pages)} page(s), not page {evidence.page}",
            )
        text = pages[evidence.page - 1]
        start, end = evidence.start, evidence.end
        if start is not None and end is not None and text[start:end] == evidence.quote:
            found[name] = evidence
            continue
        located = locate(evidence.quote, [text], 1)
        if located is None:
            raise RefusedError(
                "InvalidEvidence",
                f"evidence for {name}: {evidence.quote!r} is not on page {evidence.page} of the document",
            )
        found[name] = evidence.model_copy(update={"start": located.start, "end": located.end})
    return found


def _pages(records: JobRecords, result: DocumentResult) -> list[str] | None:
    entry = next((e for e in records.entries() if e.document_id == result.document_id), None)
    content = None if entry is None else records.document_bytes(entry, EVIDENCE_MAX_BYTES)
    if content is None:
        raise RefusedError(
            "DocumentMissing", f"document {result.document_id} is gone: its evidence cannot be checked"
        )
    return page_texts(content, result.format or detect_format(content))
