"""The local OCR engine's disk cache, opt-in: with ``DOCAGENT_OCR_CACHE=DIR`` the lines the engine read on a
page image are kept in DIR, one JSON file a page, named by the SHA-256 of the image bytes, the engine's name,
its version and the settings that change what it reads. Every process that reads pages (the endpoint of each
local cloud, a `docagent demo`, `eval` or `chaos` subprocess) then reads a page already read by another from
the file, without loading the engine. Unset (the default), nothing is written: the engine reads every page
once per process (its memory cache, docagent/localcloud/textract/engine.py).

Several processes share the folder: a page is read under an exclusive lock on its own lock file (a second
reader of the same page waits and then finds the entry, so a page is read once), and an entry is written to a
temporary file and renamed into place (``os.replace``), so no reader sees half of one. An entry that cannot be
read, or that names another engine, version, settings or image, is ignored and read again. The test suite sets
the variable once per run to a fresh folder (tests/conftest.py); there is no default folder, so a machine
without it (CI) always runs the engine.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

VARIABLE = "DOCAGENT_OCR_CACHE"

Edges = tuple[float, float, float, float]
Line = tuple[Edges, str, float]  # (left, top, right, bottom) in pixels, the text as read, confidence 0-1


def folder() -> Path | None:
    """The cache's folder, when ``DOCAGENT_OCR_CACHE`` names one (created if missing)."""
    named = os.environ.get(VARIABLE, "").strip()
    if not named:
        return None
    path = Path(named)
    path.mkdir(parents=True, exist_ok=True)
    return path


def _identity(image_sha256: str, engine: dict[str, Any]) -> dict[str, Any]:
    return {"image_sha256": image_sha256, "engine": engine}


def entry_name(image_sha256: str, engine: dict[str, Any]) -> str:
    """The entry's file name: the SHA-256 of the image's digest and the engine's name, version, settings."""
    text = json.dumps(_identity(image_sha256, engine), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest() + ".json"


def _lines(raw: Any) -> tuple[Line, ...]:
    """The entry's lines, checked: a ValueError/TypeError/KeyError for anything not lines."""
    found = []
    for edges, text, score in raw:
        left, top, right, bottom = (float(value) for value in edges)
        if not isinstance(text, str):
            raise TypeError("a line's text is not a string")
        found.append(((left, top, right, bottom), text, float(score)))
    return tuple(found)


def load(path: Path, identity: dict[str, Any]) -> tuple[Line, ...] | None:
    """The entry's lines, or None when it is missing, unreadable or not this image's and engine's."""
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
        if entry["identity"] != identity:
            return None
        return _lines(entry["lines"])
    except (OSError, ValueError, TypeError, KeyError):
        return None


def store(path: Path, identity: dict[str, Any], lines: tuple[Line, ...]) -> None:
    """Write the entry atomically: a temporary file in the same folder, then renamed over ``path``."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem[:16]}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump({"identity": identity, "lines": [[list(e), t, s] for e, t, s in lines]}, out)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path.with_suffix(".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed, or when the process dies
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def cached_lines(
    image_sha256: str, engine: Callable[[], dict[str, Any]], read: Callable[[], tuple[Line, ...]]
) -> tuple[Line, ...]:
    """The lines ``read()`` gives, from the cache's folder when it holds them (``engine()``: the engine's
    name, version and settings); without ``DOCAGENT_OCR_CACHE``, ``read()`` itself."""
    where = folder()
    if where is None:
        return read()
    identity = _identity(image_sha256, engine())
    path = where / entry_name(image_sha256, identity["engine"])
    found = load(path, identity)
    if found is not None:
        return found
    with _locked(path):
        found = load(path, identity)  # another process may have read it while this one waited
        if found is None:
            found = read()
            store(path, identity, found)
    return found
