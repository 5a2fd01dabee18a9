"""Ready for a real account: the model id, Bedrock's retries, in-progress retries of every durable step."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest

from functions.errors import ModelAccessDenied, ModelNotAvailable, ModelRequestInvalid
from functions.logic.window_extraction import MAX_CONTINUATIONS
from stacks.config import DEFAULT_MODEL_ID, INFERENCE_PROFILE_PREFIXES, ConfigError, load_config
from stacks.function_specs import FUNCTION_SPECS
from tests.infra.test_asl import CONFIG, PLAUSIBLE_VALUES, substituted, walk_states

PERMANENT_MODEL_ERRORS = {cls.__name__ for cls in (ModelAccessDenied, ModelNotAvailable, ModelRequestInvalid)}
FUNCTION_ARN = re.compile(r"DocAgent-(?P<name>[A-Za-z]+)$")


@pytest.fixture(scope="module")
def definition() -> Any:
    return substituted(PLAUSIBLE_VALUES)


def _task_function(state: dict[str, Any]) -> str | None:
    """The construct id of the function a Lambda task invokes (PLAUSIBLE_VALUES names it in the ARN)."""
    name = str(state.get("Parameters", {}).get("FunctionName", ""))
    match = FUNCTION_ARN.search(name)
    return match.group("name") if match else None


def test_every_durable_step_retries_in_progress_for_longer_than_its_function_timeout(definition: Any) -> None:
    """P4: a retry after a crash meets the dead invocation's INPROGRESS record until its deadline."""
    durable = {spec.construct_id for spec in FUNCTION_SPECS if spec.uses_idempotency}
    checked = set()
    for name, state, _ in walk_states(definition["States"]):
        function = _task_function(state)
        if function not in durable:
            continue
        retriers = [
            r for r in state.get("Retry", []) if "IdempotencyAlreadyInProgressError" in r["ErrorEquals"]
        ]
        assert retriers, f"{name} ({function}) does not retry IdempotencyAlreadyInProgressError"
        assert all(
            r["IntervalSeconds"] * r["MaxAttempts"] > CONFIG.function_timeout_seconds for r in retriers
        ), name
        checked.add(function)
    assert checked == durable  # PrepareJob included: every durable function is invoked by some state


def _caps(retrier: dict[str, Any]) -> list[float]:
    return [
        min(retrier["IntervalSeconds"] * retrier.get("BackoffRate", 2.0) ** n, retrier["MaxDelaySeconds"])
        for n in range(retrier["MaxAttempts"])
    ]


def _expected_wait(retrier: dict[str, Any]) -> float:
    """Mean total wait of a retrier with full jitter: half of each capped interval."""
    return sum(_caps(retrier)) / 2


def _unlucky_wait(retrier: dict[str, Any]) -> float:
    """A total wait that full jitter falls short of about once in 30,000 documents: the mean less four
    standard deviations (each wait is uniform on 0..cap: variance cap^2 / 12)."""
    return _expected_wait(retrier) - 4 * math.sqrt(sum(cap**2 / 12 for cap in _caps(retrier)))


def _retrier(definition: Any, error: str) -> dict[str, Any]:
    state = next(s for name, s, _ in walk_states(definition["States"]) if name == "ProcessDocument")
    retriers = [r for r in state["Retry"] if error in r["ErrorEquals"]]
    assert len(retriers) == 1, error
    return retriers[0]


def test_throttled_model_calls_back_off_with_full_jitter_past_a_quota_minute(definition: Any) -> None:
    retrier = _retrier(definition, "ModelThrottled")
    # BudgetBusy (no call: the budget's headroom is held by calls in flight) waits with the same policy.
    assert set(retrier["ErrorEquals"]) == {"ModelThrottled", "BudgetBusy"}
    assert retrier["JitterStrategy"] == "FULL"
    assert 0 < retrier["MaxDelaySeconds"] <= 120
    assert _expected_wait(retrier) > 60  # Bedrock quotas are per minute
    # Throttling is the normal state of a big job: a document throttled for 30 minutes still finishes, with
    # no redrive (issue 20). Waiting between attempts costs nothing; each attempt is a short invocation.
    assert _unlucky_wait(retrier) >= 30 * 60
    assert sum(_caps(retrier)) <= 2 * 3600, "and it gives up within two hours (README: Throttling)"
    # A 200-document job at throttle=0.7 (`docagent demo --model-faults throttle=0.7`) fails a document
    # only when all its attempts are throttled: 0.7^(retries + 1) each, under 1e-5 for the whole job.
    assert 200 * 0.7 ** (retrier["MaxAttempts"] + 1) < 1e-5


