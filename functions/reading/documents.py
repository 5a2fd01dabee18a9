"""What a document is, from its content: the format (magic bytes and structure, never the file name), the
Converse ``document`` block's limits, and the neutral name the model sees. The format is told with the
standard library; images (Pillow) and PDFs' pages (pypdf) with the document layer's libraries
(stacks/document_layer.py). Bedrock reads the document; the local cloud extracts its text with
``docagent.localcloud.bedrock.document_text``.

Converse rules (as of 2026-11, AWS docs: Bedrock API Reference, "DocumentBlock" and "Message"; checked
again 2026-11-30 against the bedrock-runtime 2023-09-30 service model in botocore 1.44.8 and the SDK's
DocumentFormat enum: the same nine formats, "You can include up to five documents. Each document's size must
be no more than 4.5 MB", a name of 1 to 200 characters. That model also lets ``source`` be ``s3Location``,
``text`` or ``content`` and ``format`` be omitted; docagent always sends ``bytes`` with the detected format):
- ``format`` is one of pdf | csv | doc | docx | xls | xlsx | html | txt | md;
- each document is at most 4.5 MB (a PDF on Claude 4 and later excepted: functions/reading/block_limits.py),
  at most five documents per message, and a message with a document also
  needs a text block;
- ``name`` is 1 to 200 characters of letters and digits, single whitespace characters, hyphens, parentheses
  and square brackets. The model reads it ("vulnerable to prompt injections ... specify a neutral name"), so
  docagent never derives it from the object key: it is ``document-NNNNN`` from the manifest index.
"""

from __future__ import annotations

import io
import re
import zipfile
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from functions.errors import (
    DocumentEmpty,
    DocumentFormatUnsupported,
    DocumentNotUtf8,
    DocumentUnreadable,
)
from functions.payloads.common import DocumentFormat, SourceFormat
from functions.reading.block_limits import check_document_bytes, check_page_ceiling
from functions.reading.images import PageImage, image_kind, page_images
from functions.reading.pdf_layers import VISUAL_TOKENS_PER_PAGE, ReadMode, pdf_pages, text_layer

if TYPE_CHECKING:
    from mypy_boto3_bedrock_runtime.type_defs import ContentBlockTypeDef

CONVERSE_FORMATS = ("pdf", "csv", "doc", "docx", "xls", "xlsx", "html", "txt", "md")
TEXT_FORMATS = frozenset({"csv", "html", "txt", "md"})
MAX_CONVERSE_DOCUMENTS = 5
MAX_NAME_LENGTH = 200
NAME_PATTERN = re.compile(r"^(?:[A-Za-z0-9\-()\[\]]|\s(?!\s))+$")

# A zip container (DOCX, XLSX) is refused unread when its central directory promises more than this, or a
# member expands more than MAX_ZIP_RATIO times: a zip bomb. Real documents are far below both.
MAX_ZIP_UNCOMPRESSED_BYTES = 50_000_000
MAX_ZIP_RATIO = 200
MAX_ZIP_MEMBERS = 2_000

_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
# Formats Converse does not take, by magic bytes: (prefix, offset, name as the rejection reason says it).
_UNSUPPORTED_MAGIC: tuple[tuple[bytes, int, str], ...] = (
    (b"\x1f\x8b", 0, "a gzip archive"),
    (b"BZh", 0, "a bzip2 archive"),
    (b"\xfd7zXZ\x00", 0, "an xz archive"),
    (b"7z\xbc\xaf\x27\x1c", 0, "a 7-Zip archive"),
    (b"Rar!\x1a\x07", 0, "a RAR archive"),
    (b"ustar", 257, "a tar archive"),
    (b"\x7fELF", 0, "an ELF executable"),
    (b"MZ", 0, "a Windows executable"),
    (b"\xcf\xfa\xed\xfe", 0, "a Mach-O executable"),
    (b"\xfe\xed\xfa\xcf", 0, "a Mach-O executable"),
    (b"\xca\xfe\xba\xbe", 0, "a Java class or Mach-O executable"),
    (b"\x00asm", 0, "a WebAssembly module"),
    (b"ID3", 0, "an MP3 audio file"),
    (b"OggS", 0, "an Ogg media file"),
    (b"{\\rtf", 0, "an RTF document"),
    (b"SQLite format 3\x00", 0, "an SQLite database"),
)
_HTML_START = re.compile(
    rb"^\s*(?:<\?xml[^>]*>\s*)?(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body)\b", re.I | re.S
)
_HTML_ANYWHERE = re.compile(rb"<(?:html|body)\b[^>]*>", re.I)
_MARKDOWN = (
    re.compile(r"^#{1,6} \S", re.M),  # ATX heading
    re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)+\|?\s*$", re.M),  # table separator row
    re.compile(r"\*\*[^*\n]+\*\*"),  # strong emphasis
    re.compile(r"\[[^\]\n]+\]\([^)\s]+\)"),  # inline link
    re.compile(r"^```", re.M),  # fenced code
)


