"""The local cloud's OCR engine: RapidOCR (``rapidocr-onnxruntime``, the ``local`` extra), whose detection,
direction and recognition models (PaddleOCR's PP-OCRv4, ONNX) ship inside its wheel: nothing is downloaded at
run time. It reads the actual page image and answers in Amazon Textract's shape (``Blocks`` of ``PAGE``,
``LINE`` and ``WORD``, each with ``Geometry.BoundingBox`` and ``Polygon`` as ratios of the page), so the
functions ground against what a reader really sees.

The engine is imported when the first page is read (never when the CLI or the local cloud starts) and loaded
once per process; a page already read (the same image bytes: the local Bedrock and the local Textract read the
same page images) is answered from memory. With ``DOCAGENT_OCR_CACHE=DIR`` (opt-in; the test suite sets it
once per run) the lines read are also kept on disk, shared by every process: a page read by one local cloud is
not read again by another (docagent/localcloud/textract/ocr_cache.py). The choice of engine and its figures:
docs/performance.md, "OCR".

PP-OCRv4's Chinese-English recognition model drops most spaces between Latin words ("3November2025"); the
engine puts one back where a letter meets a digit and after a colon (Textract answers words), and grounding
compares an OCR page's text with its whitespace taken out (functions/evidence/grounding.py).
"""

from __future__ import annotations

import functools
import hashlib
import io
import re
import threading
import uuid
from importlib import metadata
from typing import Any

from docagent.localcloud.textract import ocr_cache

ENGINE = "rapidocr-onnxruntime"
# What changes the lines the engine reads, beside its version (the threads change only its speed).
_SETTINGS: dict[str, Any] = {"use_cls": False}
# Where a space goes back: a letter next to a digit, either way, and after a colon or semicolon.
_SPACE_AT = re.compile(r"(?<=[A-Za-z])(?=\d)|(?<=\d)(?=[A-Za-z])|(?<=[:;])(?=\S)")
_LOCK = threading.Lock()  # one page at a time: the engine uses every core for one


class UnreadableImageError(ValueError):
    """The bytes are no image the engine reads (Textract: UnsupportedDocumentException)."""


@functools.cache
def _engine() -> Any:
    from rapidocr_onnxruntime import RapidOCR  # noqa: PLC0415 (loaded once, when the first page is read)

    # One thread: on a busy 2-core machine a page took 7.6 s on one thread against 15.1 s on all (measured
    # 2026-12-07, docs/performance.md "OCR"), and the local cloud's workers do not fight over the cores.
    # No direction classifier: a document page is upright, and a phone photo turned a few degrees reads as
    # is. (24 lines recognised a batch instead of 6 was slower: each batch is padded to its widest line.)
    return RapidOCR(intra_op_num_threads=1, inter_op_num_threads=1, **_SETTINGS)


def spaced(text: str) -> str:
    return _SPACE_AT.sub(" ", text).strip()


@functools.cache
def identity() -> dict[str, Any]:
    """The engine's name, version (its models ship in its wheel) and the settings that change what it reads:
    the disk cache's key beside the image's digest."""
    versions = {name: metadata.version(name) for name in (ENGINE, "onnxruntime")}
    return {"name": ENGINE, "versions": versions, "settings": _SETTINGS}


def _engine_lines(image: bytes) -> tuple[ocr_cache.Line, ...]:
    """Each line the engine reads on ``image`` as it reads it: (left, top, right, bottom) in pixels, text,
    confidence 0-1."""
    from PIL import Image, UnidentifiedImageError  # noqa: PLC0415 (the local cloud has Pillow)

    try:
        with Image.open(io.BytesIO(image)) as opened:
            picture = opened.convert("RGB")
    except (UnidentifiedImageError, OSError, ValueError) as error:
        raise UnreadableImageError(f"the image cannot be read ({error})") from None
    import numpy  # noqa: PLC0415 (installed with the engine)

    with _LOCK:
        found, _ = _engine()(numpy.asarray(picture)[:, :, ::-1])  # RapidOCR reads BGR, as OpenCV does
    lines = []
    for points, text, score in found or []:
        xs, ys = [float(point[0]) for point in points], [float(point[1]) for point in points]
        lines.append(((min(xs), min(ys), max(xs), max(ys)), str(text), float(score)))
    return tuple(lines)


