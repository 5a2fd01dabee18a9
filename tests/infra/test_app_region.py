"""Synth refuses a model the deploying Region cannot call (#40): the CDK CLI names the Region
(CDK_DEFAULT_REGION), and a geography's inference profile outside it fails `cdk synth` with the fix."""

from __future__ import annotations

import pytest

from app import build_app

US_PROFILE = "us.anthropic.claude-haiku-4-5-20251001-v1:0"


def test_a_us_profile_is_refused_for_a_stack_in_europe(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CDK_DEFAULT_REGION", "eu-west-1")
    with pytest.raises(SystemExit, match=r"global\.anthropic\.claude-haiku-4-5"):
        build_app({"docagent": {"model_id": US_PROFILE}})
