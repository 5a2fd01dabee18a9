"""An append-only write-ahead journal: one JSON record a line, each with its own checksum.

Why a journal and not snapshots: the local cloud's state changes a few thousand times a job, in small
pieces (one S3 object, one DynamoDB item, one history event). Appending the change is one short write;
a consistent snapshot would have to copy every bucket and table on every change, or stop the world to
take one.

Framing: a record is one line, ``<CRC-32 of the body, 8 hex digits> <JSON body>\n``. JSON never holds a
raw newline, so the newline is the record's length marker: a damaged record ends at the next newline and
the records after it are read as usual (a length field that is itself damaged would lose every record
after it). The checksum tells a whole record from a damaged one.

What can be on disk, and what opening the journal does with it (docs/local-cloud-persistence.md):
- a torn last record (bytes after the last newline: a ``kill -9`` or a failed write in the middle of an
  append): cut off before anything is appended, and reported (``dropped_bytes``, ``torn_tail_offset``);
- a damaged record with whole records after it (a failed checksum in the middle, e.g. a write torn by an
  older version that kept appending after it, or a damaged disk): ``JournalCorruptError`` names each one
  (its number, byte offset, length, how many whole records follow), and the cloud refuses to start
  rather than drop anything silently. ``repair=True`` (``docagent local up --skip-corrupt``) keeps every
  whole record, including one found inside the damaged line right after a torn write, and moves exactly
  the damaged bytes aside into ``<journal>.corrupt-<offset>`` files.

Writes: a record is written with ``os.write`` on an ``O_APPEND`` descriptor (no user-space buffer that
could hold half a record and write it later); a write that fails (``ENOSPC``, ``EIO``) is cut back to
the last whole record before the error is raised (``JournalWriteError``), so the file never holds a torn
record that is followed by others. ``retract`` takes back the last record when what it describes did
not happen.

Durability: ``append(..., durable=True)`` returns only once the record is on disk (``fdatasync``).
Concurrent writers share one sync (group commit), so ten workers storing results pay for about one
sync between them, not ten in a row.
"""

from __future__ import annotations

import base64
import contextlib
import datetime
import json
import os
import re
import threading
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
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


_WHOLE_RECORD_START = re.compile(rb"[0-9a-f]{8} \{")


class JournalWriteError(OSError):
    """The journal could not take a record (a full or failing disk): nothing of it is left in the file."""


@dataclass(frozen=True)
class DamagedRecord:
    """A record that fails its checksum and is followed by others (not a torn last record)."""

    number: int  # its position in the journal, counting every record from 1
    offset: int  # where it starts in the file
    length: int  # its bytes, newline included
    records_after: int  # whole records after it
    salvaged_offset: int | None  # a whole record inside its line (written right after a torn one)

    def describe(self) -> str:
        text = f"record {self.number} at byte {self.offset} ({self.length} bytes) fails its checksum"
        if self.salvaged_offset is not None:
            text += f"; a whole record follows inside it at byte {self.salvaged_offset}"
        return text + f"; {self.records_after} whole record(s) after it"


class JournalCorruptError(Exception):
    """The journal holds damaged records in its middle: starting would drop them, so it does not."""

    def __init__(self, path: Path, damaged: list[DamagedRecord]) -> None:
        self.path = path
        self.damaged = damaged
        listed = "; ".join(record.describe() for record in damaged[:5])
        more = f" (and {len(damaged) - 5} more)" if len(damaged) > 5 else ""
        super().__init__(
            f"the local cloud's journal {path} has {len(damaged)} damaged record(s) with whole records after "
            f"them: {listed}{more}. Start with `docagent local up --skip-corrupt` to keep every whole record "
            "and set exactly the damaged bytes aside (next to the journal, as journal.log.corrupt-<offset>), "
            "or with `--fresh` to start empty."
        )


@dataclass
class _Scan:
    end: int = 0  # the end of the last newline-terminated line: a torn last record starts here
    records: int = 0
    damaged: list[DamagedRecord] = field(default_factory=list)
    voided: set[int] = field(default_factory=set)


