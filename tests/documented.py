"""The ``docagent`` commands the docs show: each line of a page's ```bash blocks that runs ``docagent``, its
trailing comment dropped (tests/unit/test_documented_commands.py parses them all; the walkthrough test runs
docs/your-own-job.md's)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_BLOCK = re.compile(r"```bash\n(.*?)```", re.S)


def documented_commands(page: str) -> list[str]:
    """The page's ``docagent`` command lines, in the page's order."""
    found = []
    for block in _BLOCK.findall((ROOT / page).read_text(encoding="utf-8")):
        for line in block.splitlines():
            command = line.split("  #", 1)[0].split(" # ", 1)[0].strip()
            command = command.removeprefix(".venv/bin/")
            if command.startswith("docagent "):
                found.append(command)
    return found
