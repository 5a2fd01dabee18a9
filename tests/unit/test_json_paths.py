"""The interpreter's JSONPath expressions are parsed once per path and evaluate as a fresh parse does."""

from __future__ import annotations

import copy

import pytest
from jsonpath_ng import parser
from jsonpath_ng.exceptions import JsonPathParserError
from jsonpath_ng.ext import parser as extended
from moto.stepfunctions.parser.asl.component.common.path import result_path
from moto.stepfunctions.parser.asl.utils import json_path

from docagent.localcloud.stepfunctions import json_paths

DATA = {
    "Payload": {"documents": [{"id": "a", "pages": 2}, {"id": "b", "pages": 1}], "job_id": "j-1"},
    "Items": [1, 2, 3],
}
PATHS = ["$", "$.Payload.job_id", "$.Payload.documents[0].id", "$.Payload.documents[*].id", "$.Items[1]"]


@pytest.fixture(autouse=True)
def installed():
    json_paths.install()
    json_paths.parse_extended.cache_clear()
    json_paths.parse_basic.cache_clear()


@pytest.mark.parametrize("path", PATHS)
def test_a_kept_expression_finds_what_a_fresh_parse_finds(path):
    fresh = [match.value for match in extended.parse(path).find(DATA)]
    for _ in range(3):
        assert [match.value for match in json_paths.parse_extended(path).find(DATA)] == fresh
    assert json_path.extract_json(path, DATA) == json_path.extract_json(path, copy.deepcopy(DATA))


def test_the_interpreter_parses_each_path_once():
    for _ in range(5):
        assert json_path.extract_json("$.Payload.job_id", DATA) == "j-1"
        assert json_path.extract_json("$.Payload.documents[*].pages", DATA) == [2, 1]
    info = json_paths.parse_extended.cache_info()
    assert (info.misses, info.hits) == (2, 8)


def test_a_missing_path_is_still_refused():
    with pytest.raises(json_path.NoSuchJsonPathError):
        json_path.extract_json("$.Payload.nothing", DATA)
    assert json_path.extract_json("$.Payload.nothing[*]", DATA) == []


def test_result_path_writes_into_new_data_each_time_with_one_expression():
    first = vars(result_path)["parse"]("$.result").update_or_create({"a": 1}, {"x": 1})
    second = vars(result_path)["parse"]("$.result").update_or_create({"a": 2}, {"x": 2})
    assert (first, second) == ({"a": 1, "result": {"x": 1}}, {"a": 2, "result": {"x": 2}})
    assert json_paths.parse_basic.cache_info().misses == 1
    assert parser.parse("$.result").update_or_create({}, 3) == {"result": 3}


MORE_PATHS = [*PATHS, "$.Items[?(@ > 1)]", "$.Payload.documents[?(@.pages > 1)].id", "$.Items.`len`"]


def test_one_parser_of_each_kind_reads_every_path_as_a_parser_of_its_own_does():
    json_paths._Parsers.extended = json_paths._Parsers.basic = None
    with pytest.raises(JsonPathParserError):
        json_paths.parse_extended("$.Payload[")  # a refused path leaves the parser as it was
    made = json_paths._Parsers.extended
    for path in MORE_PATHS:
        assert json_paths.parse_extended(path) == extended.parse(path)
        assert json_paths._Parsers.extended is made
    for path in PATHS:
        assert json_paths.parse_basic(path) == parser.parse(path)
    assert json_paths._Parsers.basic is not None
    assert [m.value for m in json_paths.parse_extended("$.Items[?(@ > 1)]").find(DATA)] == [2, 3]
