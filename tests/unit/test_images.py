"""Images: scans, photos and faxes become Converse image blocks checked against Converse's limits before the
call; the local Bedrock takes image blocks with the same limits and answers from labels; a document that
breaks a limit fails with its reason while the rest of the job finishes."""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Iterator
from typing import Any

import pytest
from PIL import Image

from docagent.kit.loader import read_bundle
from docagent.localcloud.bedrock.converse_api import LocalBedrock
from functions import s3_json
from functions.errors import DocumentTooLarge, DocumentUnreadable
from functions.reading.documents import detect_format, document_input
from functions.reading.images import (
    BEST_LONG_EDGE,
    BEST_PIXELS,
    MAX_IMAGES_PER_REQUEST,
    image_kind,
    page_images,
)
from functions.settings import get_settings
from tests import documents as files
from tests.images import encoded, fax, heic_photo, photo, png_header_claiming
from tests.local_model import LocalModel
from tests.support import EXAMPLES, PREFIX, prepare, process_all, put_object

FIELDS = {
    "customer_id": "CUST-00007", "invoice_date": "2026-03-14", "amount": "1234.56", "currency": "EUR",
    "category": "hardware", "summary": "ACME supplies.",
}  # fmt: skip


# ----------------------------------------------------------------------------------- what is sent


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (files.PNG, "png"),
        (photo(8, 8), "jpeg"),
        (encoded(Image.new("P", (4, 4)), "GIF"), "gif"),
        (encoded(Image.new("RGB", (4, 4)), "WEBP"), "webp"),
        (fax(2), "tiff"),
        (encoded(Image.new("RGB", (4, 4)), "BMP"), "bmp"),
    ],
    ids=["png", "jpeg", "gif", "webp", "tiff", "bmp"],
)
def test_an_image_is_detected_from_its_content(data, kind):
    assert image_kind(data) == kind == detect_format(data)


