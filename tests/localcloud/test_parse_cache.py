"""A definition is parsed by ANTLR once a process (docagent/localcloud/stepfunctions/parse_cache.py), a long
one once a machine (its tree kept on disk); each call still gets a program of its own, and a definition with
syntax errors is refused at every call."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from moto.stepfunctions.parser.asl.antlr.runtime.ASLParser import ASLParser
from moto.stepfunctions.parser.asl.parse.asl_parser import ASLParserException

from docagent import project
from docagent.localcloud.stepfunctions import map_extras, parse_cache


def machine(result: str) -> str:
    return json.dumps({"StartAt": "P", "States": {"P": {"Type": "Pass", "Result": result, "End": True}}})


@pytest.fixture
def antlr_parses(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """How many times ANTLR parsed a whole definition, from an empty cache."""
    parses = [0]
    state_machine = ASLParser.state_machine

    def counted(self: Any) -> Any:
        parses[0] += 1
        return state_machine(self)

    monkeypatch.setattr(ASLParser, "state_machine", counted)
    parse_cache.forget()
    yield parses
    parse_cache.forget()


def test_a_text_is_parsed_once_and_each_call_gets_its_own_program(antlr_parses: list[int]) -> None:
    calls = [parse_cache.parse(machine("a")) for _ in range(3)]
    assert antlr_parses == [1]
    programs, trees = [program for program, _ in calls], {id(tree) for _, tree in calls}
    assert len({id(program) for program in programs}) == 3 and len(trees) == 1
    assert [program.start_at.start_at_name for program in programs] == ["P"] * 3

    parse_cache.parse(machine("b"))
    assert antlr_parses == [2]


def test_the_extras_parse_goes_through_the_cache(antlr_parses: list[int]) -> None:
    """map_extras' parse (the one the local cloud installs) takes definitions with and without extras."""
    batched = json.loads(machine("a"))
    batched["States"] = {
        "M": {
            "Type": "Map",
            "ItemBatcher": {"MaxItemsPerBatch": 2},
            "ItemProcessor": {
                "ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "EXPRESS"},
                "StartAt": "P",
                "States": {"P": {"Type": "Pass", "End": True}},
            },
            "End": True,
        }
    }
    batched["StartAt"] = "M"
    for text in (machine("a"), json.dumps(batched)):
        first, second = map_extras._parse(text)[0], map_extras._parse(text)[0]
        assert first is not second
    assert antlr_parses == [2]
    extras = vars(second.states.states["M"].iteration_component)["docagent_extras"]
    assert extras.express and extras.batcher == {"MaxItemsPerBatch": 2}


def test_a_definition_with_syntax_errors_is_refused_every_time(antlr_parses: list[int]) -> None:
    broken = '{"StartAt": "P", "States": {"P": {"Type": "Pass", "End": "yes"}}}'
    for _ in range(2):
        with pytest.raises(ASLParserException):
            parse_cache.parse(broken)
    assert antlr_parses == [2]  # never kept


def test_only_the_last_texts_are_kept(antlr_parses: list[int]) -> None:
    for index in range(parse_cache.KEPT + 1):
        parse_cache.parse(machine(str(index)))
    parse_cache.parse(machine(str(parse_cache.KEPT)))  # the newest: kept
    assert antlr_parses == [parse_cache.KEPT + 1]
    parse_cache.parse(machine("0"))  # the oldest: dropped, parsed again
    assert antlr_parses == [parse_cache.KEPT + 2]


def long_machine(result: str) -> str:
    """A definition of ``STORED_FROM_CHARS`` or more: a chain of Pass states."""
    count = parse_cache.STORED_FROM_CHARS // 50 + 1
    states: dict[str, Any] = {
        f"P{index}": {"Type": "Pass", "Result": result, "Next": f"P{index + 1}"} for index in range(count)
    }
    states[f"P{count}"] = {"Type": "Pass", "Result": result, "End": True}
    text = json.dumps({"StartAt": "P0", "States": states})
    assert len(text) >= parse_cache.STORED_FROM_CHARS
    return text


@pytest.fixture
def parse_store(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setattr(project, "PARSE_CACHE", tmp_path / "parse-cache")
    return tmp_path / "parse-cache"


def test_a_long_definition_is_parsed_once_a_machine(antlr_parses: list[int], parse_store: Path) -> None:
    """A later process (here: this one, its trees forgotten) reads the tree from disk: the same tree, the
    same program, no parse."""
    text = long_machine("a")
    program, tree = parse_cache.parse(text)
    assert antlr_parses == [1] and len(list(parse_store.glob("*.pickle"))) == 1
    parse_cache.forget()
    read_program, read_tree = parse_cache.parse(text)
    assert antlr_parses == [1]
    assert read_tree is not tree
    assert read_tree.toStringTree(recog=ASLParser) == tree.toStringTree(recog=ASLParser)
    assert read_tree.parser is None and read_tree.start.text == tree.start.text == "{"
    assert list(read_program.states.states) == list(program.states.states)
    states = read_program.states.states
    assert [states[f"P{i}"].continue_with.next_state.name for i in range(3)] == ["P1", "P2", "P3"]
    assert [states[f"P{i}"].result.result_obj for i in range(2)] == ["a", "a"]
    assert parse_cache.parse(text)[1] is read_tree  # kept in this process again
    assert antlr_parses == [1]


def test_short_and_refused_definitions_stay_off_disk(antlr_parses: list[int], parse_store: Path) -> None:
    parse_cache.parse(machine("a"))
    broken = long_machine("a").replace('"End": true', '"End": "yes"')
    with pytest.raises(ASLParserException):
        parse_cache.parse(broken)
    assert not parse_store.exists() or not list(parse_store.iterdir())
    parse_cache.forget()
    parse_cache.parse(machine("a"))
    assert antlr_parses == [3]


def test_a_file_that_cannot_be_read_is_parsed_again_and_rewritten(
    antlr_parses: list[int], parse_store: Path
) -> None:
    text = long_machine("a")
    parse_cache.parse(text)
    (stored,) = parse_store.glob("*.pickle")
    stored.write_bytes(stored.read_bytes()[:1000])  # cut short
    parse_cache.forget()
    assert next(iter(parse_cache.parse(text)[0].states.states)) == "P0"
    assert antlr_parses == [2]
    parse_cache.forget()
    parse_cache.parse(text)
    assert antlr_parses == [2]  # the rewritten file read


def test_another_version_reads_its_own_file(
    antlr_parses: list[int], parse_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = long_machine("a")
    parse_cache.parse(text)
    parse_cache.forget()
    monkeypatch.setattr(parse_cache, "FORMAT", parse_cache.FORMAT + 1)
    parse_cache._versions.cache_clear()
    try:
        parse_cache.parse(text)
    finally:
        parse_cache._versions.cache_clear()
    assert antlr_parses == [2] and len(list(parse_store.glob("*.pickle"))) == 2


def test_only_the_newest_files_stay(
    antlr_parses: list[int], parse_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(parse_cache, "STORED", 2)
    for result in ("a", "b", "c"):
        parse_cache.parse(long_machine(result))
    assert len(list(parse_store.glob("*.pickle"))) == 2
    assert not list(parse_store.glob("*.part"))
