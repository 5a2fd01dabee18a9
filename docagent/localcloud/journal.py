"""An append-only write-ahead journal: one JSON record a line, each with its own checksum.

Why a journal and not snapshots: the local cloud's state changes a few thousand times a job, in small
pieces (one S3 object, one DynamoDB item, one history event). Appending the change is one short write;
a consistent snapshot would have to copy every bucket and table on every change, or stop the world to
take one. A ``kill -9`` at any moment leaves a prefix of the journal: every record before the cut is
whole (its checksum matches), a record cut in half fails its checksum and is dropped at the next start
(with anything after it), and nothing later than an acknowledged change can be missing before it.

Durability: ``append(..., durable=True)`` returns only once the record is on disk (``fdatasync``).
Concurrent writers share one sync (group commit), so ten workers storing results pay for about one
sync between them, not ten in a row.
"""

from __future__ import annotations

import base64
import datetime
import json
import os
import threading
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

_DATETIME = "$dt"
_BYTES = "$b64"


def _encode(value: Any) -> Any:
    if isinstance(value, datetime.datetime):
        return {_DATETIME: value.isoformat()}
    if isinstance(value, bytes):
        return {_BYTES: base64.b64encode(value).decode()}
    if isinstance(value, tuple | set):
        return list(value)
    return str(value)  # e.g. a Decimal in a history event: kept as the text the API would print


def _decode(value: dict[str, Any]) -> Any:
    if len(value) == 1:
        if _DATETIME in value:
            return datetime.datetime.fromisoformat(value[_DATETIME])
        if _BYTES in value:
            return base64.b64decode(value[_BYTES])
    return value


def dumps(record: dict[str, Any]) -> bytes:
    body = json.dumps(record, default=_encode, separators=(",", ":")).encode()
    return b"%08x " % zlib.crc32(body) + body + b"\n"


def loads(line: bytes) -> dict[str, Any] | None:
    """The record in one journal line, or None when the line is torn or corrupt."""
    if len(line) < 10 or not line.endswith(b"\n") or line[8:9] != b" ":
        return None
    body = line[9:-1]
    try:
        if int(line[:8], 16) != zlib.crc32(body):
            return None
        record = json.loads(body, object_hook=_decode)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


class Journal:
    """Open with ``Journal(path)``; ``records()`` reads what survived, ``append()`` adds to it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._valid_bytes, self.dropped_bytes = self._scan()
        with path.open("ab") as file:  # cut a torn tail before anything is appended after it
            file.truncate(self._valid_bytes)
        self._file = path.open("ab")
        self._write_lock = threading.Lock()
        self._sync_lock = threading.Lock()
        self._written = 0  # records written to the file (the OS has them: a kill -9 cannot lose them)
        self._synced = 0  # records known to be on disk
        self.appended = 0
        self.syncs = 0

    def _scan(self) -> tuple[int, int]:
        if not self.path.exists():
            return 0, 0
        valid = 0
        size = self.path.stat().st_size
        with self.path.open("rb") as file:
            for line in file:
                if loads(line) is None:
                    break
                valid += len(line)
        return valid, size - valid

    def records(self) -> Iterator[dict[str, Any]]:
        """Every whole record, oldest first (read from disk, so call it before appending)."""
        with self.path.open("rb") as file:
            read = 0
            for line in file:
                read += len(line)
                if read > self._valid_bytes:
                    return
                record = loads(line)
                if record is None:
                    return
                yield record

    def write(self, record: dict[str, Any]) -> int:
        """Append without waiting for the disk; returns the record's sequence number for ``sync``."""
        line = dumps(record)
        with self._write_lock:
            if self._file.closed:  # the cloud stopped: threads still winding down record nothing
                return 0
            self._file.write(line)
            self._file.flush()
            self._written += 1
            self.appended += 1
            return self._written

    def sync(self, sequence: int) -> None:
        """Return once record ``sequence`` (and every one before it) is on disk."""
        if self._synced >= sequence:
            return
        with self._sync_lock:
            if self._synced >= sequence:  # another writer's sync covered it
                return
            target = self._written
            try:
                os.fdatasync(self._file.fileno())
            except ValueError:  # closed meanwhile: close() synced it
                return
            self.syncs += 1
            self._synced = target

    def append(self, record: dict[str, Any], *, durable: bool = True) -> None:
        sequence = self.write(record)
        if durable:
            self.sync(sequence)

    def size(self) -> int:
        return self.path.stat().st_size if self.path.exists() else 0

    def close(self) -> None:
        with self._write_lock:
            if not self._file.closed:
                self._file.flush()
                os.fdatasync(self._file.fileno())
                self._file.close()
