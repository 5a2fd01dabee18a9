"""Step Functions Local mock files: parsing, invocation ranges and the per-state counter."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from moto.stepfunctions.parser.mocking.mock_config import MockedResponseReturn, MockedResponseThrow

from docagent.localcloud.stepfunctions.executions import AwsError
from docagent.localcloud.stepfunctions.mock_config import CaseMocks, config_path, load

CONFIG = {
    "StateMachines": {"M": {"TestCases": {"Case": {"Task": "Flaky"}, "Broken": {"Task": "Missing"}}}},
    "MockedResponses": {
        "Flaky": {
            "0": {"Return": {"n": 0}},
            "1-2": {"Throw": {"Error": "E", "Cause": "c"}},
            "3": {"Return": None},
        }
    },
}


def write(tmp_path: Path, config: object) -> Path:
    path = tmp_path / "MockConfigFile.json"
    path.write_text(json.dumps(config))
    return path


def test_ranges_and_one_counter_per_state(tmp_path: Path) -> None:
    mocks = CaseMocks.from_config(load(write(tmp_path, CONFIG)), "M", "Case")
    answers = [mocks.next_response("Task") for _ in range(4)]
    assert isinstance(answers[0], MockedResponseReturn) and answers[0].payload == {"n": 0}
    assert all(isinstance(answer, MockedResponseThrow) and answer.error == "E" for answer in answers[1:3])
    assert isinstance(answers[3], MockedResponseReturn) and answers[3].payload is None
    with pytest.raises(RuntimeError, match="invocation 4"):
        mocks.next_response("Task")


@pytest.mark.parametrize(
    "config",
    [
        {"MockedResponses": {"R": {"0": {"Return": 1, "Throw": {"Error": "E"}}}}},
        {"MockedResponses": {"R": {"0": {}}}},
        {"MockedResponses": {"R": {"0": {"Throw": {"Cause": "no error name"}}}}},
    ],
)
def test_an_entry_needs_exactly_one_of_return_or_throw(tmp_path: Path, config: object) -> None:
    with pytest.raises(AwsError, match="not valid"):
        load(write(tmp_path, config))


def test_unknown_cases_and_responses_are_named(tmp_path: Path) -> None:
    config = load(write(tmp_path, CONFIG))
    with pytest.raises(AwsError, match="no test case 'Nope'"):
        CaseMocks.from_config(config, "M", "Nope")
    with pytest.raises(AwsError, match="no mocked response 'Missing'"):
        CaseMocks.from_config(config, "M", "Broken")


def test_the_file_comes_from_sfn_mock_config_else_the_default_name() -> None:
    assert config_path({"SFN_MOCK_CONFIG": "/x/mocks.json"}) == Path("/x/mocks.json")
    assert config_path({}) == Path("MockConfigFile.json")
