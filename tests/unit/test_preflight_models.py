"""`docagent preflight --aws`: every model a job may call is checked and invoked (`make deploy` runs it with
--invoke and the JOB it deploys), batch inference's acceptance of the model, the fan-in Maps in the
concurrency sum, and the Region from AWS_REGION. botocore Stubbers: nothing calls AWS."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from docagent import project
from docagent.cli import build_parser
from docagent.operations import preflight as preflight_module
from docagent.operations.preflight import Preflight
from docagent.operations.sessions import aws_session
from functions.batch_inference.facts import batch_acceptance
from stacks.config import load_config

REGION = "us-east-1"
CHEAP = "us.anthropic.claude-3-haiku-20240307-v1:0"
STRONG = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
MAIN = "us.anthropic.claude-haiku-4-5-20251001-v1:0"


def _clients(*services: str) -> tuple[dict[str, Any], dict[str, Stubber]]:
    clients = {
        name: boto3.client(name, region_name=REGION, aws_access_key_id="a", aws_secret_access_key="b")  # type: ignore[call-overload]
        for name in services
    }
    return clients, {name: Stubber(client) for name, client in clients.items()}


def _preflight(
    clients: dict[str, Any], *, definition_models: list[str] | None = None, **config: Any
) -> Preflight:
    return Preflight(
        load_config({"model_id": MAIN, "extra_model_ids": [], **config}),  # the models each test names
        clients.__getitem__,
        region=REGION,
        on_aws=True,
        invoke=True,
        definition_models=definition_models,
    )


def _converse_ok(stub: Stubber, model: str) -> None:
    stub.add_response(
        "converse",
        {
            "output": {"message": {"role": "assistant", "content": [{"text": "OK"}]}},
            "stopReason": "end_turn",
            "usage": {"inputTokens": 9, "outputTokens": 1, "totalTokens": 10},
            "metrics": {"latencyMs": 10},
        },
        {
            "modelId": model,
            "messages": [{"role": "user", "content": [{"text": "Reply OK."}]}],
            "inferenceConfig": {"maxTokens": 5, "temperature": 0.0},
        },
    )


def test_invoke_calls_every_model_and_names_the_one_to_enable() -> None:
    """M1/M2: model_id, extra_model_ids and the definition's [cheap, strong] are each called once; the one
    that refuses is named with what to enable, the others stay proven."""
    clients, stubs = _clients("bedrock-runtime")
    runtime = stubs["bedrock-runtime"]
    _converse_ok(runtime, MAIN)
    _converse_ok(runtime, CHEAP)
    runtime.add_client_error("converse", "AccessDeniedException", "no access to the model", 403)
    with runtime:
        check = _preflight(
            clients, extra_model_ids=[CHEAP, STRONG], definition_models=[CHEAP, STRONG]
        ).model_access()
        runtime.assert_no_pending_responses()
    assert check.status == "fail"
    assert f"{MAIN} answered" in check.detail and f"{CHEAP} answered" in check.detail
    assert f"{STRONG}: AccessDeniedException" in check.detail
    assert STRONG in check.fix and "aws-marketplace:Subscribe" in check.fix and MAIN not in check.fix


def test_each_models_lifecycle_and_offer_are_checked() -> None:
    """M2: the strong model of a definition is checked as model_id is: its lifecycle and its profile."""
    clients, stubs = _clients("bedrock")
    bedrock = stubs["bedrock"]
    for model, status in ((MAIN, "ACTIVE"), (STRONG, "EOL")):
        base = model.split(".", 1)[1]
        bedrock.add_response(
            "get_foundation_model",
            {
                "modelDetails": {
                    "modelArn": f"arn:aws:bedrock:{REGION}::foundation-model/{base}",
                    "modelId": base,
                    "modelLifecycle": {"status": status},
                }
            },
            {"modelIdentifier": base},
        )
    for model in (MAIN, STRONG):
        bedrock.add_response(
            "get_inference_profile",
            {
                "inferenceProfileName": model,
                "inferenceProfileArn": f"arn:aws:bedrock:{REGION}:123456789012:inference-profile/{model}",
                "inferenceProfileId": model,
                "status": "ACTIVE",
                "type": "SYSTEM_DEFINED",
                "models": [{"modelArn": f"arn:aws:bedrock:us-west-2::foundation-model/{model}"}],
            },
            {"inferenceProfileIdentifier": model},
        )
    with bedrock:
        preflight = _preflight(clients, definition_models=[MAIN, STRONG])
        lifecycle, offered = preflight.model_lifecycle(), preflight.model_offered()
        bedrock.assert_no_pending_responses()
    assert (
        lifecycle.status == "fail" and "claude-sonnet-4-5-20250929-v1:0 lifecycle is EOL" in lifecycle.detail
    )
    assert offered.status == "ok" and f"profile {STRONG} routes to us-west-2" in offered.detail


def test_make_deploy_runs_preflight_invoking_the_models_of_the_job_it_deploys(tmp_path: Path) -> None:
    """M1: the deploy recipe's preflight (printed by make -n) invokes, and its --definition is the JOB the
    recipe publishes: the models its job.json names are among those invoked."""
    job = tmp_path / "two-models"
    shutil.copytree(project.ROOT / "examples" / "invoices", job)
    definition = json.loads((job / "job.json").read_text())
    (job / "job.json").write_text(json.dumps({**definition, "models": [CHEAP, STRONG]}))
    printed = subprocess.run(
        ["make", "-n", "-o", ".venv/.installed", "-o", "node_modules/.installed", "deploy", f"JOB={job}"],
        cwd=project.ROOT,
        # as a shell runs it, not as a recipe of `make test` would (make[1]: Entering directory ...)
        env={k: v for k, v in os.environ.items() if k not in {"MAKELEVEL", "MAKEFLAGS", "MFLAGS"}},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    line = next(line for line in printed if " preflight " in line)
    assert printed.index(line) == 0, "preflight runs before cdk deploy"
    argv = line.split()[1:]
    args = build_parser().parse_args(argv)
    assert (args.handler, args.aws, args.invoke) == (preflight_module.cmd_preflight, True, True)
    assert preflight_module.definition_models(args.definition) == [CHEAP, STRONG]
    assert any(f"definition publish {job}" in line for line in printed)
    preflight = _preflight({}, definition_models=[CHEAP, STRONG])
    assert preflight.models == [MAIN, CHEAP, STRONG] and preflight.batch_model == CHEAP


@pytest.mark.parametrize(
    ("model", "region", "accepted"),
    [
        ("global.anthropic.claude-haiku-4-5-20251001-v1:0", "us-east-1", False),
        ("us.anthropic.claude-haiku-4-5-20251001-v1:0", "us-east-1", True),
        ("eu.anthropic.claude-haiku-4-5-20251001-v1:0", "eu-west-3", True),
        ("apac.anthropic.claude-haiku-4-5-20251001-v1:0", "ap-southeast-3", False),
        ("anthropic.claude-3-haiku-20240307-v1:0", "us-east-1", None),
    ],
)
def test_batch_acceptance_by_profile_and_region(model: str, region: str, accepted: bool | None) -> None:
    assert batch_acceptance(model, region)[0] is accepted


def test_preflight_says_a_global_profile_would_run_batch_jobs_on_demand() -> None:
    """M3: the default global profile is in no row of batch inference's table: preflight says that batch
    jobs would run on-demand, and names the geographic profile that is listed here."""
    check = _preflight({}, model_id="global.anthropic.claude-haiku-4-5-20251001-v1:0").batch_inference()
    assert check.status == "warn" and "on-demand" in check.detail
    assert "us.anthropic.claude-haiku-4-5-20251001-v1:0" in check.detail
    listed = _preflight({}, definition_models=[CHEAP, STRONG]).batch_inference()
    assert listed.status == "ok" and CHEAP in listed.detail


def test_the_fan_in_maps_count_in_the_lambda_concurrency_needed() -> None:
    """M4: ReportPartitions and VerifyPartitions run fan_in_max_concurrency children, counted with the
    documents' children: 45 unreserved is short of 10 + 40 + 2."""
    clients, stubs = _clients("lambda")
    stubs["lambda"].add_response(
        "get_account_settings", {"AccountLimit": {"UnreservedConcurrentExecutions": 45}}
    )
    with stubs["lambda"]:
        check = _preflight(clients, max_concurrency=10, fan_in_max_concurrency=40).lambda_concurrency()
    assert check.status == "fail" and "needs up to 52" in check.detail


def test_aws_region_alone_names_the_region(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """m1: with only AWS_REGION set (docs/deploying.md), the session preflight and the --aws commands use
    is in that Region; AWS_REGION wins over AWS_DEFAULT_REGION, as in the AWS CLI."""
    for name in ("AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_DEFAULT_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_REGION", "eu-west-3")
    assert aws_session().region_name == "eu-west-3"
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-west-2")
    assert aws_session().region_name == "eu-west-3"
    monkeypatch.delenv("AWS_REGION")
    assert aws_session().region_name == "us-west-2"
