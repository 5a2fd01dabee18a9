"""Where the project and its local state live."""

from __future__ import annotations

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
# The local cloud's journal (docagent/localcloud/persistence.py: STATE_FOLDER / JOURNAL_NAME).
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
    """The running local cloud's record (pid, port, endpoint), or None (a stale record is removed)."""
    if not LOCAL_CLOUD_FILE.exists():
        return None
    record: dict[str, Any] = json.loads(LOCAL_CLOUD_FILE.read_text())
    try:
        os.kill(record["pid"], 0)
    except ProcessLookupError:
        LOCAL_CLOUD_FILE.unlink(missing_ok=True)
        return None
    return record
