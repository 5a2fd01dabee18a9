"""The local profile adds to cdk.json's `actions` instead of replacing them (#40): a team's own hosts,
destinations and secrets are allowed locally as on AWS; only `tickets` becomes the local ticket service."""

from __future__ import annotations

from docagent.localcloud.synth import LOCAL_PROFILE, merged_actions


def test_the_local_profile_adds_to_the_deployments_actions() -> None:
    deployed = {
        "hosts": ["hooks.team.example"],
        "destinations": {"tickets": "ledger", "crm": "https://crm.team.example/api"},
        "secrets": ["ssm:/team/"],
        "event_buses": ["team-bus"],
    }
    merged = merged_actions(deployed, LOCAL_PROFILE["actions"])  # type: ignore[arg-type]
    assert merged["hosts"] == ["hooks.team.example"]
    assert merged["secrets"] == ["ssm:/team/"]
    assert merged["destinations"]["crm"] == "https://crm.team.example/api"
    assert merged["destinations"]["tickets"] != "ledger"  # the local ticket service
    assert merged["event_buses"][0] == "team-bus" and len(merged["event_buses"]) == 2
    assert merged["topics"] == LOCAL_PROFILE["actions"]["topics"]  # type: ignore[index]
