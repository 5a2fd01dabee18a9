"""docagent/localcloud/bedrock/openai_request.py (#41): a Converse request as an OpenAI-compatible
chat-completions request: image blocks as data-URL image parts in Converse's order, a visually read PDF's
pages rendered to PNG, a text PDF as text (one string, as before images were sent)."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from docagent.localcloud.bedrock import openai_request
from docagent.localcloud.bedrock.backends import OpenAIBackend
from docagent.localcloud.bedrock.document_text import extract_text
from docagent.localcloud.bedrock.openai_request import (
    LONG_EDGE,
    SHORT_EDGE,
    NotSendableError,
    chat_request,
    user_text,
)
from functions.reading.documents import document_input

SAMPLES = Path(__file__).resolve().parents[2] / "examples" / "claims" / "samples"
SCAN = SAMPLES / "claim-form" / "claim-0005.pdf"  # no text layer: read visually
PHOTO = SAMPLES / "claim-form" / "claim-0006.jpg"
FAX = SAMPLES / "repair-estimate" / "estimate-0004.tif"  # two pages
TEXT_PDF = SAMPLES / "repair-estimate" / "estimate-0001.pdf"  # two pages, each with text
MODEL = "eu.anthropic.claude-haiku-4-5-20251001-v1:0"


def _request(path: Path, text: str = "") -> dict[str, Any]:
    """The chat request of an extract call on the sample, its blocks as the pipeline builds them."""
    blocks: list[Any] = document_input(path.read_bytes(), "document-00001").converse_blocks()
    messages = [{"role": "user", "content": [*blocks, {"text": "Extract the fields."}]}]
    return chat_request("llava", [{"text": "You read documents."}], messages, 500, text)


def _image(part: dict[str, Any], image_format: str) -> Image.Image:
    prefix = f"data:image/{image_format};base64,"
    assert part["type"] == "image_url" and part["image_url"]["detail"] == "high"
    url = part["image_url"]["url"]
    assert url.startswith(prefix)
    return Image.open(io.BytesIO(base64.b64decode(url.removeprefix(prefix))))


def test_image_blocks_become_data_url_parts_in_converse_order() -> None:
    blocks: list[Any] = document_input(FAX.read_bytes(), "document-00001").converse_blocks()
    sent = [block["image"] for block in blocks]
    messages = [{"role": "user", "content": [{"text": "Two pages: "}, *blocks, {"text": "Extract."}]}]
    request = chat_request("llava", [{"text": "You read"}], messages, 100, "")
    system, user = request["messages"]
    assert system == {"role": "system", "content": "You read"}
    kinds = [part["type"] for part in user["content"]]
    assert kinds == ["text", "image_url", "image_url", "text"] and len(sent) == 2
    for part, image in zip(user["content"][1:3], sent, strict=True):  # the bytes as Bedrock gets them
        decoded = base64.b64decode(part["image_url"]["url"].split(",", 1)[1])
        assert decoded == image["source"]["bytes"] and _image(part, image["format"]).size[0] > 0
    assert user_text(user["content"]) == "Two pages: Extract."
    assert request["response_format"] == {"type": "json_object"} and request["max_tokens"] == 100


def test_a_photo_is_one_image_part_before_the_instruction() -> None:
    parts = _request(PHOTO)["messages"][1]["content"]
    assert [part["type"] for part in parts] == ["image_url", "text"]
    assert parts[1]["text"] == "Extract the fields."
    block = document_input(PHOTO.read_bytes(), "document-00001").images[0]
    assert _image(parts[0], block.format).size == (block.width, block.height)


def test_a_scanned_pdf_is_its_pages_rendered_to_fit_openais_high_detail_box() -> None:
    assert document_input(SCAN.read_bytes(), "document-00001").visual  # citations enabled on its block
    parts = _request(SCAN)["messages"][1]["content"]  # a scan has no text layer: no document text part
    assert [part["type"] for part in parts] == ["image_url", "text"]
    page = _image(parts[0], "png")
    assert min(page.size) == SHORT_EDGE and max(page.size) <= LONG_EDGE
    assert page.getextrema() != ((255, 255), (255, 255), (255, 255))  # the scan's pixels, not a blank page


def test_a_pdf_read_visually_sends_its_text_layer_and_each_page() -> None:
    data = TEXT_PDF.read_bytes()
    visual: list[Any] = document_input(data, "document-00001", read="visual").converse_blocks()
    text = extract_text(data, "pdf")
    messages = [{"role": "user", "content": [*visual, {"text": "Extract."}]}]
    parts = chat_request("m", [], messages, 100, text)["messages"][1]["content"]
    assert [part["type"] for part in parts] == ["text", "image_url", "image_url", "text"]
    assert parts[0]["text"] == f"<document>\n{text}\n</document>\n\n" and "REPAIR ESTIMATE" in text


def test_a_text_pdf_stays_one_string_of_text() -> None:
    text = extract_text(TEXT_PDF.read_bytes(), "pdf")
    user = _request(TEXT_PDF, text)["messages"][1]["content"]
    assert user == f"<document>\n{text}\n</document>\n\nExtract the fields."


def test_block_bytes_held_as_base64_are_decoded() -> None:
    png = document_input(FAX.read_bytes(), "document-00001").images[0]
    block = {"image": {"format": png.format, "source": {"bytes": base64.b64encode(png.data).decode()}}}
    parts = chat_request("m", [], [{"role": "user", "content": [block]}], 10, "")["messages"][1]["content"]
    assert base64.b64decode(parts[0]["image_url"]["url"].split(",", 1)[1]) == png.data


def test_a_visual_pdf_that_cannot_be_rendered_is_refused_before_any_call() -> None:
    document = {
        "format": "pdf",
        "name": "d",
        "source": {"bytes": b"%PDF-1.7 broken"},
        "citations": {"enabled": True},
    }
    backend = OpenAIBackend("http://127.0.0.1:9/v1")  # never reached: sockets are blocked here
    status, headers, body = backend.converse(
        MODEL, [], [{"role": "user", "content": [{"document": document}]}], 10, ""
    )
    assert (status, headers["x-amzn-ErrorType"]) == (400, "ValidationException")
    assert "could not be rendered" in json.loads(body)["message"]


def test_images_over_openais_limits_a_request_are_refused_before_the_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """OpenAI's 500 images and 50 MB of image bytes a request, lowered here to the fax's two pages."""
    blocks: list[Any] = document_input(FAX.read_bytes(), "document-00001").converse_blocks()
    messages = [{"role": "user", "content": blocks}]
    sizes = sum(len(block["image"]["source"]["bytes"]) for block in blocks)
    monkeypatch.setattr(openai_request, "MAX_REQUEST_IMAGES", 1)
    with pytest.raises(NotSendableError, match="2 images, over the limit of 1 a request"):
        chat_request("m", [], messages, 10, "")
    monkeypatch.setattr(openai_request, "MAX_REQUEST_IMAGES", 2)
    monkeypatch.setattr(openai_request, "MAX_REQUEST_IMAGE_BYTES", sizes - 1)
    with pytest.raises(NotSendableError, match=f"{sizes} bytes of images, over the limit of {sizes - 1}"):
        chat_request("m", [], messages, 10, "")
    monkeypatch.setattr(openai_request, "MAX_REQUEST_IMAGE_BYTES", sizes)
    assert len(chat_request("m", [], messages, 10, "")["messages"][1]["content"]) == 2
