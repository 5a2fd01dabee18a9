"""Images for the tests: photos, faxes and a header that claims more pixels than it holds."""

from __future__ import annotations

import io
import struct
import zlib
from typing import Any

from PIL import Image


def encoded(image: Image.Image, fmt: str, **options: Any) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, **options)
    return buffer.getvalue()


def photo(width: int, height: int, *, orientation: int | None = None) -> bytes:
    """A JPEG of a gradient (a photo's content), with an EXIF orientation when given."""
    image = Image.linear_gradient("L").resize((width, height)).convert("RGB")
    exif = Image.Exif()
    if orientation is not None:
        exif[0x0112] = orientation
    return encoded(image, "JPEG", exif=exif.tobytes())


def heic_photo(width: int, height: int, *, orientation: int | None = None) -> bytes:
    """A HEIC (an iPhone's photo) of a vertical gradient, dark at the top, written by pillow-heif, with an
    EXIF orientation when given."""
    from pillow_heif import register_heif_opener  # noqa: PLC0415 (the tests that write HEIC)

    register_heif_opener()
    image = Image.linear_gradient("L").resize((width, height)).convert("RGB")
    exif = Image.Exif()
    if orientation is not None:
        exif[0x0112] = orientation
    return encoded(image, "HEIF", exif=exif.tobytes(), quality=80)


def fax(pages: int, size: tuple[int, int] = (64, 80)) -> bytes:
    """A multi-page bilevel TIFF (a fax): page n has n black rows (all rows once n reaches the height), so
    each page up to the height differs. The rows are painted at once: pixel by pixel, the 500-page fax of
    test_images.py cost seconds at each import of the module."""
    images = []
    for page in range(pages):
        image = Image.new("1", size, 1)
        image.paste(0, (0, 0, size[0], min(page + 1, size[1])))
        images.append(image)
    return encoded(images[0], "TIFF", save_all=True, append_images=images[1:], compression="group4")


def png_header_claiming(width: int, height: int) -> bytes:
    """A PNG whose header says ``width`` x ``height`` (its pixels are never there): refused unread."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00"))
        + chunk(b"IEND", b"")
    )
