"""A local folder as ``docagent start --from-dir`` reads it (docagent/operations/sources.py): its regular
files (symbolic links followed only inside it, each entry not uploaded skipped with the reason), the S3 key
each would get and why one cannot, and why a file is no document the model reads."""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from functions.errors import DocumentFormatUnsupported, DocumentNotUtf8, DocumentRejected
from functions.reading.documents import detect_format


@dataclass(frozen=True)
class Skipped:
    """A --from-dir entry that is not uploaded: a link out of the folder, a link loop, a broken link, or no
    regular file (a FIFO, a device)."""

    path: str  # relative to --from-dir
    reason: str

    def as_json(self) -> dict[str, str]:
        return {"path": self.path, "reason": self.reason}


def unsupported_format(data: bytes) -> str | None:
    """Why a file is no document the model reads (an image, an archive, binary, text that is not UTF-8), or
    None. A file in a supported format that is broken (corrupt, encrypted, empty) is uploaded: the job rejects
    it per document, with the reason, as it would any such object under a prefix."""
    try:
        detect_format(data)
    except (DocumentFormatUnsupported, DocumentNotUtf8) as problem:
        return problem.reason
    except DocumentRejected:
        return None
    return None


# S3 takes any UTF-8 key of up to 1,024 bytes, but names ASCII 00-1F and 7F among the characters that need
# special handling (XML 1.0 listings cannot carry them; looked up 2026-12-04, Amazon S3 User Guide, "Naming
# Amazon S3 objects", Object key naming guidelines). A file named so is refused before anything is uploaded.
# A name is shown to the operator (the console, reports): C1 controls (80-9F) and the characters that reorder
# the text shown around them (Unicode's bidirectional formatting characters, UAX #9 "Explicit Directional
# Embeddings/Overrides/Isolates" and the implicit marks; U+2028/2029 end a line) are refused too: a name
# holding U+202E shows "...txt.exe" as "...exe.txt" (issue #49).
MAX_KEY_BYTES = 1024
BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u2028\u2029"
)


# C0, DEL and C1: one search in C (``docagent start`` checks each key of a prefix of up to a million).
CONTROL_CHARACTER = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def key_name_problem(prefix: str, name: str) -> str | None:
    """Why ``name`` (relative to --from-dir) cannot be an S3 key under ``prefix``, or None."""
    if CONTROL_CHARACTER.search(name):
        return "a control character (a newline, a tab, ...) in its name"
    if not BIDI_CONTROLS.isdisjoint(name):
        return "a bidirectional control character (U+202E, ...) that reorders the name as shown"
    try:
        size = len((prefix + name).encode("utf-8"))
    except UnicodeEncodeError:
        return "a name that is not UTF-8"
    if size > MAX_KEY_BYTES:
        return f"a key of {size:,} bytes; S3 keys are at most {MAX_KEY_BYTES:,}"
    return None


def streamed_md5(path: Path) -> str:
    with path.open("rb") as file:
        return hashlib.file_digest(file, lambda: hashlib.md5(usedforsecurity=False)).hexdigest()


def _resolved_link(entry: os.DirEntry[str]) -> Path | str:
    """Where a symbolic link leads (the real path), or why it leads nowhere."""
    try:
        return Path(entry.path).resolve(strict=True)
    except RuntimeError:  # Python 3.11 and 3.12 report a loop of links so
        return "a loop of symbolic links"
    except OSError as error:  # 3.13: ELOOP; a missing target: FileNotFoundError
        if error.errno == errno.ELOOP:
            return "a loop of symbolic links"
        return f"a broken symbolic link (to {os.readlink(entry.path)})"


def folder_files(root: Path) -> tuple[list[tuple[str, Path]], list[Skipped]]:
    """The regular files under ``root`` as (name relative to root, real path), dot names left out, and what
    was skipped. A symbolic link is followed only when it leads inside ``root`` (each link once, where it is);
    a link out of the folder, a broken link, a link back into a folder it is in (a loop) and anything that is
    no regular file (a FIFO, a device) are skipped with the reason, never read."""
    real_root = root.resolve()
    files: list[tuple[str, Path]] = []
    skipped: list[Skipped] = []

    def walk(directory: Path, relative: PurePosixPath, walking: frozenset[Path]) -> None:
        try:
            entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
        except OSError as error:
            skipped.append(Skipped(relative.as_posix(), f"cannot be listed ({error.strerror or error})"))
            return
        for entry in entries:
            if entry.name.startswith("."):
                continue
            name = relative / entry.name
            target: Path | str = Path(entry.path)
            if entry.is_symlink():
                target = _resolved_link(entry)
                if isinstance(target, Path) and not target.is_relative_to(real_root):
                    target = f"a symbolic link out of the folder (to {target})"
            if isinstance(target, str):
                skipped.append(Skipped(name.as_posix(), target))
                continue
            try:
                mode = target.stat().st_mode
            except OSError as error:
                skipped.append(Skipped(name.as_posix(), f"cannot be read ({error.strerror or error})"))
                continue
            if stat.S_ISDIR(mode) and target in walking:
                skipped.append(Skipped(name.as_posix(), "a loop: a symbolic link to a folder it is in"))
            elif stat.S_ISDIR(mode):
                walk(target, name, walking | {target})
            elif stat.S_ISREG(mode):
                files.append((name.as_posix(), target))
            else:
                skipped.append(Skipped(name.as_posix(), "not a regular file"))

    walk(real_root, PurePosixPath(), frozenset({real_root}))
    return files, skipped
