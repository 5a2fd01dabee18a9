"""Images as the model reads them: a scan, a phone photo or a fax becomes Converse ``image`` blocks, each
checked against Converse's limits before any call, so a document that breaks one fails with its reason.

Converse rules (looked up 2026-12-04; AWS docs, Bedrock API Reference "Message", https://docs.aws.amazon.com/
bedrock/latest/APIReference/API_runtime_Message.html: "You can include up to 20 images. Each image's size,
height, and width must be no more than 3.75 MB, 8000 px, and 8000 px, respectively"; "ImageBlock": format
png | jpeg | gif | webp):
- an image block's format is png, jpeg, gif or webp; at most 20 of them a request;
- each is at most 3.75 MB and 8000 x 8000 px.

The size the model reads best (looked up 2026-12-04; Anthropic docs "Vision", https://docs.claude.com/en/docs/
vision, "Evaluate image size": an image whose long edge is over 1568 px or over ~1,600 tokens "will first be
scaled down ... without giving you any additional model performance"; "we recommend resizing images to no
more than 1.15 megapixels (and within 1568 pixels in both dimensions)"; tokens = width x height / 750): an
image over that is scaled down here, so what is billed is what the model reads.

What docagent sends: PNG, JPEG, GIF and WebP as they are when nothing needs changing; a TIFF (each page, a fax
has several), a BMP, a HEIC (when pillow-heif is installed), an image with an EXIF orientation or one over the
best size converted with Pillow (PNG for bilevel and grey pages, JPEG for photos). Pillow is imported when an
image is read (the local cloud has it; on Lambda the document layer: stacks/document_layer.py).
"""

from __future__ import annotations

import io
import math
import struct
import zlib
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from functions.errors import DocumentFormatUnsupported, DocumentTooLarge, DocumentUnreadable
from functions.payloads.common import ImageKind
from functions.reading.block_limits import check_page_ceiling

if TYPE_CHECKING:
    from mypy_boto3_bedrock_runtime.type_defs import ContentBlockTypeDef
    from PIL.Image import Image

# The Converse image formats (ImageKind, functions/payloads/common.py: those and the kinds converted).
ImageFormat = Literal["png", "jpeg", "gif", "webp"]
CONVERSE_IMAGE_FORMATS: tuple[ImageFormat, ...] = ("png", "jpeg", "gif", "webp")
MAX_IMAGE_BYTES = 3_750_000  # 3.75 MB ("Message", above)
MAX_IMAGE_EDGE = 8_000  # px ("Message", above)
MAX_IMAGES_PER_REQUEST = 20  # ("Message", above)
BEST_LONG_EDGE = 1_568  # px ("Vision", above)
BEST_PIXELS = 1_150_000  # 1.15 megapixels ("Vision", above)
PIXELS_PER_TOKEN = 750  # tokens = width x height / 750 ("Vision", above)
# A source image is decoded only up to this many pixels (a 200-megapixel phone photo is the largest camera
# sold in 2026; anything beyond is refused unread, as a decompression bomb would be).
MAX_SOURCE_PIXELS = 200_000_000
JPEG_QUALITY = 85

_SIGNATURES: tuple[tuple[bytes, int, ImageKind], ...] = (
    (b"\x89PNG\r\n\x1a\n", 0, "png"),
    (b"\xff\xd8\xff", 0, "jpeg"),
    (b"GIF87a", 0, "gif"),
    (b"GIF89a", 0, "gif"),
    (b"II*\x00", 0, "tiff"),
    (b"MM\x00*", 0, "tiff"),
    (b"BM", 0, "bmp"),
)
_HEIC_BRANDS = (b"heic", b"heix", b"heim", b"heis", b"mif1", b"msf1", b"hevc", b"hevx")
_NAMES: dict[ImageKind, str] = {
    "png": "PNG",
    "jpeg": "JPEG",
    "gif": "GIF",
    "webp": "WebP",
    "tiff": "TIFF",
    "bmp": "BMP",
    "heic": "HEIC",
}


