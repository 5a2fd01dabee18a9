"""Long PDFs and TIFFs in page windows (docs/design.md, "Page windows"): a PDF one model call cannot take
(more pages than a request takes, or more bytes than a call's PDF limit: functions/reading/block_limits.py),
or a TIFF of more pages than a request takes images (functions/reading/images.py), is read window by window,
each window's slice of the pinned bytes one durable extraction, and the windows' fields merged by the class's
schema.

pypdf (the functions' document layer: stacks/document_layer.py) slices the PDF (its pages and encryption:
functions/reading/pdf_layers.py ``pdf_pages``). A slice is deterministic (the same bytes give the same slice),
so a redrive sends the same window; its document information names the source document's sha256 and the
window's pages, which the local Bedrock answers by (a real model ignores them). A TIFF's window is its
converted pages (functions/reading/images.py), the first one carrying the same two facts as a comment in its
bytes (``with_note``), which a model does not read.
"""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol, cast

from pydantic import JsonValue

from functions.errors import DocumentTooLarge, DocumentUnreadable
from functions.evidence.grounding import ground_fields
from functions.inference.evidence import EVIDENCE_KEY, split
from functions.payloads.common import MAX_CONVERSE_PDF_PAGES
from functions.payloads.evidence import FieldEvidence, Grounding, Quote
from functions.reading.documents import DocumentInput
from functions.reading.images import MAX_IMAGES_PER_REQUEST, image_kind, image_note, with_note

DEFAULT_WINDOW_PAGES = 20
# The slice's document information: the whole document's sha256 and "first-last/total".
SOURCE_KEY = "/DocagentSource"
PAGES_KEY = "/DocagentPages"
# A TIFF window's first page's comment: "docagent-window {sha256} {first}-{last}/{total}".
NOTE_PREFIX = "docagent-window"
_RANK: dict[Grounding, int] = {"grounded": 3, "approximate": 2, "unverified": 1, "not_found": 0}


def window_step(first: int) -> str:
    """The durable step of the extraction of the window starting on page ``first``: ``extract-w0021``."""
    return f"extract-w{first:04d}"


@dataclass(frozen=True)
class PageWindow:
    """Pages ``first`` to ``last`` (1-based, inclusive) of a PDF of ``total`` pages."""

    first: int
    last: int
    total: int

    @property
    def window_id(self) -> str:
        """The journal's name of the window: ``p0021-0040``."""
        return f"p{self.first:04d}-{self.last:04d}"

    @property
    def step(self) -> str:
        """The durable step of its extraction: ``extract-w0021``."""
        return window_step(self.first)

    @property
    def label(self) -> str:
        return f"pages {self.first}-{self.last}"


def plan_windows(pages: int, size: int, call_bytes: int, window_pages: int | None) -> list[PageWindow]:
    """The windows a PDF of ``pages`` pages and ``size`` bytes is read in: none when one call takes it (at
    most MAX_CONVERSE_PDF_PAGES pages and ``call_bytes`` bytes), else consecutive windows of ``window_pages``
    (default DEFAULT_WINDOW_PAGES)."""
    if pages <= MAX_CONVERSE_PDF_PAGES and size <= call_bytes:
        return []
    return _consecutive(pages, min(window_pages or DEFAULT_WINDOW_PAGES, MAX_CONVERSE_PDF_PAGES))


def plan_image_windows(pages: int, window_pages: int | None) -> list[PageWindow]:
    """The windows an image document of ``pages`` pages (a TIFF) is read in: none when one call takes its
    images (at most MAX_IMAGES_PER_REQUEST), else consecutive windows of ``window_pages`` (default
    DEFAULT_WINDOW_PAGES), at most MAX_IMAGES_PER_REQUEST pages each."""
    if pages <= MAX_IMAGES_PER_REQUEST:
        return []
    return _consecutive(pages, min(window_pages or DEFAULT_WINDOW_PAGES, MAX_IMAGES_PER_REQUEST))


def _consecutive(pages: int, step: int) -> list[PageWindow]:
    return [PageWindow(first, min(first + step - 1, pages), pages) for first in range(1, pages + 1, step)]


class Slicer(Protocol):
    """What a window's call is sent: the window's slice of the document (PdfSlicer, ImageSlicer)."""

    def slice(self, window: PageWindow) -> DocumentInput: ...


