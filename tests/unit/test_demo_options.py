"""``docagent demo``'s options say what they do for a job of any size (#53: `--crash-at` said "default 138"
and document 5 of 8 crashed)."""

from __future__ import annotations

import argparse
import re

from docagent.cli import build_parser
from docagent.drills.demo_crash import default_crash_index


def _demo_option(flag: str) -> argparse.Action:
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    demo = commands.choices["demo"]
    return next(action for action in demo._actions if flag in action.option_strings)


def test_the_crash_at_help_gives_the_default_of_every_example_it_names() -> None:
    text = " ".join(str(_demo_option("--crash-at").help).split())
    examples = [(int(index), int(of)) for index, of in re.findall(r"(\d+) of (\d+)", text)]
    assert len(examples) >= 2, text
    assert all(default_crash_index(of) == index for index, of in examples), examples
    big = int(re.findall(r"default: (\d+) in a job of more than (\d+)", text)[0][0])
    assert default_crash_index(200) == default_crash_index(big + 1) == big
    assert default_crash_index(big) == big * 2 // 3, "two thirds of the way through a job no larger"