@functools.lru_cache(maxsize=64)
def _read(digest: str, image: bytes) -> tuple[ocr_cache.Line, ...]:
    """Each line read on ``image`` (from memory, else the disk cache when it is on, else the engine), its
    spaces put back."""
    lines = ocr_cache.cached_lines(digest, identity, lambda: _engine_lines(image))
    return tuple((edges, spaced(text), score) for edges, text, score in lines)


def _geometry(edges: tuple[float, float, float, float], width: int, height: int) -> dict[str, Any]:
    left, top, right, bottom = edges
    box = {
        "Width": max(0.0, min(1.0, (right - left) / width)),
        "Height": max(0.0, min(1.0, (bottom - top) / height)),
        "Left": max(0.0, min(1.0, left / width)),
        "Top": max(0.0, min(1.0, top / height)),
    }
    corners = [(left, top), (right, top), (right, bottom), (left, bottom)]
    return {"BoundingBox": box, "Polygon": [{"X": x / width, "Y": y / height} for x, y in corners]}


def _words(text: str, left: float, right: float) -> list[tuple[str, float, float]]:
    """The line's words with their horizontal extent, shared out by their characters' share of the line."""
    total = max(1, len(text))
    words = []
    for match in re.finditer(r"\S+", text):
        share = (right - left) / total
        words.append((match.group(0), left + share * match.start(), left + share * match.end()))
    return words


def detect_document_text(image: bytes) -> dict[str, Any]:
    """DetectDocumentText's answer for one page image, in Textract's shape."""
    lines = _read(hashlib.sha256(image).hexdigest(), image)
    from PIL import Image  # noqa: PLC0415 (as above)

    with Image.open(io.BytesIO(image)) as opened:
        width, height = opened.size
    page_id = str(uuid.uuid4())
    blocks: list[dict[str, Any]] = []
    children: list[str] = []
    for (left, top, right, bottom), text, score in lines:
        if not text:
            continue
        line_id, word_ids = str(uuid.uuid4()), []
        word_blocks = []
        for word, start, end in _words(text, left, right):
            word_id = str(uuid.uuid4())
            word_ids.append(word_id)
            word_blocks.append(
                {
                    "BlockType": "WORD",
                    "Confidence": round(score * 100, 4),
                    "Text": word,
                    "TextType": "PRINTED",
                    "Geometry": _geometry((start, top, end, bottom), width, height),
                    "Id": word_id,
                    "Page": 1,
                }
            )
        children.append(line_id)
        blocks.append(
            {
                "BlockType": "LINE",
                "Confidence": round(score * 100, 4),
                "Text": text,
                "Geometry": _geometry((left, top, right, bottom), width, height),
                "Id": line_id,
                "Relationships": [{"Type": "CHILD", "Ids": word_ids}],
                "Page": 1,
            }
        )
        blocks.extend(word_blocks)
    page = {
        "BlockType": "PAGE",
        "Geometry": _geometry((0, 0, width, height), width, height),
        "Id": page_id,
        "Relationships": [{"Type": "CHILD", "Ids": children}],
        "Page": 1,
    }
    return {
        "DocumentMetadata": {"Pages": 1},
        "Blocks": [page, *blocks],
        "DetectDocumentTextModelVersion": f"local-{ENGINE}",
    }


def page_text(image: bytes) -> str:
    """The page's text as DetectDocumentText's lines read it (the local Bedrock's model reads it too)."""
    return "\n".join(text for _, text, _ in _read(hashlib.sha256(image).hexdigest(), image) if text)