@contextlib.contextmanager
def _unsplittable() -> Iterator[None]:
    """pypdf's failure to read or cut a PDF as the document's rejection (a corrupt PDF over one call)."""
    from pypdf.errors import PyPdfError  # noqa: PLC0415 (when a PDF is cut)

    try:
        yield
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, OSError, RecursionError) as error:
        raise DocumentUnreadable(
            f"the PDF is corrupt: it cannot be cut into page windows ({type(error).__name__}: {error})"
        ) from None


class PdfSlicer:
    """Slices of one PDF, read once by pypdf (a window's slice is made when it is needed, one at a time: a
    50 MB PDF is held once, not once a window)."""

    def __init__(self, document: DocumentInput, source_sha256: str, call_bytes: int) -> None:
        from pypdf import PdfReader  # noqa: PLC0415 (a windowed PDF was read by pypdf)

        self.document, self.source_sha256, self.call_bytes = document, source_sha256, call_bytes
        with _unsplittable():
            self._reader = PdfReader(io.BytesIO(document.data))

    def slice(self, window: PageWindow) -> DocumentInput:
        """The window's slice as the model receives it (the same name and read mode); DocumentTooLarge when
        it is over a call's PDF bytes, DocumentUnreadable when pypdf cannot cut it from a corrupt PDF."""
        from pypdf import PdfWriter  # noqa: PLC0415 (as above)

        with _unsplittable():
            writer = PdfWriter()
            for page in self._reader.pages[window.first - 1 : window.last]:
                writer.add_page(page)
            writer.add_metadata(
                {SOURCE_KEY: self.source_sha256, PAGES_KEY: f"{window.first}-{window.last}/{window.total}"}
            )
            buffer = io.BytesIO()
            writer.write(buffer)
        data = buffer.getvalue()
        if len(data) > self.call_bytes:
            raise DocumentTooLarge(
                f"{window.label} of the PDF are {len(data)} bytes, over a call's limit of {self.call_bytes} "
                "bytes (a smaller window_pages in job.json reads fewer pages a call)"
            )
        return replace(self.document, data=data, pages=window.last - window.first + 1)


def window_document(
    document: DocumentInput, window: PageWindow, source_sha256: str, call_bytes: int
) -> DocumentInput:
    """One window's slice of ``document`` (PdfSlicer.slice)."""
    return PdfSlicer(document, source_sha256, call_bytes).slice(window)


class ImageSlicer:
    """Windows of an image document's pages (a TIFF, its pages converted once by functions/reading/images.py):
    a window is its pages' image blocks, the first one noting the source and the window (``with_note``)."""

    def __init__(self, document: DocumentInput, source_sha256: str) -> None:
        self.document, self.source_sha256 = document, source_sha256

    def slice(self, window: PageWindow) -> DocumentInput:
        first, *rest = self.document.images[window.first - 1 : window.last]
        note = f"{NOTE_PREFIX} {self.source_sha256} {window.first}-{window.last}/{window.total}"
        return replace(self.document, images=(with_note(first, note), *rest))


@dataclass(frozen=True)
class WindowSource:
    """What a slice says of its source (``window_document``): the whole document's sha256 and the window."""

    sha256: str
    window: PageWindow


def window_source(data: bytes) -> WindowSource | None:
    """The source a window's slice names in its document information (a PDF) or its note (a TIFF window's
    first page), None for any other document or image."""
    if image_kind(data) in {"png", "jpeg"}:
        note = image_note(data) or ""
        words = note.split(" ")
        return _source(words[1], words[2]) if len(words) == 3 and words[0] == NOTE_PREFIX else None
    if b"%PDF-" not in data[:1024] or SOURCE_KEY.encode() not in data:
        return None
    try:
        from pypdf import PdfReader  # noqa: PLC0415
        from pypdf.errors import PyPdfError  # noqa: PLC0415

        metadata = PdfReader(io.BytesIO(data)).metadata
        if metadata is None:
            return None
        source, pages = metadata.get(SOURCE_KEY), metadata.get(PAGES_KEY)
        if not isinstance(source, str) or not isinstance(pages, str):
            return None
        return _source(source, pages)
    except (ImportError, PyPdfError, ValueError, KeyError, TypeError, AttributeError, OSError):
        return None


