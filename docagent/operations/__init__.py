"""The operator's commands (start, status, list, redrive, inspect, logs, trace, approve,
reject, preflight, reference load, definition, review, console, budget).

Each module listed here exposes ``register(commands, common)`` adding its subcommands to the
``docagent`` parser; ``common`` is the parent parser that carries ``--json``.
"""

from __future__ import annotations

import argparse
import importlib

COMMAND_MODULES: tuple[str, ...] = (
    "docagent.operations.approval",
    "docagent.operations.start_job",
    "docagent.operations.jobs",
    "docagent.operations.inspect_job",
    "docagent.operations.redrive_job",
    "docagent.operations.logs",
    "docagent.operations.trace_job",
    "docagent.operations.preflight",
    "docagent.operations.reference",
    "docagent.operations.job_definitions",
    "docagent.operations.review",
    "docagent.console.command",
    "docagent.operations.spend",
)


def register_operator_commands(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    common: argparse.ArgumentParser,
) -> None:
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(commands, common)