def _salvaged_offset(line: bytes) -> int | None:
    """Where a whole record starts inside a damaged line (a torn write, then a whole one), if anywhere."""
    for found in _WHOLE_RECORD_START.finditer(line, 1):
        if loads(line[found.start() :]) is not None:
            return found.start()
    return None


def _scan(path: Path) -> _Scan:
    scan = _Scan()
    if not path.exists():
        return scan
    damaged: list[tuple[int, int, int, int | None, int]] = []  # number, offset, length, salvaged, seen
    number = 0
    with path.open("rb") as file:
        for line in file:
            if not line.endswith(b"\n"):
                break  # a torn last record
            number += 1
            offset, scan.end = scan.end, scan.end + len(line)
            record = loads(line)
            if record is None:
                inner = _salvaged_offset(line)
                damaged.append(
                    (number, offset, len(line), None if inner is None else offset + inner, scan.records)
                )
                if inner is not None:
                    record = loads(line[inner:])
            if record is None:
                continue
            scan.records += 1
            if record.get("t") == "void":
                scan.voided.add(int(record["offset"]))
    scan.damaged = [
        DamagedRecord(number, offset, length, records_after=scan.records - seen, salvaged_offset=salvaged)
        for number, offset, length, salvaged, seen in damaged
    ]
    return scan


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class Journal:
    """Open with ``Journal(path)``; ``records()`` reads what survived, ``append()`` adds to it.

    Raises ``JournalCorruptError`` when damaged records sit in the middle, unless ``repair``.
    """

    def __init__(self, path: Path, *, repair: bool = False) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        scan = _scan(path)
        size = path.stat().st_size if path.exists() else 0
        self.dropped_bytes = size - scan.end  # a torn last record, cut off below (or by the repair)
        self.torn_tail_offset = scan.end if self.dropped_bytes else None
        self.set_aside: list[DamagedRecord] = []
        if scan.damaged:
            if not repair:
                raise JournalCorruptError(path, scan.damaged)
            self._repair(scan)
            self.set_aside = scan.damaged
            scan = _scan(path)
        self._valid_bytes = scan.end
        self._voided = scan.voided
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.ftruncate(self._fd, scan.end)  # cut a torn tail before anything is appended after it
        self._end = scan.end
        self._write_lock = threading.Lock()
        self._sync_lock = threading.Lock()
        self._failed: OSError | None = None  # a cut-back or a sync failed: the file's state is unknown
        self._last = (0, 0)  # (sequence, offset) of the last record written
        self._written = 0  # records written to the file (the OS has them: a kill -9 cannot lose them)
        self._synced = 0  # records known to be on disk
        self._synced_end = scan.end  # where they end
        self.appended = 0
        self.syncs = 0

    def _repair(self, scan: _Scan) -> None:
        """Rewrite the journal without its damaged bytes (kept aside, one file each), then rename it over.

        Records taken back (``void``) are left out with their void records: offsets change here."""
        damaged = {record.offset: record for record in scan.damaged}
        repaired = self.path.with_name(self.path.name + ".repairing")
        with self.path.open("rb") as source, repaired.open("wb") as target:
            offset = 0
            for line in source:
                start, offset = offset, offset + len(line)
                if not line.endswith(b"\n"):
                    break  # a torn last record: cut off as usual
                record = damaged.get(start)
                keep = line
                if record is not None:
                    cut = len(line) if record.salvaged_offset is None else record.salvaged_offset - start
                    self.path.with_name(f"{self.path.name}.corrupt-{start}").write_bytes(line[:cut])
                    keep, start = line[cut:], start + cut
                whole = loads(keep) if keep else None
                if whole is not None and start not in scan.voided and whole.get("t") != "void":
                    target.write(keep)
            target.flush()
            os.fsync(target.fileno())
        repaired.replace(self.path)
        _sync_folder(self.path.parent)

    def records(self) -> Iterator[dict[str, Any]]:
        """Every whole record, oldest first (read from disk, so call it before appending); records taken
        back with ``retract`` (a ``void`` record names them) are left out, as are the void records."""
        with self.path.open("rb") as file:
            offset = 0
            for line in file:
                start, offset = offset, offset + len(line)
                if offset > self._valid_bytes:
                    return
                record = loads(line)
                if record is None or start in self._voided or record.get("t") == "void":
                    continue
                yield record

    def write(self, record: dict[str, Any]) -> int:
        """Append without waiting for the disk; returns the record's sequence number for ``sync``.

        Raises ``JournalWriteError`` when the file cannot take it (the file is cut back to where it was)."""
        return self.write_at(record)[0]

    def write_at(self, record: dict[str, Any]) -> tuple[int, int]:
        """``write``, returning (sequence number, byte offset): what ``retract`` takes."""
        line = dumps(record)
        with self._write_lock:
            if self._fd < 0:  # the cloud stopped: threads still winding down record nothing
                return 0, 0
            if self._failed is not None:
                raise self._error(self._failed, "an earlier write or sync of it failed; restart the cloud")
            start = self._end
            try:
                _write_all(self._fd, line)
            except OSError as error:
                self._cut_back(start)
                raise self._error(error, "nothing of the record was kept") from error
            self._end = start + len(line)
            self._written += 1
            self.appended += 1
            self._last = (self._written, start)
            return self._written, start

    def _cut_back(self, offset: int) -> None:
        try:
            os.ftruncate(self._fd, offset)
        except OSError as error:  # the file may now end in half a record: append nothing after it
            self._failed = error
        else:
            self._end = offset
            self._synced_end = min(self._synced_end, offset)

    def _error(self, cause: OSError, what: str) -> JournalWriteError:
        reason = cause.strerror or str(cause)
        return JournalWriteError(cause.errno, f"cannot write the journal {self.path} ({reason}): {what}")

    def sync(self, sequence: int) -> None:
        """Return once record ``sequence`` (and every one before it) is on disk.

        A failed sync raises ``JournalWriteError`` for every record not yet on disk and fails the journal:
        the kernel may have dropped the pages it could not write (a later sync would not say so: the
        reasoning PostgreSQL adopted in 2018), so the file is cut back to the end of the last good sync (no
        record after it was confirmed to anyone) and every later write is refused until a restart."""
        if self._synced >= sequence:
            return
        with self._sync_lock:
            if self._synced >= sequence:  # another writer's sync covered it
                return
            if self._failed is not None:
                raise self._error(self._failed, "an earlier sync failed; restart the cloud")
            with self._write_lock:
                target, end = self._written, self._end
            if self._fd < 0:  # closed meanwhile: close() synced it
                return
            try:
                os.fdatasync(self._fd)
            except OSError as error:
                with self._write_lock:
                    self._cut_back(self._synced_end)
                    self._failed = error
                raise self._error(error, "its records since the last good sync were taken back") from error
            self.syncs += 1
            self._synced, self._synced_end = target, end

    def append(self, record: dict[str, Any], *, durable: bool = True) -> None:
        sequence = self.write(record)
        if durable:
            self.sync(sequence)

    def retract(self, sequence: int, offset: int) -> None:
        """Take back record ``sequence`` written at ``offset`` (what it describes did not happen): cut it off
        when it is still the last record, else append a ``void`` record naming it (``records()`` leaves
        both out). Best effort: on a failed journal the record stays, and the restart reports the failure."""
        with self._write_lock:
            if self._fd < 0 or sequence == 0:
                return
            if self._last == (sequence, offset) and self._failed is None:
                self._cut_back(offset)
                return
        with contextlib.suppress(JournalWriteError):
            self.write({"t": "void", "offset": offset})

    def size(self) -> int:
        return self.path.stat().st_size if self.path.exists() else 0

    def close(self) -> None:
        with self._write_lock, self._sync_lock:
            if self._fd >= 0:
                with contextlib.suppress(OSError):  # a failing disk: what could be kept was reported
                    os.fdatasync(self._fd)
                os.close(self._fd)
                self._fd = -1


def _sync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
