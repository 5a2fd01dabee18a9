"""The CLI starts light: ``docagent --help`` and every command's ``--help`` (the parser the operator's
commands run through) import nothing of moto or the CDK; a command loads those only when it runs
(pyproject.toml's PLC0415 rule). Run in a fresh interpreter: what is imported is the process's."""

from __future__ import annotations

import json
import subprocess
import sys

from docagent import project

HEAVY = ("moto", "aws_cdk", "constructs", "jsii", "cdk_nag")

PROBE = """
import argparse, json, sys
from docagent import cli
parser = cli.build_parser()
helps = [parser.format_help()]
for action in parser._actions:
    if isinstance(action, argparse._SubParsersAction):
        helps += [sub.format_help() for sub in action.choices.values()]
heavy = sorted({name.split(".")[0] for name in sys.modules} & set(sys.argv[1:]))
print(json.dumps({"helps": len(helps), "heavy": heavy}))
"""


def test_the_cli_and_every_commands_help_import_no_moto_and_no_cdk() -> None:
    ran = subprocess.run(
        [sys.executable, "-c", PROBE, *HEAVY],
        cwd=project.ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    found = json.loads(ran.stdout.strip().splitlines()[-1])
    assert found["helps"] > 20  # the top level and each command: the probe walked the real parser
    assert found["heavy"] == []