def test_a_small_image_in_a_converse_format_is_sent_as_it_is():
    data = encoded(Image.new("RGB", (40, 30), (200, 10, 10)), "PNG")
    document = document_input(data, "document-00001")
    assert [block["image"]["format"] for block in document.converse_blocks()] == ["png"]  # type: ignore[typeddict-item]
    assert document.images[0].data == data, "unchanged: the label's hash is the file's"
    assert document.images[0].tokens == -(-40 * 30 // 750)


def test_a_large_photo_is_scaled_to_the_best_size_and_its_exif_orientation_applied():
    [page] = page_images(photo(4000, 3000, orientation=6))  # 6: rotate 90 degrees clockwise to view
    assert page.format == "jpeg"
    assert page.height > page.width, "turned upright"
    assert max(page.width, page.height) <= BEST_LONG_EDGE and page.width * page.height <= BEST_PIXELS
    assert page.width * page.height > 0.95 * BEST_PIXELS, "as large as the model reads best"
    with Image.open(io.BytesIO(page.data)) as sent:
        assert sent.size == (page.width, page.height)


def test_a_heic_photo_becomes_an_upright_jpeg_block():
    data = heic_photo(400, 300, orientation=6)  # 6: rotate 90 degrees clockwise to view
    assert (image_kind(data), detect_format(data)) == ("heic", "heic")
    document = document_input(data, "document-00001")
    [page] = document.images
    assert (document.format, page.format, page.width, page.height) == ("heic", "jpeg", 300, 400), "upright"
    with Image.open(io.BytesIO(page.data)) as sent:
        assert sent.format == "JPEG" and sent.size == (300, 400)
        grey = sent.convert("L")
        left, right = grey.getpixel((5, 200)), grey.getpixel((294, 200))
    assert isinstance(left, int) and isinstance(right, int) and left > right + 100, (
        "the dark top is now right"
    )
    assert document.converse_blocks() == [{"image": {"format": "jpeg", "source": {"bytes": page.data}}}]
    assert page_images(data) == (page,), "converted the same way every time (labels find it by hash)"


def test_each_page_of_a_tiff_fax_is_its_own_png_block():
    pages = page_images(fax(2))
    assert [(page.format, page.width, page.height) for page in pages] == [("png", 64, 80), ("png", 64, 80)]
    assert pages[0].data != pages[1].data
    assert pages == page_images(fax(2)), "converted the same way every time (labels find it by hash)"


@pytest.mark.parametrize(
    ("data", "error", "reason"),
    [
        (files.TRUNCATED_PNG, DocumentUnreadable, "the PNG image is corrupt or truncated"),
        (png_header_claiming(20_000, 20_000), DocumentTooLarge, r"too large to decode.*400000000"),
        (fax(41, (8, 8)), DocumentTooLarge, "has 41 pages, over the job's ceiling of 40 \\(max_pages\\)"),
        (b"\xff\xd8\xff\xe0" + b"\x00" * 40, DocumentUnreadable, "the JPEG image is corrupt or truncated"),
    ],
    ids=["truncated-png", "20000px", "41-page-tiff", "broken-jpeg"],
)  # fmt: skip
def test_an_image_that_breaks_a_limit_is_refused_with_the_reason(data, error, reason):
    with pytest.raises(error, match=reason):
        page_images(data, max_pages=40)


# ------------------------------------------------------------------------------- the local Bedrock


def blocks(*images: tuple[str, bytes]) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = [
        {"image": {"format": fmt, "source": {"bytes": data}}} for fmt, data in images
    ]
    return [{"role": "user", "content": [*content, {"text": "Extract the fields."}]}]


def test_the_local_bedrock_checks_image_blocks_with_converse_limits():
    model = LocalBedrock()
    small = encoded(Image.new("RGB", (10, 10)), "PNG")
    too_many = blocks(*[("png", small)] * (MAX_IMAGES_PER_REQUEST + 1))
    wide = encoded(Image.new("1", (8_001, 4)), "PNG")
    cases = {
        "at most 20 images, got 21": too_many,
        "over the limit of 8000 x 8000": blocks(("png", wide)),
        "could not be parsed as jpeg": blocks(("jpeg", small)),
        "'tiff' is not one of png, jpeg, gif, webp": blocks(("tiff", fax(1))),
        "the image is empty": blocks(("png", b"")),
    }
    for reason, messages in cases.items():
        status, headers, answer = model.converse("m", [{"text": "s"}], messages, 100)
        assert (status, headers["x-amzn-ErrorType"]) == (400, "ValidationException"), reason
        assert reason in json.loads(answer)["message"]
    base64_blocks = blocks(("png", base64.b64encode(small).decode()))  # as a raw JSON body holds it
    status, _, answer = model.converse("m", [{"text": "s"}], base64_blocks, 100)
    assert status == 400 and "no label for this document" in json.loads(answer)["message"]


def test_the_local_bedrock_answers_an_image_from_its_label_and_bills_its_pixels():
    data = encoded(Image.new("RGB", (300, 200), (0, 90, 0)), "PNG")
    model = LocalModel({data: {**FIELDS, "invoice_number": "INV-2026-00001"}})
    document = document_input(data, "document-00001")
    reply = model.converse(document, "system", "Extract the fields.")
    assert json.loads(reply.text)["invoice_number"] == "INV-2026-00001"
    assert reply.input_tokens >= 300 * 200 // 750, "the image is billed by its pixels"


# ----------------------------------------------------------------------------------- through a job


@pytest.fixture
def images_allowed(cloud, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("MAX_DOCUMENT_BYTES", "4500000")
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def test_each_bad_image_fails_its_document_with_the_reason_and_the_job_finishes(images_allowed):
    scan = encoded(Image.new("L", (600, 800), 230), "PNG")
    phone = photo(2400, 1800, orientation=8)
    two_page_fax = fax(2)
    iphone = heic_photo(1200, 900, orientation=6)
    good = {"scan.png": scan, "phone.jpg": phone, "fax.tif": two_page_fax, "iphone.heic": iphone}
    labels = {data: {**FIELDS, "invoice_number": f"INV-2026-0000{i}"} for i, data in enumerate(good.values())}
    bad = {
        "truncated.png": files.TRUNCATED_PNG,
        "empty.jpg": b"",
        "huge.png": png_header_claiming(20_000, 20_000),
        "encrypted.pdf": files.encrypted_pdf(),
        "long-fax.tif": fax(41, (8, 8)),
    }
    for name, data in {**good, **bad}.items():
        put_object(f"{PREFIX}{name}", data)
    invoices = read_bundle(EXAMPLES / "invoices")  # the deployment's definition, with a page ceiling
    # one model: each image is asked once (the default's cheap-first cascade would ask again for review)
    definition = invoices.definition.model_copy(update={"max_pages": 40, "models": None})
    job = prepare("job-images", definition=invoices.model_copy(update={"definition": definition}))
    model = LocalModel(labels)

    outcomes = process_all(job, model)

    # the good images are blank: OCR reads no text on them, so the values the model gave are not in the
    # document and each goes to a person (never accepted unverified)
    assert {doc_id: (outcome.status, outcome.error) for doc_id, outcome in outcomes.items()} == {
        "scan.png": ("review", None),
        "phone.jpg": ("review", None),
        "fax.tif": ("review", None),
        "iphone.heic": ("review", None),
        "truncated.png": ("rejected", "DocumentUnreadable"),
        "empty.jpg": ("rejected", "DocumentEmpty"),
        "huge.png": ("rejected", "DocumentTooLarge"),
        "encrypted.pdf": ("rejected", "DocumentUnreadable"),
        "long-fax.tif": ("rejected", "DocumentTooLarge"),
    }
    results = {doc_id: s3_json.get_result(job.job_id, doc_id) for doc_id in outcomes}
    reasons = {doc_id: str(result.reason) for doc_id, result in results.items() if result is not None}
    assert all("is not grounded in the document" in reasons[doc_id] for doc_id in good), reasons
    assert "the PNG image is corrupt or truncated" in reasons["truncated.png"]
    assert "the document has no content" in reasons["empty.jpg"]
    assert "400000000 pixels" in reasons["huge.png"]
    assert "encrypted or password-protected" in reasons["encrypted.pdf"]
    assert "the TIFF image has 41 pages, over the job's ceiling of 40 (max_pages)" in reasons["long-fax.tif"]
    extracted = {doc_id: result.fields for doc_id, result in results.items() if result and result.fields}
    assert {doc_id: fields["invoice_number"] for doc_id, fields in extracted.items()} == {  # type: ignore[index]
        "scan.png": "INV-2026-00000", "phone.jpg": "INV-2026-00001", "fax.tif": "INV-2026-00002",
        "iphone.heic": "INV-2026-00003",
    }  # fmt: skip
    assert {doc_id: results[doc_id].format for doc_id in good} == {  # type: ignore[union-attr]
        "scan.png": "png", "phone.jpg": "jpeg", "fax.tif": "tiff", "iphone.heic": "heic",
    }  # fmt: skip
    assert model.calls == 4, "one call each for the four images; none for the rest (an encrypted PDF: pypdf)"
