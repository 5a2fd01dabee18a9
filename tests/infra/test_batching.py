"""documents_per_child 10 synthesized: the ASL CloudFormation would render, cfn-lint and cdk-nag clean."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cdk_nag import AwsSolutionsChecks
from cfnlint.api import lint  # type: ignore[import-untyped]

from app import build_app
from stacks.config import CONTEXT_KEY
from stacks.workflow import PLACEHOLDER
from tests.infra.conftest import NO_BUNDLING, default_docagent_context
from tests.infra.test_compliance import LINT_REGIONS


@pytest.fixture(scope="module")
def batched(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, dict[str, Any], Path]:
    outdir = tmp_path_factory.mktemp("cdk.out.batched")
    context = {CONTEXT_KEY: {**default_docagent_context(), "documents_per_child": 10}, **NO_BUNDLING}
    app, stack = build_app(context, outdir=str(outdir))
    assembly = app.synth()
    return stack, assembly.get_stack_artifact(stack.artifact_id).template, outdir


def _rendered_definition(template: dict[str, Any], outdir: Path) -> Any:
    """The definition asset with the template's substitutions applied, as CloudFormation hands it over."""
    machine = next(
        r for r in template["Resources"].values() if r["Type"] == "AWS::StepFunctions::StateMachine"
    )
    properties = machine["Properties"]
    key = properties["DefinitionS3Location"]["Key"]
    asset = next(path for path in outdir.glob("asset.*") if path.name.split(".")[1] in key)
    substitutions = properties["DefinitionSubstitutions"]
    plain = {name: value for name, value in substitutions.items() if isinstance(value, str)}
    text = PLACEHOLDER.sub(lambda match: plain.get(match.group(1), "token"), asset.read_text())
    return json.loads(text)


def test_batched_definition_carries_the_item_batcher(batched: tuple[Any, dict[str, Any], Path]) -> None:
    _, template, outdir = batched
    review = _rendered_definition(template, outdir)["States"]["ReviewDocuments"]
    assert review["ItemBatcher"]["MaxItemsPerBatch"] == 10
    assert (
        review["ItemProcessor"]["States"]["ProcessDocument"]["Parameters"]["Payload"]["items.$"] == "$.Items"
    )


def test_batched_template_is_cfn_lint_clean(
    batched: tuple[Any, dict[str, Any], Path], tmp_path: Path
) -> None:
    _, template, _ = batched
    matches = lint(json.dumps(template), regions=LINT_REGIONS)
    assert [match for match in matches if match.rule.id.startswith("E")] == []


def test_batched_stack_is_cdk_nag_clean(batched: tuple[Any, dict[str, Any], Path]) -> None:
    stack, _, _ = batched
    report = AwsSolutionsChecks(verbose=True).validate_scope(stack)
    assert [finding.rule_name for finding in report.violations] == []
