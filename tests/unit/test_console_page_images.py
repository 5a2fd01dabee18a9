"""The console's page images (docagent/console/pages.py): every page of a PDF (a scan without a text layer
too), each page of a TIFF, a photo turned upright, served through the route as an image, rendered once per
console; a page that is not there, a document with no pages and a decompression bomb refused with a reason;
the document page shows the pages as images with each field's evidence box on its button."""

from __future__ import annotations

import io
from types import SimpleNamespace

import pytest
from PIL import Image

from docagent.console import pages, views
from docagent.console.app import Handler, ReviewConsole
from docagent.operations.context import OperatorContext, OperatorError
from docagent.operations.sessions import new_session
from functions.payloads.document import DocumentResult
from tests import documents as files
from tests.images import fax, photo, png_header_claiming
from tests.support import BUCKET, PREFIX, prepare, put_object, s3

JOB = "job-page-images"
STATE_MACHINE = "arn:aws:states:us-east-1:123456789012:stateMachine:DocAgent-DocumentReview"
A4 = (1132, 1600)  # 595.28 x 841.89 points fitted to 1,600 px on the long side (PDFium rounds up)


@pytest.fixture
def console(cloud) -> ReviewConsole:
    put_object(f"{PREFIX}scan.pdf", files.scanned_pdf())
    put_object(f"{PREFIX}fax.tif", fax(2, (640, 800)))
    put_object(f"{PREFIX}photo.jpg", photo(2400, 1800, orientation=6))  # taken sideways: upright 1800 x 2400
    put_object(f"{PREFIX}notes.txt", files.INVOICE)
    put_object(f"{PREFIX}bomb.png", png_header_claiming(20_000, 20_000))
    prepare(JOB)
    ctx = OperatorContext(
        endpoint=None,
        stack_name="DocAgent",
        outputs={"BucketName": BUCKET, "StateMachineArn": STATE_MACHINE},
        session=new_session(),
    )
    return ReviewConsole(ctx, "tester")


def get(console: ReviewConsole, path: str) -> tuple[int, dict[str, str], bytes]:
    """``GET path`` through the console's request handler (no socket: unit tests open none)."""
    handler = Handler.__new__(Handler)
    handler.server = SimpleNamespace(console=console, hosts={"127.0.0.1:8470"})
    handler.path, handler.command, handler.request_version = path, "GET", "HTTP/1.1"
    handler.requestline, handler.client_address = f"GET {path} HTTP/1.1", ("127.0.0.1", 1)
    handler.headers = {"Host": "127.0.0.1:8470"}
    handler.wfile = io.BytesIO()
    handler.do_GET()
    head, _, body = handler.wfile.getvalue().partition(b"\r\n\r\n")
    status_line, *lines = head.decode().split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines)
    return int(status_line.split()[1]), headers, body


def image(data: bytes) -> tuple[str | None, tuple[int, int]]:
    with Image.open(io.BytesIO(data)) as opened:
        return opened.format, opened.size


def test_a_scanned_pdfs_page_is_rendered_as_a_png_image_served_as_an_image_only(console):
    status, headers, body = get(console, f"/job/{JOB}/document/scan.pdf/page/1")
    assert status == 200 and headers["Content-Type"] == "image/png"
    assert (
        headers["Content-Security-Policy"] == "default-src 'none'"
        and headers["X-Content-Type-Options"] == "nosniff"
    )
    assert image(body) == ("PNG", A4)
    with Image.open(io.BytesIO(body)) as rendered:  # the scan's black bars are drawn, not a blank page
        assert rendered.convert("L").getextrema()[0] < 50
    assert pages.page_sizes(files.scanned_pdf()) == [A4]


def test_each_page_of_a_tiff_and_a_photo_turned_upright(console):
    first, second = (get(console, f"/job/{JOB}/document/fax.tif/page/{page}") for page in (1, 2))
    assert first[0] == second[0] == 200 and first[1]["Content-Type"] == "image/png"
    assert image(second[2]) == ("PNG", (640, 800)) and first[2] != second[2], "page 2 is its own page"
    status, headers, body = get(console, f"/job/{JOB}/document/photo.jpg/page/1")
    assert status == 200 and headers["Content-Type"] == "image/jpeg"
    assert image(body) == ("JPEG", (1200, 1600)), "upright (EXIF 6) and fitted to 1,600 px"
    assert pages.page_sizes(photo(2400, 1800, orientation=6)) == [(1200, 1600)]
    assert pages.page_sizes(fax(3, (640, 800))) == [(640, 800)] * 3


