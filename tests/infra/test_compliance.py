"""cfn-lint and cdk-nag (AwsSolutions) on the synthesized template."""

from __future__ import annotations

import json
from typing import Any

from aws_cdk import Stack
from aws_cdk import aws_s3 as s3
from cdk_nag import AwsSolutionsChecks
from cfnlint.api import lint  # type: ignore[import-untyped]

from tests.infra.conftest import Synthesized

LINT_REGIONS = ["us-east-1", "eu-west-1"]
ACKNOWLEDGED_RULES_KEY = "aws:cdk:acknowledged-rules"


def test_cfn_lint_finds_no_errors(synthesized: Synthesized, tmp_path: Any) -> None:
    template_file = tmp_path / "DocAgent.template.json"
    template_file.write_text(json.dumps(synthesized.template_json), encoding="utf-8")
    matches = lint(template_file.read_text(encoding="utf-8"), regions=LINT_REGIONS)
    for match in matches:
        print(f"cfn-lint {match.rule.id}: {match.message}")  # warnings are shown, not failed on
    assert [match for match in matches if match.rule.id.startswith("E")] == []


def test_cdk_nag_finds_nothing_unacknowledged(synthesized: Synthesized) -> None:
    # cdk-nag 3 reports through CDK's validation framework, not annotations: ask the pack directly.
    report = AwsSolutionsChecks(verbose=True).validate_scope(synthesized.stack)
    findings = [
        (finding.severity, finding.rule_name, [where.construct_path for where in finding.violating_resources])
        for finding in report.violations
    ]
    assert findings == []
    assert report.success


def test_synthesis_ran_cdk_nag_and_it_passed(synthesized: Synthesized) -> None:
    report = json.loads((synthesized.outdir / "validation-report.json").read_text(encoding="utf-8"))
    assert [plugin for plugin in report["pluginReports"] if plugin.get("violations")] == []


def test_synthesis_left_no_warnings_or_errors(synthesized: Synthesized) -> None:
    messages = synthesized.assembly.get_stack_artifact(synthesized.stack.artifact_id).messages
    assert [(message.level, message.id, message.entry.data) for message in messages] == []


def test_cdk_nag_is_not_vacuous(tmp_path: Any) -> None:
    """The same pack flags an unacknowledged bucket, so a clean report above means something."""
    stack = Stack()
    s3.Bucket(stack, "Plain")
    report = AwsSolutionsChecks().validate_scope(stack)
    assert "AwsSolutions-S1" in {violation.rule_name for violation in report.violations}


def acknowledgements(synthesized: Synthesized) -> list[tuple[str, str, str]]:
    """(construct path, rule id, reason) for every acknowledgement in the stack."""
    metadata_file = synthesized.outdir / f"{synthesized.stack.artifact_id}.metadata.json"
    metadata = json.loads(metadata_file.read_text(encoding="utf-8"))
    return [
        # CDK files ids without a known plugin prefix under "Annotation::"; cdk-nag strips it again.
        (path, rule.removeprefix("Annotation::"), reason)
        for path, entries in metadata.items()
        for entry in entries
        if entry["type"] == ACKNOWLEDGED_RULES_KEY
        for rule, reason in entry["data"].items()
    ]


def test_every_acknowledgement_is_specific_and_explained(synthesized: Synthesized) -> None:
    found = acknowledgements(synthesized)
    assert found
    stack_path = f"/{synthesized.stack.stack_name}"
    for path, rule, reason in found:
        assert path != stack_path, f"stack-wide acknowledgement of {rule}"
        assert len(reason) > 40, (path, rule)
        assert rule in {"AwsSolutions-S1", "AwsSolutions-L1"} or rule.startswith(
            "AwsSolutions-IAM5[Resource::"
        ), rule


def test_acknowledgements_are_recorded_in_the_template(synthesized: Synthesized) -> None:
    recorded = {
        suppression["id"]
        for resource in synthesized.template_json["Resources"].values()
        for suppression in resource.get("Metadata", {}).get("cdk_nag", {}).get("rules_to_suppress", [])
    }
    assert {"AwsSolutions-S1", "AwsSolutions-L1", "AwsSolutions-IAM5[Resource::*]"} <= recorded