def image_kind(data: bytes) -> ImageKind | None:
    """The image kind of ``data`` from its magic bytes, or None when it is no image docagent reads."""
    for magic, offset, kind in _SIGNATURES:
        if data[offset : offset + len(magic)] == magic:
            return kind
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    if data[4:8] == b"ftyp" and data[8:12] in _HEIC_BRANDS:
        return "heic"
    return None


@dataclass(frozen=True)
class PageImage:
    """One image block: its Converse format, its bytes and its size in pixels."""

    format: ImageFormat
    data: bytes
    width: int
    height: int

    def converse_block(self) -> ContentBlockTypeDef:
        return {"image": {"format": self.format, "source": {"bytes": self.data}}}

    @property
    def tokens(self) -> int:
        """What the model bills for it ("Vision": width x height / 750)."""
        return math.ceil(self.width * self.height / PIXELS_PER_TOKEN)


def best_size(width: int, height: int) -> tuple[int, int]:
    """The size the model reads best: within BEST_LONG_EDGE on both edges and BEST_PIXELS, aspect kept."""
    scale = min(1.0, BEST_LONG_EDGE / max(width, height), math.sqrt(BEST_PIXELS / (width * height)))
    return max(1, math.floor(width * scale)), max(1, math.floor(height * scale))


def open_image(data: bytes) -> tuple[Image, ImageKind]:
    """An image document opened by Pillow (its header read, no pixel decoded) and its kind, or
    DocumentRejected: no image docagent reads, no Pillow, corrupt, or more than MAX_SOURCE_PIXELS (Pillow's
    own decompression bomb guard refuses twice its MAX_IMAGE_PIXELS before that)."""
    kind = image_kind(data)
    if kind is None:
        raise DocumentFormatUnsupported("the content is no image format docagent reads")
    name = _NAMES[kind]
    try:
        from PIL import Image, UnidentifiedImageError  # noqa: PLC0415 (when an image is read)
    except ImportError:  # pragma: no cover - the local cloud and tests have Pillow
        raise DocumentFormatUnsupported(
            f"the content is a {name} image and this deployment has no image library (Pillow)"
        ) from None
    if kind == "heic":
        _register_heif(name)
    try:
        image = Image.open(io.BytesIO(data))
    except Image.DecompressionBombError as error:
        raise DocumentTooLarge(f"the {name} image is too large to decode ({error})") from None
    except (UnidentifiedImageError, OSError, ValueError) as error:
        raise DocumentUnreadable(f"the {name} image is corrupt or truncated ({error})") from None
    width, height = image.size
    if width * height > MAX_SOURCE_PIXELS:
        raise DocumentTooLarge(
            f"the {name} image is {width} x {height} px ({width * height:,} pixels), over the limit of "
            f"{MAX_SOURCE_PIXELS:,} pixels docagent decodes"
        )
    return image, kind


def page_images(data: bytes, max_pages: int | None = None) -> tuple[PageImage, ...]:
    """The image blocks of an image document (one a page), or DocumentRejected naming what breaks a limit; a
    TIFF of more pages than ``max_pages`` (job.json) is DocumentTooLarge with the figure, before any page is
    decoded. A TIFF of more pages than one request takes (MAX_IMAGES_PER_REQUEST) is read in page windows
    (functions/reading/page_windows.py)."""
    image, kind = open_image(data)
    name = _NAMES[kind]
    frames = getattr(image, "n_frames", 1) if kind == "tiff" else 1  # read from each page's header
    check_page_ceiling(f"{name} image", frames, max_pages)
    pages = []
    for frame in range(frames):
        try:
            image.seek(frame)
            pages.append(_page(image, data if frames == 1 else None, kind))
        except (OSError, ValueError, SyntaxError, EOFError) as error:
            where = f"page {frame + 1} of the {name} image" if frames > 1 else f"the {name} image"
            raise DocumentUnreadable(f"{where} is corrupt or truncated ({error})") from None
    return tuple(pages)


def _register_heif(name: str) -> None:
    try:
        from pillow_heif import register_heif_opener  # type: ignore[import-not-found,unused-ignore]  # noqa: PLC0415
    except ImportError:
        raise DocumentFormatUnsupported(
            f"the content is a {name} image and pillow-heif, which reads it, is not installed"
        ) from None
    register_heif_opener()