@pytest.mark.parametrize(
    ("path", "said"),
    [
        ("scan.pdf/page/2", "document scan.pdf of job job-page-images: the PDF has 1 page(s), no page 2"),
        ("fax.tif/page/3", "the image has 2 page(s), no page 3"),
        ("notes.txt/page/1", "the document is no PDF or image: it has no pages to show"),
        ("bomb.png/page/1", "the PNG image is too large to decode"),
        ("nothing.pdf/page/1", f"job {JOB} has no document nothing.pdf"),
    ],
)
def test_a_page_that_is_not_there_is_refused_with_its_reason(console, path, said):
    status, headers, body = get(console, f"/job/{JOB}/document/{path}")
    assert status == 404 and headers["Content-Type"].startswith("text/html")
    assert said in body.decode()


def test_a_page_is_rendered_once_per_console(console):
    served = pages.page_image(console.ctx, console.page_cache, JOB, "scan.pdf", 1)
    s3().delete_object(Bucket=BUCKET, Key=f"{PREFIX}scan.pdf")  # not read again
    assert pages.page_image(console.ctx, console.page_cache, JOB, "scan.pdf", 1) is served
    with pytest.raises(OperatorError, match="no longer in its bucket"):
        pages.page_image(console.ctx, ReviewConsole(console.ctx, "other").page_cache, JOB, "scan.pdf", 1)


def test_the_document_view_counts_the_pages_of_the_whole_document():
    """A document cut where the page stops showing it (DOCUMENT_BYTES_SHOWN) is read again for its pages."""

    class Records:
        def document_bytes(self, entry: object, limit: int) -> bytes:
            return b"whole, up to %d bytes" % limit

    cut = b"x" * views.DOCUMENT_BYTES_SHOWN
    assert views.whole_document(Records(), None, cut) == b"whole, up to %d bytes" % pages.MAX_DOCUMENT_BYTES
    assert views.whole_document(Records(), None, b"%PDF-short") == b"%PDF-short"
    assert views.whole_document(Records(), None, None) is None


def test_the_cache_drops_the_least_recently_shown_page_beyond_its_bytes():
    cache = pages.PageCache(limit=10)
    for name in ("a", "b", "c"):
        cache.put((name,), pages.RenderedPage(b"12345", "image/png", 1, 1))
    assert [cache.get((name,)) is not None for name in ("a", "b", "c")] == [False, True, True]


def evidence_result(box: dict[str, float] | None) -> DocumentResult:
    found = {"quote": "2026-03-14", "page": 1, "grounding": "unverified", "confidence": 0.6}
    return DocumentResult.model_validate(
        {
            "job_id": "j1", "document_id": "scan.pdf", "key": "k", "index": 0, "status": "extracted",
            "class_name": "claim-form",
            "fields": {"incident_date": "2026-03-14", "total": "785.00"}, "format": "pdf",
            "processed_at": "2026-12-07T00:00:00Z",
            "versions": {"model_id": "m", "prompt_version": "p", "prompt_sha256": "s", "code_version": "c",
                         "created_at": "2026-12-07T00:00:00Z"},
            "evidence": {"incident_date": {**found, **({"box": box} if box else {})},
                         "total": {**found, "quote": "785.00"}},
        }
    )  # fmt: skip


def test_the_document_page_shows_its_pages_as_images_and_a_fields_box_on_its_button():
    console = ReviewConsole(
        OperatorContext(endpoint=None, stack_name="DocAgent", outputs={}, session=new_session()), "tester"
    )
    box = {"left": 0.1, "top": 0.25, "width": 0.3, "height": 0.05}
    view = views.DocumentView(
        job_id="j1", document_id="scan.pdf", index=0, key="k", result=evidence_result(box), review=None,
        calls=[], text="", text_note=None, is_pdf=True, trace=None, job_status="SUCCEEDED",
        page_sizes=[A4, (1600, 1131)],
    )  # fmt: skip
    page = console.render("document.html", doc=view, reviewer="tester", field_text=str, said=None).decode()
    assert "<iframe" not in page, "the pages are images, not the browser's PDF viewer"
    assert page.count('loading="lazy"') == 2
    assert '<img src="/job/j1/document/scan.pdf/page/2" width="1600" height="1131" loading="lazy"' in page
    assert (
        'data-path="incident_date" data-page="1" data-box="0.1 0.25 0.3 0.05">incident_date</button>' in page
    )
    assert '<script src="/static/pages.js" defer></script>' in page
    assert '<th scope="row">total</th>' in page, "no box, no offsets: nothing to show on a page"

    stored = evidence_result(None)  # a result stored before evidence had boxes still renders
    assert stored.evidence["incident_date"].box is None
    view.result, view.page_sizes = stored, []  # an install without the page readers: the PDF's frame
    page = console.render("document.html", doc=view, reviewer="tester", field_text=str, said=None).decode()
    assert '<iframe src="/job/j1/document/scan.pdf/file"' in page and "data-box" not in page
