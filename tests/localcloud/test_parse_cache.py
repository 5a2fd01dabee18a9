"""A definition is parsed by ANTLR once a process (docagent/localcloud/stepfunctions/parse_cache.py); each
call still gets a program of its own, and a definition with syntax errors is refused at every call."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from moto.stepfunctions.parser.asl.antlr.runtime.ASLParser import ASLParser
from moto.stepfunctions.parser.asl.parse.asl_parser import ASLParserException

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
