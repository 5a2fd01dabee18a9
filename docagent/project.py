"""Where the project and its local state live."""

from __future__ import annotations

import contextlib
import errno
import json
import os
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# DOCAGENT_STATE_DIR moves the local state (tests use it to keep out of a developer's running cloud).
STATE_DIR = Path(os.environ.get("DOCAGENT_STATE_DIR", ROOT / ".docagent"))
LOCAL_DIR = STATE_DIR / "local"
LOCAL_CLOUD_FILE = LOCAL_DIR / "cloud.json"
LOCAL_STACK_FILE = LOCAL_DIR / "stack.json"
# The local profile's synthesized assemblies by the hash of their inputs (docagent/localcloud/synth.py); not
# under STATE_DIR, so every state directory (each test session's, each drill's) shares one synthesis per
# change.
SYNTH_CACHE = Path(os.environ.get("DOCAGENT_SYNTH_CACHE", ROOT / ".docagent" / "synth-cache"))
# The local Lambda runtime's code packages by their hash, unpacked and compiled once for every local cloud
# (docagent/localcloud/lambdas/runtime.py: each cloud copies a package into its own state).
CODE_CACHE = Path(os.environ.get("DOCAGENT_CODE_CACHE", ROOT / ".docagent" / "code-cache"))
# Parse trees of large state machine definitions by the hash of their text and of moto's and ANTLR's
# versions, read by each process instead of parsing again (docagent/localcloud/stepfunctions/parse_cache.py).
PARSE_CACHE = Path(os.environ.get("DOCAGENT_PARSE_CACHE", ROOT / ".docagent" / "parse-cache"))
# The demo's rendered corpora by the hash of what makes them (docagent/drills/corpus_cache.py).
RENDER_CACHE = Path(os.environ.get("DOCAGENT_RENDER_CACHE", ROOT / ".docagent" / "render-cache"))
# The local cloud's journal (docagent/localcloud/state/persistence.py: STATE_FOLDER / JOURNAL_NAME).
LOCAL_JOURNAL = LOCAL_DIR / "cloud-state" / "journal.log"


def local_state_exists() -> bool:
    """Whether a local cloud has kept state here (a journal, or a deployment record)."""
    journal = LOCAL_JOURNAL.exists() and LOCAL_JOURNAL.stat().st_size > 0
    return journal or LOCAL_STACK_FILE.exists()


def cloud_down_message() -> str:
    return (
        f"the local cloud is down (its state is kept in {LOCAL_DIR}): start it with "
        "`docagent local up --detach` (it resumes what was running), or pass --aws to use AWS"
    )


def running_cloud() -> dict[str, Any] | None:
    """The running local cloud's record (pid, port, endpoint), or None (a stale record is removed). The cloud
    removes its record as it stops, so the file may vanish between any two looks at it (``local down`` looks
    until it has): gone is down, never an error."""
    try:
        record: dict[str, Any] = json.loads(LOCAL_CLOUD_FILE.read_text())
    except (FileNotFoundError, NotADirectoryError):  # no record (or its folder is a file: `local up` says so)
        return None
    except (ValueError, OSError):  # not a record (written whole: save_cloud_record), or unreadable
        _remove_stale_record()
        return None
    try:  # gone (ProcessLookupError), its pid another user's process now (PermissionError), or no pid
        os.kill(int(record["pid"]), 0)
    except (ProcessLookupError, PermissionError, KeyError, TypeError, ValueError):
        _remove_stale_record()
        return None
    return record


def _remove_stale_record() -> None:
    with contextlib.suppress(OSError):  # gone already, or not ours to remove: the next look says so again
        LOCAL_CLOUD_FILE.unlink(missing_ok=True)


def save_cloud_record(record: dict[str, Any]) -> None:
    """Write the running cloud's record whole (a temporary file renamed over it): a reader never sees half."""
    partial = LOCAL_CLOUD_FILE.with_name(f"{LOCAL_CLOUD_FILE.name}.{os.getpid()}.partial")
    partial.write_text(json.dumps(record))
    os.replace(partial, LOCAL_CLOUD_FILE)


def state_dir_problem(folder: Path) -> str | None:
    """Why the local cloud could not keep its state in ``folder`` (read-only, not ours, full), with the fix;
    None when a probe file can be written and synced there."""
    probe = folder / f".write-check-{os.getpid()}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with probe.open("wb") as file:
            file.write(bytes(64 * 1024))  # a journal record or two: a disk that cannot take this is full
            file.flush()
            os.fsync(file.fileno())
    except OSError as error:
        reason = {
            errno.EROFS: "is on a read-only file system",
            errno.EACCES: "cannot be written by this user",
            errno.EPERM: "cannot be written by this user",
            errno.ENOSPC: "is on a full disk",
            errno.EDQUOT: "is over its disk quota",
        }.get(error.errno or 0, f"cannot be written ({error.strerror or error})")
        return (
            f"the local cloud's state directory {folder} {reason}: make it writable or free space there, or "
            "keep the state elsewhere with DOCAGENT_STATE_DIR=/a/writable/folder (e.g. "
            "`DOCAGENT_STATE_DIR=/tmp/docagent docagent local up`)"
        )
    finally:
        with contextlib.suppress(OSError):
            probe.unlink(missing_ok=True)
    return None
