"""Where the project and its local state live."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# DOCAGENT_STATE_DIR moves the local state (tests use it to keep out of a developer's running cloud).
STATE_DIR = Path(os.environ.get("DOCAGENT_STATE_DIR", ROOT / ".docagent"))
LOCAL_DIR = STATE_DIR / "local"
LOCAL_CLOUD_FILE = LOCAL_DIR / "cloud.json"
LOCAL_STACK_FILE = LOCAL_DIR / "stack.json"
LOCAL_CDK_OUT = STATE_DIR / "cdk.out.local"
