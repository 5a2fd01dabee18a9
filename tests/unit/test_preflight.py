"""`docagent preflight --aws`: the AWS-only checks against botocore Stubbers (nothing calls AWS)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from docagent.operations.preflight import Preflight
from stacks.config import DEFAULT_MODEL_ID, load_config, profile_region_problem
from stacks.powertools import POWERTOOLS_VERSION, powertools_layer_parameter

REGION = "us-east-1"
MODEL = "us.anthropic.claude-haiku-4-5-20251001-v1:0"
BASE = "anthropic.claude-haiku-4-5-20251001-v1:0"
SERVICES = (
    "sts",
    "cloudformation",
    "bedrock",
    "ssm",
    "lambda",
    "service-quotas",
    "bedrock-runtime",
    "dynamodb",
)


class Account:
    """One stubbed client per service; ``preflight()`` runs the checks with them."""

    def __init__(self) -> None:
        self.clients = {
            name: boto3.client(name, region_name=REGION, aws_access_key_id="a", aws_secret_access_key="b")  # type: ignore[call-overload]
            for name in SERVICES
        }
        self.stubs = {name: Stubber(client) for name, client in self.clients.items()}

    def preflight(self, *, invoke: bool = False, **config: Any) -> dict[str, Any]:
        for stub in self.stubs.values():
            stub.activate()
        checks = Preflight(
            load_config({"model_id": MODEL, "extra_model_ids": [], **config}),  # one model stubbed
            self.clients.__getitem__,
            region=REGION,
            on_aws=True,
            invoke=invoke,
            required_bootstrap=6,
        ).run()
        for stub in self.stubs.values():
            stub.assert_no_pending_responses()
        return {check.name: check for check in checks}

    def healthy(
        self,
        *,
        lifecycle: str = "ACTIVE",
        bootstrap: int = 21,
        rpm: int | None = 400,
        tpm: int = 2_000_000,
        outputs: dict[str, str] | None = None,
    ) -> Account:
        self.stubs["sts"].add_response(
            "get_caller_identity", {"Account": "123456789012", "Arn": "arn:aws:iam::123456789012:user/op"}
        )
        self.stubs["cloudformation"].add_response(
            "describe_stacks",
            {"Stacks": [_stack("CDKToolkit", {"BootstrapVersion": str(bootstrap)})]},
            {"StackName": "CDKToolkit"},
        )
        eol = dt.datetime(2027, 3, 1, tzinfo=dt.UTC)
        self.stubs["bedrock"].add_response(
            "get_foundation_model",
            {
                "modelDetails": {
                    "modelArn": f"arn:aws:bedrock:{REGION}::foundation-model/{BASE}",
                    "modelId": BASE,
                    "inferenceTypesSupported": ["INFERENCE_PROFILE"],
                    "modelLifecycle": {"status": lifecycle, "endOfLifeTime": eol},
                }
            },
            {"modelIdentifier": BASE},
        )
        self.stubs["bedrock"].add_response(
            "get_inference_profile",
            {
                "inferenceProfileName": "US Claude Haiku 4.5",
                "inferenceProfileArn": f"arn:aws:bedrock:{REGION}:123456789012:inference-profile/{MODEL}",
                "inferenceProfileId": MODEL,
                "status": "ACTIVE",
                "type": "SYSTEM_DEFINED",
                "models": [
                    {"modelArn": f"arn:aws:bedrock:{region}::foundation-model/{BASE}"}
                    for region in ("us-east-1", "us-east-2", "us-west-2")
                ],
            },
            {"inferenceProfileIdentifier": MODEL},
        )
        self.stubs["ssm"].add_response(
            "get_parameter",
            {
                "Parameter": {
                    "Name": powertools_layer_parameter(),
                    "Value": f"arn:aws:lambda:{REGION}:017000801446:layer:"
                    "AWSLambdaPowertoolsPythonV3-python313-x86_64:31",
                    "Type": "String",
                }
            },
            {"Name": powertools_layer_parameter()},
        )
        self.stubs["lambda"].add_response(
            "get_account_settings",
            {"AccountLimit": {"ConcurrentExecutions": 1000, "UnreservedConcurrentExecutions": 1000}},
        )
        self.stubs["service-quotas"].add_response(
            "list_service_quotas",
            {
                "Quotas": [  # the names of 2026-12 (quotas-runtime.html); an older requests quota
                    *(
                        [
                            _quota(
                                "Cross-region model inference requests per minute for "
                                "Anthropic Claude Haiku 4.5",
                                rpm,
                            )
                        ]
                        if rpm is not None
                        else []
                    ),
                    _quota("On-demand InvokeModel tokens per minute for Anthropic Claude Haiku 4.5", 7),
                    _quota("Model invocation max tokens per day for Anthropic Claude Haiku 4.5", 8),
                    _quota("Cross-Region InvokeModel tokens per minute for Anthropic Claude Haiku 4.5", tpm),
                    _quota("On-demand InvokeModel tokens per minute for Anthropic Claude 3 Haiku", 9),
                ]
            },
            {"ServiceCode": "bedrock"},
        )
        self.stubs["cloudformation"].add_response(
            "describe_stacks",
            {"Stacks": [_stack("DocAgent", outputs or {"BucketName": "docagent-jobbucket-1"})]},
            {"StackName": "DocAgent"},
        )
        return self


def _stack(name: str, outputs: dict[str, str]) -> dict[str, Any]:
    return {
        "StackName": name,
        "CreationTime": dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
        "StackStatus": "CREATE_COMPLETE",
        "Outputs": [{"OutputKey": key, "OutputValue": value} for key, value in outputs.items()],
    }


def _quota(name: str, value: int) -> dict[str, Any]:
    return {"ServiceCode": "bedrock", "QuotaName": name, "QuotaCode": "L-1", "Value": float(value)}


@pytest.fixture
def account() -> Iterator[Account]:
    yield Account()


def test_a_ready_account_passes_every_check(account: Account) -> None:
    checks = account.healthy().preflight()
    assert {name: check.status for name, check in checks.items()} == {
        "credentials": "ok",
        "bootstrap": "ok",
        "model_lifecycle": "ok",
        "model_offered": "ok",
        "model_access": "ok",  # skipped without --invoke
        "batch_inference": "ok",  # a us. profile from us-east-1
        "powertools_layer": "ok",
        "lambda_concurrency": "ok",
        "bedrock_quotas": "ok",
        "stack_outputs": "ok",
        "reference_data": "ok",  # skipped: this stack has no customers table output
    }
    assert "skipped" in checks["model_access"].detail
    assert POWERTOOLS_VERSION in checks["powertools_layer"].detail
    assert "us-east-2" in checks["model_offered"].detail
    assert "MaxConcurrency 10 with these quotas" in checks["bedrock_quotas"].detail


def test_a_legacy_model_is_a_warning_with_its_end_of_life(account: Account) -> None:
    check = account.healthy(lifecycle="LEGACY").preflight()["model_lifecycle"]
    assert (check.status, "2027-03-01" in check.detail) == ("warn", True)


def test_an_end_of_life_model_fails_with_the_fix(account: Account) -> None:
    check = account.healthy(lifecycle="EOL").preflight()["model_lifecycle"]
    assert check.status == "fail" and "Active model" in check.fix


def test_an_old_bootstrap_stack_fails(account: Account) -> None:
    check = account.healthy(bootstrap=4).preflight()["bootstrap"]
    assert check.status == "fail" and "cdk bootstrap" in check.fix


def test_a_low_request_quota_warns_of_throttling(account: Account) -> None:
    check = account.healthy(rpm=20).preflight()["bedrock_quotas"]
    assert check.status == "warn" and "ModelThrottled" in check.detail


@pytest.mark.parametrize(
    ("tpm", "rpm"), [(100_000, None), (300_000, 400), (2_000_000, 400), (9_000_000, None)]
)
def test_the_quotas_give_the_max_concurrency_the_stack_would_use(
    account: Account, tpm: int, rpm: int | None
) -> None:
    """The account's cross-Region tokens quota (not the on-demand or per-day one) through the stack's own
    function: the MaxConcurrency preflight names is the one a stack stating these quotas synthesizes."""
    check = account.healthy(tpm=tpm, rpm=rpm).preflight()["bedrock_quotas"]
    stated = {"model_tokens_per_minute": tpm} | ({"model_requests_per_minute": rpm} if rpm else {})
    expected = load_config({"model_id": MODEL, **stated}).effective_max_concurrency
    assert f"Cross-Region {tpm:,} tokens per minute" in check.detail
    assert f"MaxConcurrency {expected} with these quotas" in check.detail
    assert "5,500 quota tokens a document" in check.detail, "maxTokens 800 burned down 5 times, plus 1,500 in"
    if expected < load_config({"model_id": MODEL}).effective_max_concurrency:
        assert check.status == "warn" and f"model_tokens_per_minute={tpm}" in check.fix
    else:
        assert check.status == "ok"


def test_invoke_proves_model_access_or_says_how_to_enable_it(account: Account) -> None:
    account.healthy()
    account.stubs["bedrock-runtime"].add_client_error(
        "converse", "AccessDeniedException", "You don't have access to the model", http_status_code=403
    )
    check = account.preflight(invoke=True)["model_access"]
    assert check.status == "fail" and "first-time-use form" in check.fix
    assert "aws-marketplace:Subscribe" in check.fix and "retired" in check.fix


def test_a_missing_layer_for_the_pinned_powertools_fails(account: Account) -> None:
    stubs = account.stubs
    stubs["sts"].add_response(
        "get_caller_identity", {"Account": "123456789012", "Arn": "arn:aws:iam::1:user/o"}
    )
    stubs["cloudformation"].add_response(
        "describe_stacks", {"Stacks": [_stack("CDKToolkit", {"BootstrapVersion": "21"})]}
    )
    checks = Preflight(
        load_config({}),
        account.clients.__getitem__,
        region=REGION,
        on_aws=True,
        invoke=False,
    )
    for stub in stubs.values():
        stub.activate()
    stubs["ssm"].add_client_error("get_parameter", "ParameterNotFound", "not found", http_status_code=400)
    stubs["lambda"].add_response(
        "get_account_settings", {"AccountLimit": {"UnreservedConcurrentExecutions": 5}}
    )
    stubs["cloudformation"].add_client_error(
        "describe_stacks", "ValidationError", "Stack with id DocAgent does not exist", http_status_code=400
    )
    by_name = {check.name: check for check in checks.run()}
    assert by_name["powertools_layer"].status == "fail"
    assert powertools_layer_parameter().rsplit("/", 1)[0] in by_name["powertools_layer"].fix
    assert by_name["lambda_concurrency"].status == "fail"
    assert by_name["stack_outputs"].status == "warn"


def test_no_credentials_stops_at_the_first_check(account: Account) -> None:
    account.stubs["sts"].add_client_error("get_caller_identity", "InvalidClientTokenId", "bad token", 403)
    checks = account.preflight()
    assert list(checks) == ["credentials"] and checks["credentials"].status == "fail"


def test_reference_data_needs_a_default_definition(account: Account) -> None:
    """Which reference tables to check comes from the default definition's lookup checks (with one published:
    tests/unit/test_reference.py); without a default definition there is nothing to check."""
    healthy = account.healthy(outputs={"BucketName": "b", "ReferenceTableName": "DocAgent-References"})
    check = healthy.preflight()["reference_data"]
    assert (check.status, check.detail) == (
        "ok",
        "skipped: no default definition (cdk.json default_definition)",
    )


def test_a_profile_the_stacks_region_cannot_call_is_refused_before_any_call() -> None:
    """#40: the default is the global profile; a geography's profile in another geography is refused."""
    assert DEFAULT_MODEL_ID.startswith("global.")
    for region in ("us-east-1", "eu-west-1", "ap-southeast-1", "sa-east-1"):
        assert profile_region_problem(DEFAULT_MODEL_ID, region) is None, region
    us = "us.anthropic.claude-haiku-4-5-20251001-v1:0"
    assert profile_region_problem(us, "us-west-2") is None
    refused = profile_region_problem(us, "eu-central-1")
    assert refused is not None and "global.anthropic.claude-haiku-4-5-20251001-v1:0" in refused
    assert profile_region_problem("eu.anthropic.claude-haiku-4-5-20251001-v1:0", "eu-west-3") is None
    assert profile_region_problem("jp.anthropic.claude-haiku-4-5-20251001-v1:0", "ap-southeast-1") is not None
    assert profile_region_problem("anthropic.claude-3-haiku-20240307-v1:0", "eu-west-1") is None
    assert profile_region_problem(us, None) is None  # no Region known: preflight asks AWS
