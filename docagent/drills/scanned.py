"""Sample documents as they arrive at an intake desk: a scanned PDF (page images, no text layer), a phone
photo of a page (slightly rotated, uneven light) and a fax (a bilevel multi-page TIFF). Rendered with Pillow
from a page's text, byte-stable (fixed dates, no randomness), so a sample's label finds it by hash every time.
"""

from __future__ import annotations

import datetime as dt
import io
import time
from collections.abc import Sequence

from PIL import Image, ImageChops, ImageDraw, ImageFont

# A4 at 150 dpi: what an office scanner or fax writes for a page of text.
PAGE_SIZE = (1240, 1754)
MARGIN = 90
FONT_SIZE = 24
LINE_HEIGHT = 34
PHOTO_ROTATION_DEGREES = 2.5
PHOTO_QUALITY = 82
FIXED_DATE = time.gmtime(dt.datetime(2026, 1, 1, tzinfo=dt.UTC).timestamp())


def page_image(text: str) -> Image.Image:
    """A page of ``text`` as a grey image: black text on white, Pillow's built-in font."""
    page = Image.new("L", PAGE_SIZE, 255)
    draw = ImageDraw.Draw(page)
    font = ImageFont.load_default(FONT_SIZE)
    for number, line in enumerate(text.splitlines()):
        draw.text((MARGIN, MARGIN + number * LINE_HEIGHT), line, fill=0, font=font)
    return page


def scanned_pdf(pages: Sequence[str]) -> bytes:
    """A PDF of page images and no text layer, as a scanner without OCR writes it."""
    images = [page_image(text) for text in pages]
    buffer = io.BytesIO()
    images[0].save(
        buffer,
        format="PDF",
        save_all=True,
        append_images=images[1:],
        resolution=150.0,
        title="scan",
        producer="docagent sample",
        creationDate=FIXED_DATE,
        modDate=FIXED_DATE,
    )
    return buffer.getvalue()


def phone_photo(text: str) -> bytes:
    """A JPEG photo of the page: turned a little on a grey desk, lit unevenly (a lamp to the upper left)."""
    page = page_image(text).convert("RGB")
    turned = page.rotate(
        PHOTO_ROTATION_DEGREES, resample=Image.Resampling.BICUBIC, expand=True, fillcolor=(96, 96, 90)
    )
    width, height = turned.size
    distance = Image.radial_gradient("L").resize((2 * width, 2 * height))  # 0 at the lamp, 255 far off
    lamp = distance.crop((width // 3, height // 4, width // 3 + width, height // 4 + height))
    shade = Image.merge("RGB", [lamp.point(lambda value: 255 - value * 2 // 5)] * 3)
    photo = ImageChops.multiply(turned, shade)
    buffer = io.BytesIO()
    photo.save(buffer, format="JPEG", quality=PHOTO_QUALITY)
    return buffer.getvalue()


def fax_tiff(pages: Sequence[str]) -> bytes:
    """A bilevel multi-page TIFF (CCITT Group 4), one page per text, as a fax machine stores it."""
    images = [page_image(text).point(lambda value: 255 if value > 160 else 0).convert("1") for text in pages]
    buffer = io.BytesIO()
    images[0].save(buffer, format="TIFF", save_all=True, append_images=images[1:], compression="group4")
    return buffer.getvalue()
