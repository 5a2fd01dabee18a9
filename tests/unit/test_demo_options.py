"""``docagent demo``'s options say what they do for a job of any size (#53: `--crash-at` said "default 138"
and document 5 of 8 crashed)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from types import SimpleNamespace

from docagent.cli import build_parser
from docagent.drills.demo_cloud import DemoCloud
from docagent.drills.demo_crash import Crash, attempts_killed, default_crash_index
from docagent.localcloud.lambdas.runtime import InvocationRecord
from stacks import outputs as names


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


def test_the_attempts_killed_are_the_jobs_own_on_a_cloud_that_ran_other_crashes() -> None:
    """A shared cloud (the tests' session cloud, a kept one) holds other jobs' invocations: only this job's
    killed attempts at its crash point and document count (two jobs crashed at document 8: 8, not 4)."""

    def killed(job_id: str, index: int) -> InvocationRecord:
        event = {"job_id": job_id, "document": {"index": index}}
        return InvocationRecord("ProcessDocument", f"r-{job_id}-{index}", event, "Runtime.ExitError", 10.0)

    records = [killed("other-job", 8)] * 4 + [killed("this-job", 8)] * 4 + [killed("this-job", 3)]
    runtime = SimpleNamespace(invocations_of=lambda function: records)
    where = DemoCloud(
        endpoint="http://127.0.0.1:1", state_dir=Path("."), cloud=SimpleNamespace(runtime=runtime)
    )  # type: ignore[arg-type]
    stack = SimpleNamespace(outputs={names.function_name_output(names.PROCESS_DOCUMENT): "ProcessDocument"})
    job = SimpleNamespace(job_id="this-job")
    assert attempts_killed(where, stack, job, Crash(8, "redrive")) == 4  # type: ignore[arg-type]