@dataclass(frozen=True)
class DocumentInput:
    """What the model receives: the bytes as stored, the detected format and the neutral name; an image
    document also its pages as image blocks (functions/reading/images.py)."""

    data: bytes
    format: SourceFormat
    name: str
    images: tuple[PageImage, ...] = ()
    # a PDF read visually (functions/reading/pdf_layers.py): citations enabled on its block
    visual: bool = False
    pages: int = 0  # a PDF's pages (functions/reading/pdf_layers.py), 0 for other formats

    def converse_blocks(self) -> list[ContentBlockTypeDef]:
        """The Converse content blocks of the document: its ``document`` block (the bytes as they are; boto3
        base64-encodes; citations enabled when it is read visually), or one ``image`` block a page."""
        if self.images:
            return [image.converse_block() for image in self.images]
        document_format = cast("DocumentFormat", self.format)  # an image has images
        if self.visual:
            return [
                {
                    "document": {
                        "format": document_format,
                        "name": self.name,
                        "source": {"bytes": self.data},
                        "citations": {"enabled": True},
                    }
                }
            ]
        return [{"document": {"format": document_format, "name": self.name, "source": {"bytes": self.data}}}]

    @property
    def read_mode(self) -> str:
        """How the model reads it: image, visual (a PDF with citations) or text."""
        return "image" if self.images else "visual" if self.visual else "text"

    @property
    def input_chars(self) -> int:
        """The document's size as the budget estimates it, in characters (functions/budget.py counts 4
        characters a token): its bytes; an image's billed tokens; a visual PDF's pages at the documented
        visual tokens a page (functions/reading/pdf_layers.py), or its bytes when that is more."""
        if self.images:
            return 4 * sum(image.tokens for image in self.images)
        if self.visual:
            return max(len(self.data), 4 * VISUAL_TOKENS_PER_PAGE * self.pages)
        return len(self.data)


def document_input(
    data: bytes, name: str, read: ReadMode = "auto", max_pages: int | None = None
) -> DocumentInput:
    """What the model receives of ``data``: its format from content, an image's pages checked against
    Converse's limits, another document against its 4.5 MB (functions/reading/block_limits.py; a PDF's bytes
    are checked per call: functions/reading/page_windows.py), a PDF read as text or visually (``read``,
    job.json); a PDF or an image of more pages than ``max_pages`` (job.json) is DocumentTooLarge with the
    figure; an encrypted PDF DocumentUnreadable; else a DocumentRejected naming what is wrong."""
    found = detect_format(data)
    if found == "pdf":
        layer = text_layer(data)
        pages = pdf_pages(data) or layer.pages  # pypdf's count where it reads the PDF (refused if encrypted)
        check_page_ceiling("PDF", pages, max_pages)
        visual = read == "visual" or (read == "auto" and not layer.every_page_has_text)
        return DocumentInput(data=data, format=found, name=name, visual=visual, pages=pages)
    if found in CONVERSE_FORMATS:
        check_document_bytes(found, len(data))
        return DocumentInput(data=data, format=found, name=name)
    images = page_images(data, max_pages)
    return DocumentInput(data=data, format=found, name=name, images=images)


