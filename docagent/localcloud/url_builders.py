"""A URL rule's builders made when a URL is first built from it, not when the rule is added.

moto serves each service with a Flask app of its own, made at the service's first request, with every URL
rule of the service (about 400 for the services a local job uses). werkzeug compiles each rule when it is
added, and with it two URL builders (``Rule.compile``: ``_compile_builder(False)`` and ``(True)``, each an
``ast`` tree turned into a function), which only ``url_for`` (``Rule.build``) calls: moto never builds a URL.
The builders were 0.15 s of CPU of every one-document demo's cloud process (a CPU-clocked sampling profile,
2026-12-08; werkzeug 3.1). Here ``Rule.compile`` gets, for each builder, a stand-in that makes the real one
(werkzeug's own ``_compile_builder``, from the rule as compiled) at its first call and calls it: a URL built
is the one werkzeug builds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from werkzeug.routing.rules import Rule

_werkzeug_compile_builder = Rule._compile_builder


def _compile_builder_on_use(self: Rule, append_unknown: bool = True) -> Callable[..., tuple[str, str]]:
    made: list[Callable[..., tuple[str, str]]] = []

    def build(rule: Rule, *args: Any, **kwargs: Any) -> tuple[str, str]:
        if not made:  # two threads that build at once both make it: equal builders
            made.append(_werkzeug_compile_builder(rule, append_unknown).__get__(rule, None))
        return made[0](*args, **kwargs)

    return build


def install() -> None:
    Rule._compile_builder = _compile_builder_on_use  # type: ignore[method-assign]
