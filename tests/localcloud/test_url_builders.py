"""werkzeug makes a URL rule's builders when a URL is first built from it
(docagent/localcloud/url_builders.py): none for a rule only matched, and every URL built the one werkzeug's
own builders build."""

from __future__ import annotations

from typing import Any

import pytest
from werkzeug.routing import Map, Rule

from docagent.localcloud import url_builders

RULES = ("/<path:key>", "/2015-03-31/functions/<function_name>/invocations", "/items/<int:number>/")
VALUES: tuple[dict[str, Any], ...] = (
    {"key": "a b/c"},
    {"function_name": "f", "Qualifier": "$LATEST"},
    {"number": 7, "page": "2"},
)


def built(monkeypatch: pytest.MonkeyPatch) -> tuple[list[Any], list[bool], tuple[Any, ...]]:
    """The URLs built from each rule (with and without the unknown values), which builders were made (the
    unknown-values one or not), and what a match of each rule's URL gives."""
    made: list[bool] = []
    original = url_builders._werkzeug_compile_builder

    def counting(rule: Rule, append_unknown: bool = True) -> Any:
        made.append(append_unknown)
        return original(rule, append_unknown)

    if Rule._compile_builder is original:  # werkzeug alone: counted where compile calls it
        monkeypatch.setattr(Rule, "_compile_builder", counting)
    else:  # counted where the stand-in makes it
        monkeypatch.setattr(url_builders, "_werkzeug_compile_builder", counting)
    urls = Map([Rule(rule, endpoint=str(number)) for number, rule in enumerate(RULES)]).bind("localhost")
    matched = tuple(urls.match(path) for path in ("/x/y", "/2015-03-31/functions/f/invocations", "/items/3/"))
    made_on_add = list(made)
    found = [urls.build(str(number), values) for number, values in enumerate(VALUES)]
    found += [urls.build(str(number), values, append_unknown=False) for number, values in enumerate(VALUES)]
    return found, made_on_add, matched


def test_builders_are_made_at_the_first_build_and_build_as_werkzeugs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Rule, "_compile_builder", url_builders._werkzeug_compile_builder)
    before, made_before, matched_before = built(monkeypatch)
    assert len(made_before) == 2 * len(RULES), "werkzeug alone: two builders for each rule added"

    monkeypatch.setattr(Rule, "_compile_builder", url_builders._compile_builder_on_use)  # install()'s
    after, made_after, matched_after = built(monkeypatch)
    assert made_after == [], "no builder made for rules only added and matched"
    assert after == before and matched_after == matched_before
    url_builders.install()
    assert Rule._compile_builder is url_builders._compile_builder_on_use
    assert after[0] == "/a%20b/c" and after[1] == "/2015-03-31/functions/f/invocations?Qualifier=$LATEST"