# Bedrock refuses a document it cannot parse with a ValidationException whose message names the document
# block, e.g. "messages.0.content.0.source.bytes: The document source bytes could not be parsed as the
# specified format" or "The PDF specified was not valid" (messages seen in public bug reports, 2026).
_DOCUMENT_REFUSAL = re.compile(r"\bdocument\b|\bpdf\b|source\.bytes|\.document\b|\bpassword|\bencrypt", re.I)


# Bedrock refuses an input longer than the model's context window with a ValidationException (HTTP 400) about
# its length (looked up 2026-12-01 in public bug reports of Bedrock callers: Converse and InvokeModel answer
# "Input is too long for requested model.", also wrapped as "The model returned the following errors: Input is
# too long for requested model."; Anthropic's own wording, passed through for Claude, is "prompt is too long:
# N tokens > M maximum" or "input length and `max_tokens` exceed context limit: N + M > L"). The input is the
# prompt (fixed) and the one document: it is the document that is too long.
_TOO_LONG = re.compile(
    r"input is too long|prompt is too long|input length and .?max_tokens.? exceed|exceeds? (the )?context "
    r"(window|limit)|too many input tokens",
    re.I,
)


# How the local cloud's model starts its refusal of a document it has no label for (docs/local-cloud.md): the
# functions read it as DocumentNotLabelled, not as a broken document.
LOCAL_NO_LABEL = "the local model has no label for this document"
# How the local cloud's Bedrock starts its ModelErrorException for an OpenAI-compatible endpoint's answer that
# breaks the protocol (docagent/localcloud/bedrock/backends.py): the functions read it as ModelReplyInvalid,
# this document's failure, where a real Bedrock's ModelErrorException stays ModelUnavailable (retried).
LOCAL_BAD_REPLY = "the model's endpoint broke the chat-completions protocol"


def is_document_refusal(message: str) -> bool:
    """True when a ValidationException's message is about the document, not about the model or request."""
    return bool(_DOCUMENT_REFUSAL.search(message))


def is_too_long(message: str) -> bool:
    """True when a ValidationException's message says the input is longer than the model's context window."""
    return bool(_TOO_LONG.search(message))


def block_name(index: int) -> str:
    """The neutral name of a manifest entry's document block: never the key, which the model would read."""
    name = f"document-{index:05d}"
    assert NAME_PATTERN.match(name) and len(name) <= MAX_NAME_LENGTH
    return name


def name_problem(name: str) -> str | None:
    """Why Converse would refuse a block ``name`` (the local Bedrock Runtime checks it), or None."""
    if not 1 <= len(name) <= MAX_NAME_LENGTH:
        return f"length {len(name)} is outside 1 to {MAX_NAME_LENGTH}"
    if not NAME_PATTERN.match(name):
        return (
            "it may contain only letters, digits, single whitespace characters, hyphens, parentheses and "
            "square brackets"
        )
    return None


