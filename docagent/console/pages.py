"""Every page of a document as an image for the console: a PDF's pages rendered by PDFium (pypdfium2, a scan
without a text layer too), a TIFF's pages, a photo turned upright by its EXIF orientation, a PNG decoded and
encoded again, so what the console serves is an image whatever the stored bytes held.

Each page fits LONG_EDGE pixels on its long side (a page is never rendered larger, whatever size it claims),
is rendered once per console process (``PageCache``, bounded by bytes) and is served as PNG (a PDF page, a
fax, a scan of text) or JPEG (a photo). A field's evidence box (``FieldEvidence.box``, ratios of the page's
width and height, Textract's BoundingBox shape) is drawn over the page by the browser in CSS percentages
(static/pages.js): the page is never rendered again for it. The readers are the local extra's (Pillow,
pypdfium2); without them a document shows no page images (``page_sizes`` is empty).
"""

from __future__ import annotations

import io
import math
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from docagent.operations.context import EXIT_NOT_FOUND, OperatorContext, OperatorError
from docagent.operations.records import JobRecords, check_job_id
from functions.errors import DocumentRejected
from functions.payloads.common import MAX_SOURCE_DOCUMENT_BYTES
from functions.reading.images import image_kind, open_image

if TYPE_CHECKING:
    from PIL.Image import Image

LONG_EDGE = 1_600  # px: a page's long side as the console shows it (a page's width in the document view)
MAX_PDF_SCALE = 4.0  # a tiny PDF page (a label, 2 x 1 in) is enlarged at most 4x (288 dpi), never to 1,600 px
JPEG_QUALITY = 85
CACHE_BYTES = 64_000_000  # the rendered pages a console keeps (the least recently shown go first)
# The most of a document read to render its pages: the largest document a job reads.
MAX_DOCUMENT_BYTES = MAX_SOURCE_DOCUMENT_BYTES
MAX_PAGES_SHOWN = 999  # a page's number in its route has at most three digits (app.py)
ORIENTATION = 0x0112  # EXIF's orientation tag; 5 to 8 turn the picture a quarter
PDF_MAGIC = b"%PDF-"
PHOTO_FORMATS = {"JPEG", "HEIF", "WEBP"}  # Pillow's names of the formats a camera writes
# PDFium is not thread-safe, "not even with different documents": one call at a time in a process, by mutex
# (looked up 2026-12-07; pypdfium2 docs, "Python API", "Incompatibility with Threading",
# https://pypdfium2-team.github.io/pypdfium2/python_api.html). The console serves requests in threads.
PDFIUM = threading.Lock()


class PageRefusedError(Exception):
    """A page the console does not render (no such page, an unreadable or too large document), in words."""


@dataclass(frozen=True)
class RenderedPage:
    """One page as served: its bytes, their content type and its size in pixels."""

    data: bytes
    content_type: str
    width: int
    height: int


def fitted(width: float, height: float, limit: int = LONG_EDGE) -> tuple[int, int]:
    """``width`` x ``height`` scaled so the long side is ``limit`` at most (never enlarged), aspect kept."""
    scale = min(1.0, limit / max(width, height, 1))
    return max(1, math.floor(width * scale)), max(1, math.floor(height * scale))


def _pdf_scale(width_points: float, height_points: float) -> float:
    """The render scale of a PDF page: its long side at LONG_EDGE px, a tiny page at most MAX_PDF_SCALE."""
    return min(MAX_PDF_SCALE, LONG_EDGE / max(width_points, height_points, 1.0))


# ------------------------------------------------------------------------------------------- page sizes


def page_sizes(content: bytes | None) -> list[tuple[int, int]]:
    """Each page's size in pixels as the console shows it (the document view reserves each page's place
    before its image loads), the first MAX_PAGES_SHOWN; empty for a document that is no PDF or image, an
    unreadable one, or an install without the local extra's readers."""
    if content is None:
        return []
    try:
        if content.startswith(PDF_MAGIC):
            with PDFIUM, _pdf(content) as pdf:
                sizes = []
                for index in range(min(len(pdf), MAX_PAGES_SHOWN)):
                    width, height = pdf.get_page_size(index)  # points, the page's /Rotate applied
                    scale = _pdf_scale(width, height)
                    sizes.append((math.ceil(width * scale), math.ceil(height * scale)))  # as PDFium renders
                return sizes
        if image_kind(content) is not None:
            with _image(content) as image:
                frames = min(getattr(image, "n_frames", 1), MAX_PAGES_SHOWN)
                return [_upright_size(image, frame) for frame in range(frames)]
    except (PageRefusedError, ImportError):
        return []
    return []


def _upright_size(image: Image, frame: int) -> tuple[int, int]:
    image.seek(frame)
    width, height = image.size
    if image.getexif().get(ORIENTATION, 1) in {5, 6, 7, 8}:
        width, height = height, width
    return fitted(width, height)


# ------------------------------------------------------------------------------------------- rendering


