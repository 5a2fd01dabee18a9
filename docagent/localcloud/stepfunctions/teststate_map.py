"""Map and Parallel states under TestState: with a mock, their result is the mock's.

AWS API reference "TestState" (looked up 2026-12-04): "TestState only supports the following when a mock
is specified: ... Parallel, or Map states"; "TestStateConfiguration": ``mapIterationFailureCount`` is "the
number of Map state iterations that failed during the Map state invocation", checked against the state's
tolerated failure thresholds. So the state's iterations never run: its mocked result (an array; with a
ResultWriter an object) goes through ResultSelector, ResultPath, OutputPath (or Output) and its Retry and
Catch, as a Task's result does. The state runs here as a Task with the same data-flow fields, which
moto's mock machinery gives the mocked result or error.

A Distributed Map whose ``mapIterationFailureCount`` passes its ToleratedFailureCount/Percentage fails
with ``States.ExceedToleratedFailureThreshold`` ("The specified tolerated failure threshold was exceeded",
the Map Run's own cause, distributed_map.py).
"""

from __future__ import annotations

import json
from typing import Any

from moto.stepfunctions.parser.asl.utils.json_path import extract_json

from docagent.localcloud.stepfunctions import jsonata_functions as jsonata
from docagent.localcloud.stepfunctions.executions import AwsError

KEPT = {
    "InputPath", "OutputPath", "ResultPath", "ResultSelector", "Output", "Assign", "Retry", "Catch", "Next",
    "End", "QueryLanguage", "Comment",
}  # fmt: skip
STAND_IN = "arn:aws:states:::lambda:invoke"
EXCEEDED = (
    "States.ExceedToleratedFailureThreshold",
    "The specified tolerated failure threshold was exceeded",
)


def as_mocked_task(state: dict[str, Any]) -> dict[str, Any]:
    """``state`` (a Map or Parallel) as a Task with its data-flow fields, to be given the mocked result."""
    return {"Type": "Task", "Resource": STAND_IN} | {
        key: value for key, value in state.items() if key in KEPT
    }


def _distributed(state: dict[str, Any]) -> bool:
    processor = state.get("ItemProcessor") or state.get("Iterator") or {}
    return (
        isinstance(processor, dict) and (processor.get("ProcessorConfig") or {}).get("Mode") == "DISTRIBUTED"
    )


def _item_count(state: dict[str, Any], state_input: Any, language: str, reader_data: Any) -> int:
    if reader_data is not None:
        items = reader_data
    elif language == "JSONata" and isinstance(state.get("Items"), str):
        items = jsonata.evaluate(state["Items"].strip()[2:-2], {"states": {"input": state_input}})
    elif isinstance(state.get("Items"), list):
        items = state["Items"]
    else:
        items = extract_json(state.get("ItemsPath", "$"), state_input)
    return len(items) if isinstance(items, list) else 0


def check_failure_count(  # noqa: PLR0917 - the request's parts the count is checked against
    state: dict[str, Any], state_input: Any, language: str, failures: int, reader_data: Any, mocked: Any
) -> None:
    """Refuse more failed iterations than the Map has (its items, else the mocked result's), in AWS's
    words as recorded in LocalStack's AWS-validated snapshot test_state/test_state_mock_validation
    ``test_map_iteration_failure_count_exceeds_mock_result_items`` (read 2026-12-04)."""
    if state.get("Type") != "Map" or failures <= 0:
        return
    items = _item_count(state, state_input, language, reader_data)
    if not items and isinstance(mocked, list):
        items = len(mocked)
    if failures > items:
        raise AwsError(
            "ValidationException",
            "Map iteration failure count must be less than or equal to the number of Map iterations",
        )


def threshold_exceeded(
    state: dict[str, Any], state_input: Any, language: str, failures: int, reader_data: Any = None
) -> bool:
    """Whether ``failures`` failed iterations pass the Distributed Map's tolerated failure thresholds."""
    if state.get("Type") != "Map" or not _distributed(state) or failures <= 0:
        return False
    count = state.get("ToleratedFailureCount")
    percentage = state.get("ToleratedFailurePercentage")
    if not isinstance(count, (int, float)) and not isinstance(percentage, (int, float)):
        # A Map that states no threshold is not failed by mapIterationFailureCount (as recorded on AWS in
        # LocalStack's AWS-validated snapshot test_state/test_state_configuration
        # ``test_map_state_failure_count[...-BASE_MAP_STATE]``, read 2026-12-04: SUCCEEDED with 2).
        return False
    items = _item_count(state, state_input, language, reader_data)
    over_count = isinstance(count, (int, float)) and failures > count
    over_share = isinstance(percentage, (int, float)) and items > 0 and failures * 100 / items > percentage
    return over_count or over_share


def map_inspection(state: dict[str, Any], effective_input: Any, language: str) -> dict[str, Any]:
    """A mocked Map's own ``inspectionData`` fields (API reference "InspectionData"): ``afterItemsPath``
    (JSONPath only), ``maxConcurrency`` (0: unbounded) and the tolerated failure thresholds it states."""
    found: dict[str, Any] = {}
    if language == "JSONPath":
        found["afterItemsPath"] = json.dumps(extract_json(state.get("ItemsPath", "$"), effective_input))
    concurrency = _number(state.get("MaxConcurrency"), effective_input)
    found["maxConcurrency"] = int(concurrency) if concurrency is not None else 0
    count = _number(state.get("ToleratedFailureCount"), effective_input)
    if count is not None:
        found["toleratedFailureCount"] = int(count)
    percentage = _number(state.get("ToleratedFailurePercentage"), effective_input)
    if percentage is not None:
        found["toleratedFailurePercentage"] = float(percentage)
    return found


def _number(value: Any, state_input: Any) -> float | None:
    """A Map's number field: a number, or a JSONata expression's number (``{% ... %}``, evaluated as
    recorded on AWS in LocalStack's AWS-validated snapshot test_state/test_test_state_scenarios
    ``test_base_map_state_inspect``, read 2026-12-04: ``{% $variable := 1 %}`` shows 1, a percentage as
    1.0)."""
    if isinstance(value, str) and value.strip().startswith("{%") and value.strip().endswith("%}"):
        value = jsonata.evaluate(value.strip()[2:-2], {"states": {"input": state_input}})
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def mocked_inspection(data: dict[str, Any], state: dict[str, Any], language: str) -> dict[str, Any]:
    """A mocked Map's or Parallel's ``inspectionData``: its iterations or branches never ran, so there is
    no ``afterParameters``/``afterArguments`` or raw ``result``; a JSONPath Parallel shows no
    ``afterInputPath`` either (as recorded on AWS in LocalStack's AWS-validated snapshots
    test_state/test_test_state_mock_scenarios and test_state_configuration, read 2026-12-04)."""
    dropped = {"afterParameters", "afterArguments", "result"}
    if state.get("Type") == "Parallel" and language == "JSONPath":
        dropped.add("afterInputPath")
    return {key: value for key, value in data.items() if key not in dropped}
