"""Every synth printed jsii's Node end-of-life banner as raw Python byte strings (b'!!!...'): the app quiets
it (stacks/__init__.py) before aws_cdk starts jsii's runtime. On this project's machines Node is 20, past
jsii's support, so without it the banner appears."""

from __future__ import annotations

import os
import subprocess
import sys

from docagent import project


def test_starting_the_app_prints_no_raw_banner() -> None:
    env = {name: value for name, value in os.environ.items() if not name.startswith("JSII_SILENCE_WARNING")}
    started = subprocess.run(
        [sys.executable, "-c", "import app, aws_cdk; aws_cdk.App()"],
        cwd=project.ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "b'" not in started.stderr and "end-of-life" not in started.stderr, started.stderr