def test_an_unavailable_model_is_retried_for_minutes_then_fails_the_document_not_the_job(
    definition: Any,
) -> None:
    """Issue 49: a broken endpoint (5xx, no answer) was retried 52 times and then failed the job. Now a
    few backed-off attempts, then ProcessDocument's Catch gives the document up with the reason."""
    retrier = _retrier(definition, "ModelUnavailable")
    assert retrier["ErrorEquals"] == ["ModelUnavailable"] and retrier["JitterStrategy"] == "FULL"
    assert _expected_wait(retrier) > 30 and sum(_caps(retrier)) <= 5 * 60
    state = next(s for name, s, _ in walk_states(definition["States"]) if name == "ProcessDocument")
    (catcher,) = state["Catch"]
    assert set(catcher["ErrorEquals"]) == {"ModelUnavailable", "DocumentInProgress"}
    assert not set(catcher["ErrorEquals"]) & (PERMANENT_MODEL_ERRORS | {"ModelThrottled", "States.ALL"})
    give_up = next(s for name, s, _ in walk_states(definition["States"]) if name == catcher["Next"])
    payload = give_up["Parameters"]["Payload"]
    assert payload["action"] == "give_up" and payload["failure.$"] == catcher["ResultPath"]
    assert give_up["Parameters"]["FunctionName"] == state["Parameters"]["FunctionName"]
    assert {key: value for key, value in payload.items() if key not in {"action", "failure.$"}} == state[
        "Parameters"
    ]["Payload"], "the same document (or batch) as ProcessDocument's"
    assert give_up["End"] is True and give_up["OutputPath"] == state["OutputPath"]


def test_a_long_document_continues_at_once_for_every_window_of_the_default_ceiling(definition: Any) -> None:
    retrier = _retrier(definition, "DocumentInProgress")
    assert (retrier["IntervalSeconds"], retrier["BackoffRate"]) == (1, 1)
    assert retrier["MaxAttempts"] == MAX_CONTINUATIONS  # a window an invocation, classified then extracted


def test_permanent_model_refusals_are_never_retried(definition: Any) -> None:
    never = PERMANENT_MODEL_ERRORS | {"States.ALL", "BudgetExceeded"}  # a budget stop waits for the operator
    for name, state, _ in walk_states(definition["States"]):
        for retrier in state.get("Retry", []):
            assert not set(retrier["ErrorEquals"]) & never, name


def test_the_default_model_is_a_cross_region_inference_profile() -> None:
    config = load_config({})
    assert config.model_id == DEFAULT_MODEL_ID
    assert config.model_id.split(".", 1)[0] in INFERENCE_PROFILE_PREFIXES


@pytest.mark.parametrize(
    "model_id",
    [
        "anthropic.claude-haiku-4-5-20251001-v1:0",
        "global.anthropic.claude-haiku-4-5-20251001-v1:0",
        "amazon.nova-lite-v1:0",
        "arn:aws:bedrock:eu-west-1:123456789012:application-inference-profile/a1b2c3d4",
    ],
)
def test_model_id_forms_bedrock_accepts(model_id: str) -> None:
    assert load_config({"model_id": model_id}).model_id == model_id


@pytest.mark.parametrize("model_id", ["claude haiku", "anthropic", "xx.anthropic.claude:1:0:0", "claude-3"])
def test_a_model_id_of_no_bedrock_form_fails_synth_with_its_name(model_id: str) -> None:
    with pytest.raises(ConfigError, match="is not a Bedrock model id"):
        load_config({"model_id": model_id})


@pytest.mark.parametrize(("key", "value"), [("model_max_tokens", 0), ("model_temperature", 1.5)])
def test_inference_settings_are_bounded(key: str, value: float) -> None:
    with pytest.raises(ConfigError, match=key):
        load_config({key: value})


@pytest.mark.parametrize(
    ("locations", "problem"),
    [
        (["jobs/"], "overlaps 'jobs/'"),
        (["j"], "must end with '/'"),
        (["ma"], "must end with '/'"),
        (["map-runs/2026/"], "overlaps 'map-runs/'"),
        ([""], "must end with '/'"),
        (["s3://Bad_Bucket/x/"], "not an S3 bucket name"),
        (["s3://partner-drop/x"], "must end with '/'"),
    ],
)
def test_source_locations_never_include_what_the_product_writes(locations: list[str], problem: str) -> None:
    with pytest.raises(ConfigError, match="source_locations") as refused:
        load_config({"source_locations": locations})
    assert problem in str(refused.value)


def test_source_locations_default_to_the_incoming_prefix() -> None:
    assert load_config({}).source_locations == ("incoming/",)
    assert load_config({"source_locations": ["batches/", "s3://partner-drop/"]}).source_locations
