"""`docagent eval --cascade` (docagent/evaluation/cascade.py) and the local model's faults kept to chosen
model ids (docagent/localcloud/bedrock/converse_api.py ``models=``)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from docagent.evaluation.cascade import cheap_faults
from docagent.evaluation.runs import allowing
from docagent.localcloud.bedrock.model_faults import ModelFaults, model_faults_spec, parse_model_faults
from docagent.localcloud.synth import local_context
from stacks.config import CONTEXT_KEY, load_config

CHEAP, STRONG = "anthropic.claude-3-haiku-20240307-v1:0", "global.anthropic.claude-haiku-4-5-20251001-v1:0"


def test_a_cascade_run_deploys_functions_allowed_to_call_its_cheap_model() -> None:
    """The local cdk.json allows its model_id alone: the cascade's run adds its models to extra_model_ids, or
    every document would be refused before a call (ModelNotAllowed)."""
    assert CHEAP not in load_config(local_context()[CONTEXT_KEY]).model_ids()
    config = load_config(local_context(allowing((CHEAP, STRONG)))[CONTEXT_KEY])
    assert {CHEAP, STRONG} <= set(config.model_ids())


def test_the_faults_are_kept_to_the_cheap_model_unless_they_name_one() -> None:
    assert cheap_faults("corrupt=invoice_date:0.3", CHEAP) == f"corrupt=invoice_date:0.3,models={CHEAP}"
    assert cheap_faults("malformed=0.1,models=haiku", CHEAP) == "malformed=0.1,models=haiku"
    assert cheap_faults(None, CHEAP) is None and cheap_faults("none", CHEAP) is None


def test_faults_apply_to_the_named_models_only() -> None:
    faults = parse_model_faults(f"corrupt=invoice_date,models={CHEAP},models=claude-3-5")
    assert faults.models == [CHEAP, "claude-3-5"]
    assert model_faults_spec(faults) == f"corrupt=invoice_date,models={CHEAP},models=claude-3-5"
    assert faults.applies_to(CHEAP) and faults.applies_to("us.anthropic.claude-3-5-haiku-20241022-v1:0")
    assert not faults.applies_to(STRONG)
    assert ModelFaults().applies_to(STRONG)  # no models named: every model


@pytest.fixture
def local_bedrock() -> Iterator[object]:
    from docagent.localcloud.bedrock.converse_api import STATE  # noqa: PLC0415 (process-wide state)

    STATE.reset()
    yield STATE
    STATE.reset()


def test_the_local_model_corrupts_the_cheap_models_replies_only(local_bedrock: object) -> None:
    from docagent.localcloud.bedrock.converse_api import STATE  # noqa: PLC0415

    STATE.configure(parse_model_faults(f"corrupt=amount,models={CHEAP}"))
    reply = json.dumps({"amount": 10})
    assert json.loads(STATE._with_faults(reply, CHEAP, evidence=True, pages=["10"]))["amount"] == 11
    assert json.loads(STATE._with_faults(reply, STRONG, evidence=True, pages=["10"]))["amount"] == 10
    STATE.configure(parse_model_faults(f"throttle=1,models={CHEAP}"))
    assert STATE._faulted(CHEAP) is not None and STATE._faulted(CHEAP)[0] == 429  # type: ignore[index]
    assert STATE._faulted(STRONG) is None