def _source(sha256: str, pages: str) -> WindowSource | None:
    """A window's source from its two facts: the sha256 and ``"first-last/total"``."""
    try:
        span, total = pages.split("/")
        first, last = span.split("-")
        return WindowSource(sha256, PageWindow(int(first), int(last), int(total)))
    except ValueError:
        return None


# ------------------------------------------------------------------------------------------- the merge


def _shifted(quotes: dict[str, Quote], window: PageWindow) -> dict[str, Quote]:
    """A window's quotes with their pages the document's (the slice's page 1 is the window's first)."""
    return {
        path: quote.model_copy(
            update={"page": min(quote.page, window.last - window.first + 1) + window.first - 1}
        )
        for path, quote in quotes.items()
    }


def _rank(field: str, evidence: dict[str, FieldEvidence]) -> int:
    """How well a top-level field is grounded: the worst of its leaves (-1: it has none); a leaf whose value
    disagrees with its quote counts as not found."""
    ranks = [
        0 if found.value_agrees is False else _RANK[found.grounding]
        for path, found in evidence.items()
        if _under(path, field)
    ]
    return min(ranks) if ranks else -1


def _under(path: str, prefix: str) -> bool:
    """Whether ``path`` is ``prefix`` or inside it (``line_items[0].amount`` is in ``line_items[0]``)."""
    return path == prefix or path.startswith((f"{prefix}.", f"{prefix}["))


def _drop(quotes: dict[str, Quote], prefix: str) -> None:
    for path in [path for path in quotes if _under(path, prefix)]:
        del quotes[path]


def _canonical(value: JsonValue) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def merge_windows(
    extractions: Sequence[tuple[PageWindow, dict[str, JsonValue]]],
    schema: dict[str, Any],
    pages: list[str] | None,
) -> dict[str, JsonValue]:
    """The windows' extractions (fields with their ``_evidence``, in page order) as one: each array the
    windows' arrays concatenated without duplicates (canonical JSON), each other value from the window whose
    quotes ground it best against the document's ``pages`` (the first on a tie); quotes shifted to the
    document's pages and re-indexed with their items."""
    merged: dict[str, JsonValue] = {}
    merged_quotes: dict[str, Quote] = {}
    chosen_rank: dict[str, int] = {}
    seen: dict[str, dict[str, tuple[int, int]]] = {}  # per array: item (canonical) -> (index, rank)
    for window, record in extractions:
        fields, quotes = split(record)
        quotes = _shifted(quotes, window)
        evidence = ground_fields(fields, quotes, pages, schema)
        for name, value in fields.items():
            if value is None:
                merged.setdefault(name, None)
                continue
            if isinstance(value, list):
                items = cast("list[JsonValue]", merged.setdefault(name, []) or [])
                merged[name] = items
                known = seen.setdefault(name, {})
                for index, item in enumerate(value):
                    key, prefix = _canonical(item), f"{name}[{index}]"
                    rank = _rank(prefix, evidence)
                    if key in known and rank <= known[key][1]:
                        continue  # a duplicate its first window grounds as well
                    if key not in known:
                        items.append(item)
                    at = known[key][0] if key in known else len(items) - 1
                    known[key] = (at, rank)
                    new = f"{name}[{at}]"
                    _drop(merged_quotes, new)
                    for path, quote in quotes.items():
                        if _under(path, prefix):
                            merged_quotes[new + path[len(prefix) :]] = quote
                continue
            rank = _rank(name, evidence)
            if merged.get(name) is not None and rank <= chosen_rank[name]:
                continue
            merged[name], chosen_rank[name] = value, rank
            _drop(merged_quotes, name)
            merged_quotes.update((path, quote) for path, quote in quotes.items() if _under(path, name))
    dumped = {
        path: cast("JsonValue", quote.model_dump(exclude_none=True)) for path, quote in merged_quotes.items()
    }
    return {**merged, EVIDENCE_KEY: cast("JsonValue", dumped)}


__all__ = [
    "DEFAULT_WINDOW_PAGES",
    "ImageSlicer",
    "PageWindow",
    "PdfSlicer",
    "Slicer",
    "WindowSource",
    "merge_windows",
    "plan_image_windows",
    "plan_windows",
    "window_document",
    "window_source",
    "window_step",
]