def _zip_format(data: bytes) -> DocumentFormat:
    """docx or xlsx for an Office Open XML package; a zip bomb or another zip is refused, naming why."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        members = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as error:
        raise DocumentUnreadable(f"the document starts as a zip container but is corrupt ({error})") from None
    names = {member.filename for member in members}
    if len(members) > MAX_ZIP_MEMBERS:
        raise DocumentUnreadable(f"zip bomb: {len(members)} members, over the limit of {MAX_ZIP_MEMBERS}")
    declared = sum(member.file_size for member in members)
    if declared > MAX_ZIP_UNCOMPRESSED_BYTES:
        raise DocumentUnreadable(
            f"zip bomb: the archive expands to {declared} bytes, "
            f"over the limit of {MAX_ZIP_UNCOMPRESSED_BYTES}"
        )
    for member in members:
        ratio = member.file_size // max(1, member.compress_size)
        if member.file_size > 1_000_000 and ratio > MAX_ZIP_RATIO:
            raise DocumentUnreadable(
                f"zip bomb: {member.filename} expands {ratio} times (over {MAX_ZIP_RATIO})"
            )
    if "[Content_Types].xml" in names and "word/document.xml" in names:
        return "docx"
    if "[Content_Types].xml" in names and "xl/workbook.xml" in names:
        return "xlsx"
    if "[Content_Types].xml" in names and "ppt/presentation.xml" in names:
        raise DocumentFormatUnsupported(
            "the content is a PowerPoint presentation (pptx), not a Converse format"
        )
    if "mimetype" in names and archive.read("mimetype").startswith(b"application/vnd.oasis.opendocument"):
        raise DocumentFormatUnsupported("the content is an OpenDocument file, not a Converse format")
    raise DocumentFormatUnsupported("the content is a zip archive, not a Converse format")


def _ole_format(data: bytes) -> DocumentFormat:
    """doc or xls for an OLE compound file, from the stream names in its directory (UTF-16 in the file).
    A password-protected DOCX or XLSX is an OLE file too (MS-OFFCRYPTO: EncryptionInfo and EncryptedPackage
    streams): nobody can read it without the password, so it is refused as unreadable."""
    if "EncryptedPackage".encode("utf-16-le") in data:
        raise DocumentUnreadable(
            "the document is an encrypted or password-protected Office file (DOCX or XLSX)"
        )
    if "WordDocument".encode("utf-16-le") in data:
        return "doc"
    if "Workbook".encode("utf-16-le") in data or "Book".encode("utf-16-le") in data:
        return "xls"
    raise DocumentFormatUnsupported(
        "the content is an OLE compound file that is neither a Word nor an Excel document"
    )


def _looks_binary(data: bytes) -> bool:
    sample = data[:8192]
    if b"\x00" in sample:
        return True
    controls = sum(byte < 32 and byte not in (9, 10, 12, 13) for byte in sample)
    return controls > len(sample) // 20


def _is_csv(text: str) -> bool:
    """At least two lines with the same number (>= 2) of comma-, semicolon- or tab-separated fields."""
    lines = [line for line in text.splitlines()[:50] if line.strip()]
    if len(lines) < 2:
        return False
    for separator in (",", ";", "\t"):
        counts = {line.count(separator) for line in lines}
        if len(counts) == 1 and counts.pop() >= 1:
            return True
    return False


def detect_format(data: bytes) -> SourceFormat:
    """The Converse format or image kind of ``data`` from its content; else a DocumentRejected naming what it
    is."""
    if not data.strip():
        raise DocumentEmpty(
            "the document has no content" if not data else "the document contains only whitespace"
        )
    head = data[:1024]
    if b"%PDF-" in head:
        return "pdf"
    if data.startswith(b"PK\x03\x04") or data.startswith(b"PK\x05\x06"):
        return _zip_format(data)
    if data.startswith(_OLE_MAGIC):
        return _ole_format(data)
    kind = image_kind(data)
    if kind is not None:
        return kind
    for magic, offset, described in _UNSUPPORTED_MAGIC:
        if data[offset : offset + len(magic)] == magic:
            raise DocumentFormatUnsupported(f"the content is {described}, not a Converse format")
    if head[:12].startswith(b"RIFF") and head[8:12] in (b"WAVE", b"AVI "):
        described = {b"WAVE": "a WAV audio file", b"AVI ": "an AVI video"}[head[8:12]]
        raise DocumentFormatUnsupported(f"the content is {described}, not a Converse format")
    if head[4:8] == b"ftyp":
        raise DocumentFormatUnsupported("the content is an ISO media file (MP4, MOV), not a Converse format")
    if _looks_binary(data):
        raise DocumentFormatUnsupported("the content is binary data of no known document format")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise DocumentNotUtf8(
            f"not valid UTF-8: byte 0x{data[error.start]:02x} at offset {error.start}"
        ) from None
    if _HTML_START.match(data) or _HTML_ANYWHERE.search(head):
        return "html"
    if _is_csv(text):
        return "csv"
    if sum(bool(pattern.search(text)) for pattern in _MARKDOWN) >= 1:
        return "md"
    return "txt"
