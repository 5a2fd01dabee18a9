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
LOCAL_CDK_OUT = STATE_DIR / "cdk.out.local"


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