def render_page(content: bytes, page: int) -> RenderedPage:
    """Page ``page`` (1-based) of a PDF or image document, fitted to LONG_EDGE; PageRefusedError says why not.
    PDFium runs under PDFIUM, each of its objects closed there (none left to a finaliser elsewhere)."""
    if content.startswith(PDF_MAGIC):
        with PDFIUM, _pdf(content) as pdf:
            if not 1 <= page <= len(pdf):
                raise PageRefusedError(f"the PDF has {len(pdf)} page(s), no page {page}")
            pdf_page = pdf[page - 1]
            try:
                bitmap = pdf_page.render(scale=_pdf_scale(*pdf_page.get_size()), may_draw_forms=True)
                image = bitmap.to_pil().copy()  # its own pixels: the bitmap's buffer is freed next
                bitmap.close()
            finally:
                pdf_page.close()
        return _encoded(image, photo=False)
    if image_kind(content) is None:
        raise PageRefusedError("the document is no PDF or image: it has no pages to show")
    with _image(content) as image:
        frames = getattr(image, "n_frames", 1)
        if not 1 <= page <= frames:
            raise PageRefusedError(f"the image has {frames} page(s), no page {page}")
        try:
            image.seek(page - 1)
            photo = image.format in PHOTO_FORMATS and image.mode in {"RGB", "CMYK", "YCbCr"}
            return _encoded(_upright(image), photo=photo)
        except (OSError, ValueError, SyntaxError, EOFError) as error:
            raise PageRefusedError(f"page {page} of the image is corrupt or truncated ({error})") from None


def _upright(image: Image) -> Image:
    """The page decoded at most at LONG_EDGE (a JPEG decoded reduced), turned upright by its EXIF."""
    from PIL import ImageOps  # noqa: PLC0415 (present: _image opened it)

    if image.format == "JPEG":
        image.draft("RGB", fitted(*image.size))  # a reduced decode: a large photo is never decoded whole
    image.load()
    upright = ImageOps.exif_transpose(image) if image.getexif().get(ORIENTATION, 1) != 1 else image.copy()
    size = fitted(*upright.size)
    if size == upright.size:
        return upright
    return (upright.convert("L") if upright.mode == "1" else upright).resize(size)  # a fax scaled in grey


def _encoded(image: Image, *, photo: bool) -> RenderedPage:
    """JPEG for a colour photo; PNG for a PDF page, a fax, a grey or palette scan (sharp text)."""
    buffer = io.BytesIO()
    if photo:
        image.convert("RGB").save(buffer, format="JPEG", quality=JPEG_QUALITY)
        content_type = "image/jpeg"
    else:
        image.save(buffer, format="PNG")
        content_type = "image/png"
    return RenderedPage(buffer.getvalue(), content_type, image.size[0], image.size[1])


@contextmanager
def _pdf(content: bytes) -> Iterator[Any]:  # a pypdfium2.PdfDocument (untyped)
    import pypdfium2  # noqa: PLC0415 (the local extra's, when a PDF's pages are shown)

    try:
        pdf = pypdfium2.PdfDocument(content)
    except pypdfium2.PdfiumError as error:
        raise PageRefusedError(f"the PDF cannot be read ({error})") from None
    try:
        yield pdf
    finally:
        pdf.close()


@contextmanager
def _image(content: bytes) -> Iterator[Image]:
    """The image opened as the pipeline opens it (functions/reading/images.py: its header read, a
    decompression bomb or an image over MAX_SOURCE_PIXELS refused unread)."""
    try:
        image, _ = open_image(content)
    except DocumentRejected as error:
        raise PageRefusedError(str(error)) from None
    with image:
        yield image


# ------------------------------------------------------------------------------------ the route's page


def page_image(
    ctx: OperatorContext, cache: PageCache, job_id: str, document_id: str, page: int
) -> RenderedPage:
    """Page ``page`` of a job's document, rendered once per console (``cache``); OperatorError (not found)
    naming why there is none: no such document, no such page, a document with no pages to show."""
    records = JobRecords(ctx, check_job_id(job_id))
    entry = next((item for item in records.entries() if item.document_id == document_id), None)
    if entry is None:
        raise OperatorError(f"job {job_id} has no document {document_id}", EXIT_NOT_FOUND)
    where = (records.job_id, document_id, entry.key, entry.version_id or "", str(page))
    cached = cache.get(where)
    if cached is not None:
        return cached
    content = records.document_bytes(entry, MAX_DOCUMENT_BYTES)
    if content is None:
        raise OperatorError(
            f"document {document_id} of job {job_id} is no longer in its bucket", EXIT_NOT_FOUND
        )
    try:
        rendered = render_page(content, page)
    except PageRefusedError as refused:
        raise OperatorError(f"document {document_id} of job {job_id}: {refused}", EXIT_NOT_FOUND) from None
    except ImportError:
        raise OperatorError(
            "install docagent[local] to show a document's pages (Pillow, pypdfium2)"
        ) from None
    cache.put(where, rendered)
    return rendered


# ---------------------------------------------------------------------------------------------- the cache


@dataclass
class PageCache:
    """The pages a console rendered, by job, document, its key and version, and page: each rendered once
    per process, the least recently shown dropped beyond ``limit`` bytes."""

    limit: int = CACHE_BYTES
    _pages: OrderedDict[tuple[str, ...], RenderedPage] = field(default_factory=OrderedDict)
    _guard: threading.Lock = field(default_factory=threading.Lock)
    _size: int = 0

    def get(self, where: tuple[str, ...]) -> RenderedPage | None:
        with self._guard:
            found = self._pages.get(where)
            if found is not None:
                self._pages.move_to_end(where)
            return found

    def put(self, where: tuple[str, ...], page: RenderedPage) -> None:
        with self._guard:
            if where in self._pages:
                return
            self._pages[where] = page
            self._size += len(page.data)
            while self._size > self.limit and len(self._pages) > 1:
                self._size -= len(self._pages.popitem(last=False)[1].data)
