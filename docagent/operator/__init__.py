"""The operator's commands (start, status, list, redrive, inspect, logs, trace, approve,
reject, preflight, reference load, definition, budget).

Each module listed here exposes ``register(commands, common)`` adding its subcommands to the
``docagent`` parser; ``common`` is the parent parser that carries ``--json``.
"""

from __future__ import annotations

import argparse
import importlib

COMMAND_MODULES: tuple[str, ...] = (
    "docagent.operator.approval",
    "docagent.operator.jobs",
    "docagent.operator.inspect",
    "docagent.operator.redrive",
    "docagent.operator.logs",
    "docagent.operator.trace",
    "docagent.operator.preflight",
    "docagent.operator.reference",
    "docagent.operator.definitions",
    "docagent.operator.spend",
)


def register_operator_commands(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    common: argparse.ArgumentParser,
) -> None:
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(commands, common)
