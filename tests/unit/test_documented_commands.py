"""Every `docagent` command the README and the first-job walkthrough show parses as the CLI is today (#40: the
docs showed `start --definition ... --from-dir` without the `--job-id` it then required): each line of their
```bash blocks that runs `docagent` is parsed by the real parser, so a documented flag that does not exist,
or a required one left out, fails here."""

from __future__ import annotations

import shlex

import pytest

from docagent.cli import build_parser
from tests.documented import documented_commands

PAGES = (
    "README.md",
    "docs/your-own-job.md",
    "docs/local-cloud.md",
    "docs/actions.md",
    "docs/defining-a-job.md",
)
COMMANDS = [(page, command) for page in PAGES for command in documented_commands(page)]


def test_the_pages_show_commands() -> None:
    assert len(COMMANDS) >= 15, COMMANDS
    assert any("--model" in command for _, command in COMMANDS)


@pytest.mark.parametrize(
    ("page", "command"), COMMANDS, ids=[f"{page}: {command}" for page, command in COMMANDS]
)
def test_a_documented_command_parses(page: str, command: str, capsys: pytest.CaptureFixture[str]) -> None:
    arguments = shlex.split(command.replace("&", ""))[1:]
    try:
        build_parser().parse_args(arguments)
    except SystemExit as stopped:  # argparse's refusal (exit 2) or --help/--version (exit 0)
        assert stopped.code == 0, f"{page}: `{command}` does not parse: {capsys.readouterr().err}"
