#!/usr/bin/env python3
"""The CDK app: `python app.py` (or `cdk synth`) writes cdk.out/<stack name>.template.json."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import stacks  # noqa: F401 (first: stacks/__init__.py quiets jsii's Node banner before aws_cdk starts jsii)

# isort: split
import aws_cdk as cdk
from cdk_nag import AwsSolutionsChecks

from stacks.config import CONTEXT_KEY, cdk_json_context, load_config, profile_region_problem
from stacks.docagent_stack import DocAgentStack

REPO_ROOT = Path(__file__).resolve().parent
# Without the CLI, CDK would synthesize into a temporary directory.
DEFAULT_OUTDIR = REPO_ROOT / "cdk.out"


def build_app(
    context: Mapping[str, Any] | None = None, *, outdir: str | None = None
) -> tuple[cdk.App, DocAgentStack]:
    """Build, without synthesizing, the app with cdk-nag's AwsSolutions checks registered.

    ``context`` entries replace cdk.json's top-level context entries (pass a whole ``docagent`` object).
    Under the CDK CLI its own context (cdk.json, cdk.context.json, ``-c``) still takes precedence.
    """
    app = cdk.App(context={**cdk_json_context(), **(context or {})}, outdir=outdir)
    config = load_config(app.node.try_get_context(CONTEXT_KEY))
    # The CDK CLI sets CDK_DEFAULT_REGION from the deployer's profile: a model the Region cannot call is
    # refused here, before a deploy that would fail every model call (stacks/config.py).
    problem = profile_region_problem(config.model_id, os.environ.get("CDK_DEFAULT_REGION"))
    if problem and config.model_provider == "bedrock":
        raise SystemExit(f"cdk.json: {problem}")
    stack = DocAgentStack(app, config.stack_name, config=config)
    # cdk-nag 3 is a validation plugin: unacknowledged error findings fail synthesis.
    cdk.Validations.of(app).add_plugins(
        AwsSolutionsChecks(app, verbose=True, write_suppressions_to_cloud_formation=True)
    )
    return app, stack


def main() -> None:
    # The CLI says where it wants the assembly (CDK_OUTDIR); a plain `python app.py` gets cdk.out/.
    app, _ = build_app(outdir=None if "CDK_OUTDIR" in os.environ else str(DEFAULT_OUTDIR))
    app.synth()


if __name__ == "__main__":
    main()