def _page(image: Image, original: bytes | None, kind: ImageKind) -> PageImage:
    """One page as an image block: the original bytes when nothing needs changing, else converted."""
    from PIL import ImageOps  # noqa: PLC0415 (as above)

    oriented = image.getexif().get(0x0112, 1) not in (None, 1)
    target = best_size(*image.size)
    if kind == "jpeg" and target != image.size:
        image.draft("RGB", target)  # a reduced JPEG decode: a large photo is never decoded whole
    image.load()
    if (
        original is not None
        and kind in CONVERSE_IMAGE_FORMATS
        and not oriented
        and target == image.size
        and len(original) <= MAX_IMAGE_BYTES
    ):
        return PageImage(format=kind, data=original, width=image.size[0], height=image.size[1])
    converted = ImageOps.exif_transpose(image) if oriented else image.copy()
    size = best_size(*converted.size)
    if size != converted.size:
        converted = converted.resize(size)
    return _encoded(converted)


def _encoded(image: Image) -> PageImage:
    """PNG for bilevel, grey and palette pages (a fax, a scan of text); JPEG for a photo."""
    buffer = io.BytesIO()
    if image.mode in {"1", "L", "P", "LA", "PA", "RGBA"}:
        image.save(buffer, format="PNG", optimize=True)
        fmt: ImageFormat = "png"
    else:
        image.convert("RGB").save(buffer, format="JPEG", quality=JPEG_QUALITY)
        fmt = "jpeg"
    data = buffer.getvalue()
    if len(data) > MAX_IMAGE_BYTES:  # not reached at the best size (1.15 MP); kept as Converse's own limit
        raise DocumentTooLarge(f"a page encodes to {len(data)} bytes, over Converse's {MAX_IMAGE_BYTES}")
    return PageImage(format=fmt, data=data, width=image.size[0], height=image.size[1])


# ------------------------------------------------------------------------ a note the model does not read


def with_note(page: PageImage, note: str) -> PageImage:
    """``page`` with ``note`` (ASCII) written into its bytes as a comment, its pixels unchanged: a PNG
    ``tEXt`` chunk ``Comment`` after the header, a JPEG ``COM`` segment after its application segments. A
    model reads the pixels, not the comment; the local Bedrock reads it (a TIFF's page window names its
    source by it, as a PDF slice's document information does: functions/reading/page_windows.py).
    Deterministic: the same page and note give the same bytes."""
    text = note.encode("ascii")
    data = page.data
    if page.format == "png":
        header_end = 8 + 4 + 4 + 13 + 4  # the signature and the IHDR chunk (length, type, 13 bytes, CRC)
        body = b"tEXt" + b"Comment\x00" + text
        chunk = struct.pack(">I", len(body) - 4) + body + struct.pack(">I", zlib.crc32(body))
        return replace(page, data=data[:header_end] + chunk + data[header_end:])
    if page.format == "jpeg":
        at = 2  # after SOI, past the APPn segments (JFIF, EXIF) a decoder expects first
        while at + 4 <= len(data) and data[at] == 0xFF and 0xE0 <= data[at + 1] <= 0xEF:
            at += 2 + struct.unpack(">H", data[at + 2 : at + 4])[0]
        segment = b"\xff\xfe" + struct.pack(">H", len(text) + 2) + text
        return replace(page, data=data[:at] + segment + data[at:])
    raise ValueError(f"a note is written into a converted page (PNG or JPEG), not {page.format}")


def image_note(data: bytes) -> str | None:
    """The note ``with_note`` wrote into an image's bytes, None when it has none."""
    try:
        from PIL import Image  # noqa: PLC0415 (when an image is read)

        with Image.open(io.BytesIO(data)) as image:
            note = image.info.get("Comment", image.info.get("comment"))
    except (ImportError, OSError, ValueError, SyntaxError):
        return None
    if isinstance(note, bytes):
        note = note.decode("ascii", errors="replace")
    return note if isinstance(note, str) else None
