"""Synth refuses a model the deploying Region cannot call (#40): the CDK CLI names the Region
(CDK_DEFAULT_REGION), and a geography's inference profile outside it fails `cdk synth` with the fix."""

from __future__ import annotations

import pytest

from app import build_app
from stacks.config import cdk_json_context, load_config
from tests.infra.conftest import Synthesized

US_PROFILE = "us.anthropic.claude-haiku-4-5-20251001-v1:0"


def test_a_us_profile_is_refused_for_a_stack_in_europe(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CDK_DEFAULT_REGION", "eu-west-1")
    with pytest.raises(SystemExit, match=r"global\.anthropic\.claude-haiku-4-5"):
        build_app({"docagent": {"model_id": US_PROFILE}})


def test_run_actions_has_its_own_shorter_timeout(synthesized: Synthesized) -> None:
    """#40: a worker killed mid-action is waited out for RunActions' own timeout, not a document's."""
    config = load_config(cdk_json_context()["docagent"])
    timeouts = {
        resource["Properties"]["Description"]: resource["Properties"]["Timeout"]
        for resource in synthesized.resources("AWS::Lambda::Function").values()
        if "Description" in resource["Properties"]
    }
    actions = [
        seconds for description, seconds in timeouts.items() if description.startswith("Runs the job-level")
    ]
    assert (
        actions == [config.actions_timeout_seconds]
        and config.actions_timeout_seconds < config.function_timeout_seconds
    )
    others = {
        seconds
        for description, seconds in timeouts.items()
        if not description.startswith("Runs the job-level")
    }
    assert config.function_timeout_seconds in others
