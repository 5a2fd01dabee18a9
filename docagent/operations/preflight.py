"""``docagent preflight [--aws] [--invoke] [--documents N] [--usage FILE] [--json]``: is this account (or the
local cloud) ready for a job, and how long and how much a job of N documents (default: the config's
max_documents) takes at the quotas the config states (docagent/drills/job_estimate.py, which the CLI adds)?

One line per check with the fix when it is not ok; exit 0 when no check fails, 1 otherwise. Without ``--aws``
it checks the running local cloud (the AWS-only checks say so); with ``--aws`` the account and region of the
standard AWS configuration. ``--invoke`` makes one tiny Converse call (maxTokens 5) to prove model access:
run by an administrator before the first job, that first call of the model also subscribes the account to it
(AWS Marketplace; see functions/inference/converse.py ``model_access_fix``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from botocore.exceptions import BotoCoreError, ClientError
from rich.text import Text

from docagent import project
from docagent.kit.registry import current_bundle
from docagent.operations.context import EXIT_JOB_FAILED, EXIT_OK, OperatorError, command, emit
from docagent.operations.display import wide_console
from docagent.operations.reference import lookup_checks, reference_warnings
from docagent.operations.sessions import new_session
from functions.inference.converse import model_access_fix
from stacks import outputs as names
from stacks.config import (
    INFERENCE_PROFILE_PREFIXES,
    ConfigError,
    DocAgentConfig,
    load_config,
    profile_region_problem,
)
from stacks.powertools import POWERTOOLS_VERSION, powertools_layer_parameter

Status = Literal["ok", "warn", "fail"]
# The bootstrap stack version the CDK v2 default synthesizer requires when cdk.out says nothing (as of
# 2026-11, AWS CDK docs "Bootstrapping your environment": templates check BootstrapVersion >= 6).
DEFAULT_REQUIRED_BOOTSTRAP = 6


@dataclass(frozen=True)
class Check:
    name: str
    status: Status
    detail: str
    fix: str = ""


def _skipped(name: str, why: str) -> Check:
    return Check(name, "ok", f"skipped: {why}")


def _error_code(error: Exception) -> str:
    if isinstance(error, ClientError):
        return str(error.response.get("Error", {}).get("Code", "")) or type(error).__name__
    return type(error).__name__


def base_model_id(model_id: str) -> str:
    """The foundation model of an inference profile id (``us.anthropic.x`` → ``anthropic.x``)."""
    geography, _, rest = model_id.partition(".")
    return rest if rest and geography in INFERENCE_PROFILE_PREFIXES else model_id


def is_profile(model_id: str) -> bool:
    return base_model_id(model_id) != model_id


class Preflight:
    """The checks, each a method returning a Check; ``client(service)`` makes the boto3 clients."""

    def __init__(
        self,
        config: DocAgentConfig,
        client: Callable[[str], Any],
        *,
        region: str | None,
        on_aws: bool,
        invoke: bool,
        required_bootstrap: int = DEFAULT_REQUIRED_BOOTSTRAP,
        local_outputs: dict[str, str] | None = None,
    ) -> None:
        self.config = config
        self.client = client
        self.region = region
        self.on_aws = on_aws
        self.invoke = invoke
        self.required_bootstrap = required_bootstrap
        self.local_outputs = local_outputs
        self.deployed_outputs: dict[str, str] | None = None  # read by stack_outputs on AWS

    def run(self) -> list[Check]:
        checks = [self.credentials()]
        if checks[0].status == "fail":
            return checks
        for check in (
            self.bootstrap,
            self.model_lifecycle,
            self.model_offered,
            self.model_access,
            self.powertools_layer,
            self.lambda_concurrency,
            self.bedrock_quotas,
            self.stack_outputs,
            self.reference_data,
        ):
            try:
                checks.append(check())
            except (ClientError, BotoCoreError) as error:
                name = check.__name__
                checks.append(Check(name, "fail", f"{_error_code(error)}: {error}", "see the error; retry"))
        return checks

    # -- account ----------------------------------------------------------------------------------

    def credentials(self) -> Check:
        if not self.region:
            return Check(
                "credentials", "fail", "no region configured", "set AWS_REGION (or a profile's region)"
            )
        try:
            identity = self.client("sts").get_caller_identity()
        except (ClientError, BotoCoreError) as error:
            return Check(
                "credentials",
                "fail",
                f"{_error_code(error)}: {error}",
                "configure credentials (aws configure, AWS_PROFILE or SSO login)"
                if self.on_aws
                else "start the local cloud: `docagent local up --detach`",
            )
        return Check(
            "credentials", "ok", f"account {identity['Account']} as {identity['Arn']} in {self.region}"
        )

    def bootstrap(self) -> Check:
        if not self.on_aws:
            return _skipped("bootstrap", "the local cloud needs no CDK bootstrap stack")
        fix = f"npx cdk bootstrap aws://ACCOUNT/{self.region}"
        try:
            stacks = self.client("cloudformation").describe_stacks(StackName="CDKToolkit")["Stacks"]
        except ClientError as error:
            if "does not exist" in str(error):
                return Check("bootstrap", "fail", f"no CDKToolkit stack in {self.region}", fix)
            raise
        outputs = {o["OutputKey"]: o["OutputValue"] for o in stacks[0].get("Outputs", [])}
        version = int(outputs.get("BootstrapVersion", 0))
        if version < self.required_bootstrap:
            return Check(
                "bootstrap",
                "fail",
                f"CDKToolkit is version {version}; the template needs {self.required_bootstrap} or later",
                fix,
            )
        return Check("bootstrap", "ok", f"CDKToolkit version {version} (needs {self.required_bootstrap}+)")

    # -- the model --------------------------------------------------------------------------------

    def _foundation_model(self) -> dict[str, Any]:
        details: dict[str, Any] = self.client("bedrock").get_foundation_model(
            modelIdentifier=base_model_id(self.config.model_id)
        )["modelDetails"]
        return details

    def model_lifecycle(self) -> Check:
        model = self.config.model_id
        if self.config.model_provider != "bedrock":
            return _skipped("model_lifecycle", f"model_provider is {self.config.model_provider}")
        if not self.on_aws:
            return _skipped("model_lifecycle", "the local Bedrock serves any model id")
        fix = "pick an Active model (Bedrock console, Model catalog) and set model_id in cdk.json"
        try:
            lifecycle = self._foundation_model().get("modelLifecycle", {})
        except ClientError as error:
            if _error_code(error) in {"ResourceNotFoundException", "ValidationException"}:
                return Check("model_lifecycle", "fail", f"{model}: not offered in {self.region}", fix)
            raise
        status = str(lifecycle.get("status", "unknown"))
        if status == "ACTIVE":
            return Check("model_lifecycle", "ok", f"{base_model_id(model)} is ACTIVE")
        if status == "LEGACY":
            end = lifecycle.get("endOfLifeTime")
            when = end.date().isoformat() if isinstance(end, dt.datetime) else str(end or "not announced")
            return Check(
                "model_lifecycle", "warn", f"{base_model_id(model)} is LEGACY; end of life {when}", fix
            )
        return Check("model_lifecycle", "fail", f"{base_model_id(model)} lifecycle is {status}", fix)

    def model_offered(self) -> Check:
        model = self.config.model_id
        if self.config.model_provider != "bedrock":
            return _skipped("model_offered", f"model_provider is {self.config.model_provider}")
        if not self.on_aws:
            return _skipped("model_offered", "the local Bedrock serves any model id")
        problem = profile_region_problem(model, self.region)
        if problem:  # known before any call: the profile's geography is not the Region's
            return Check("model_offered", "fail", problem, "set model_id in cdk.json, deploy")
        if is_profile(model):
            try:
                profile = self.client("bedrock").get_inference_profile(inferenceProfileIdentifier=model)
            except ClientError as error:
                return Check(
                    "model_offered",
                    "fail",
                    f"inference profile {model}: {_error_code(error)} in {self.region}",
                    "use the profile of this region's geography (us., eu., apac., ...) or global.",
                )
            regions = sorted({m["modelArn"].split(":")[3] for m in profile.get("models", [])})
            if profile.get("status") != "ACTIVE":
                return Check("model_offered", "fail", f"profile {model} is {profile.get('status')}", "")
            return Check("model_offered", "ok", f"profile {model} routes to {', '.join(regions) or '-'}")
        types = self._foundation_model().get("inferenceTypesSupported", [])
        if "ON_DEMAND" not in types:
            return Check(
                "model_offered",
                "fail",
                f"{model} is not offered on demand in {self.region} ({', '.join(types) or 'no types'})",
                "use its cross-Region inference profile id (e.g. us." + model + ")",
            )
        return Check("model_offered", "ok", f"{model} on demand in {self.region}")

    def model_access(self) -> Check:
        if self.config.model_provider != "bedrock":
            return _skipped("model_access", f"model_provider is {self.config.model_provider}")
        if not self.invoke:
            return _skipped("model_access", "add --invoke for one tiny Converse call")
        model = self.config.model_id
        try:
            answer = self.client("bedrock-runtime").converse(
                modelId=model,
                messages=[{"role": "user", "content": [{"text": "Reply OK."}]}],
                inferenceConfig={"maxTokens": 5, "temperature": 0.0},
            )
        except ClientError as error:
            code = _error_code(error)
            if code in {"ThrottlingException", "ServiceUnavailableException"}:
                return Check("model_access", "warn", f"{model}: {code} (access not proven)", "retry later")
            fix = (
                model_access_fix(model)
                if code == "AccessDeniedException"
                else "pick a model offered in this region (model_id in cdk.json)"
            )
            return Check("model_access", "fail", f"{model}: {code}: {error}", fix)
        usage = answer.get("usage", {})
        return Check(
            "model_access", "ok", f"{model} answered ({usage.get('inputTokens', '?')} tokens in, one call)"
        )

    # -- the platform -----------------------------------------------------------------------------

    def powertools_layer(self) -> Check:
        parameter = powertools_layer_parameter(architecture=self.config.architecture)
        if not self.on_aws:
            return Check(
                "powertools_layer", "ok", f"local runtime uses the installed Powertools {POWERTOOLS_VERSION}"
            )
        try:
            arn = self.client("ssm").get_parameter(Name=parameter)["Parameter"]["Value"]
        except ClientError as error:
            if _error_code(error) != "ParameterNotFound":
                raise
            return Check(
                "powertools_layer",
                "fail",
                f"no Powertools {POWERTOOLS_VERSION} layer published in {self.region} ({parameter})",
                "pin a Powertools version with a layer here: "
                f"aws ssm get-parameters-by-path --path {parameter.rsplit('/', 1)[0]}",
            )
        return Check("powertools_layer", "ok", f"{arn} (Powertools {POWERTOOLS_VERSION})")

    def lambda_concurrency(self) -> Check:
        if not self.on_aws:
            return _skipped("lambda_concurrency", "the local runtime starts workers on demand")
        limit = self.client("lambda").get_account_settings()["AccountLimit"]
        unreserved = int(limit.get("UnreservedConcurrentExecutions", 0))
        needed = self.config.max_concurrency + 2  # the Map's children, plus the job-level steps
        detail = f"unreserved concurrency {unreserved}; a job needs up to {needed}"
        if unreserved < needed:
            return Check(
                "lambda_concurrency",
                "fail",
                detail,
                "request a Lambda concurrency increase (Service Quotas) or lower max_concurrency in cdk.json",
            )
        if unreserved < 2 * needed:
            return Check("lambda_concurrency", "warn", detail + " (little room for other jobs)")
        return Check("lambda_concurrency", "ok", detail)

    def bedrock_quotas(self) -> Check:
        """The account's real quotas through the stack's own function (DocAgentConfig.quota_concurrency):
        the MaxConcurrency they carry, against the one the configured stack uses."""
        if self.config.model_provider != "bedrock":
            return _skipped("bedrock_quotas", f"model_provider is {self.config.model_provider}")
        if not self.on_aws:
            return _skipped("bedrock_quotas", "the local Bedrock has no quotas (throttle faults stand in)")
        rpm, tpm = self._model_quotas()
        kind = "Cross-Region" if is_profile(self.config.model_id) else "On-demand"
        if tpm is None:
            return Check(
                "bedrock_quotas",
                "warn",
                f"no tokens-per-minute quota found for {self.config.model_id}",
                f'see Service Quotas > Amazon Bedrock: "{kind} InvokeModel tokens per minute for <model>"',
            )
        real = self.config.model_copy(
            update={"model_tokens_per_minute": tpm}
            | ({"model_requests_per_minute": rpm} if rpm is not None else {})
        )
        carried, configured = real.effective_max_concurrency, self.config.effective_max_concurrency
        detail = (
            f"{kind} {tpm:,} tokens per minute"
            + (f", {rpm:,} requests per minute" if rpm is not None else "")
            + f"; {real.quota_tokens_per_document:,} quota tokens a document "
            f"({real.model_input_tokens_per_document:,} in + {real.model_max_output_tokens:,} out x "
            f"{real.model_output_token_burndown} burndown): "
            f"MaxConcurrency {carried} with these quotas; the configured stack uses {configured}"
        )
        if configured > carried:
            settings = f"model_tokens_per_minute={tpm}" + (
                f", model_requests_per_minute={rpm}" if rpm is not None else ""
            )
            return Check(
                "bedrock_quotas",
                "warn",
                detail + ": expect throttling, ridden out by Retry (ModelThrottled)",
                f"set {settings} in cdk.json and deploy (MaxConcurrency {carried}), or raise the quota",
            )
        return Check("bedrock_quotas", "ok", detail)

    def _model_quotas(self) -> tuple[int | None, int | None]:
        """(requests, tokens) per minute of the model's on-demand or cross-Region quota, found by name:
        "Cross-Region InvokeModel tokens per minute for Anthropic Claude Haiku 4.5" (the names of 2026-12;
        older accounts may list "Cross-region model inference requests per minute for ..." too). None where
        there is none."""
        words = [w for w in re.split(r"[-.:]", base_model_id(self.config.model_id)) if w and not w.isdigit()]
        family = [w for w in words if not re.fullmatch(r"v\d+|\d{8}", w)][1:]  # drop the provider
        version = ".".join(re.findall(r"-(\d)(?=-|$)", base_model_id(self.config.model_id))[:2])
        kind = "cross-region" if is_profile(self.config.model_id) else "on-demand"
        rpm = tpm = None
        paginator = self.client("service-quotas").get_paginator("list_service_quotas")
        for page in paginator.paginate(ServiceCode="bedrock"):
            for quota in page.get("Quotas", []):
                name = str(quota.get("QuotaName", "")).lower()
                if kind not in name or not all(word in name for word in family):
                    continue
                if version and version not in name:
                    continue
                if "requests per minute" in name and rpm is None:
                    rpm = int(quota["Value"])
                elif "tokens per minute" in name and tpm is None:
                    tpm = int(quota["Value"])
        return rpm, tpm

    def stack_outputs(self) -> Check:
        name = self.config.stack_name
        if not self.on_aws:
            if not self.local_outputs:
                return Check("stack_outputs", "warn", "not deployed locally", "docagent local deploy")
            return Check("stack_outputs", "ok", ", ".join(f"{k}={v}" for k, v in self.local_outputs.items()))
        try:
            stack = self.client("cloudformation").describe_stacks(StackName=name)["Stacks"][0]
        except ClientError as error:
            if "does not exist" in str(error):
                return Check(
                    "stack_outputs", "warn", f"{name} is not deployed in {self.region}", "make deploy"
                )
            raise
        outputs = {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}
        self.deployed_outputs = outputs
        status = str(stack.get("StackStatus", ""))
        if not status.endswith("_COMPLETE") or "ROLLBACK" in status:
            return Check("stack_outputs", "fail", f"{name} is {status}", "see the stack's events; redeploy")
        return Check(
            "stack_outputs", "ok", f"{name} {status}: " + ", ".join(f"{k}={v}" for k, v in outputs.items())
        )

    def reference_data(self) -> Check:
        """The reference tables the default definition's lookup checks read: an empty one fails that lookup
        for every document."""
        outputs = self.deployed_outputs if self.on_aws else self.local_outputs
        table_name, bucket = (outputs or {}).get(names.REFERENCE_TABLE), (outputs or {}).get(names.BUCKET)
        if not table_name or not bucket:
            return _skipped("reference_data", "the stack is not deployed")
        # cdk.json's default_definition (stacks/config.py): the definition a job runs unless it names one.
        name = str(getattr(self.config, "default_definition", "") or "")
        if not name:
            return _skipped("reference_data", "no default definition (cdk.json default_definition)")
        bundle = current_bundle(self.client("s3"), bucket, name)
        if bundle is None:
            return _skipped("reference_data", f"definition {name} is not published")
        warnings = reference_warnings(self.client("dynamodb"), table_name, bundle)
        if warnings:
            return Check(
                "reference_data",
                "warn",
                "; ".join(warnings),
                "docagent reference load FILE --table TABLE --key FIELD",
            )
        tables = ", ".join(sorted(lookup_checks(bundle))) or "none"
        return Check("reference_data", "ok", f"definition {name}: lookup tables with rows: {tables}")


def required_bootstrap_version(out_dir: Path = project.ROOT / "cdk.out") -> int:
    """What the synthesized template asks of the bootstrap stack (cdk.out/manifest.json), else the default."""
    manifest = out_dir / "manifest.json"
    if not manifest.exists():
        return DEFAULT_REQUIRED_BOOTSTRAP
    versions = [
        int(artifact.get("properties", {}).get("requiresBootstrapStackVersion", 0))
        for artifact in json.loads(manifest.read_text()).get("artifacts", {}).values()
    ]
    return max([DEFAULT_REQUIRED_BOOTSTRAP, *versions])


def _config() -> DocAgentConfig:
    context = json.loads((project.ROOT / "cdk.json").read_text()).get("context", {})
    try:
        return load_config(context.get("docagent"))
    except ConfigError as error:
        raise OperatorError(str(error)) from None


@command
def cmd_preflight(args: argparse.Namespace) -> int:
    config = _config()
    if args.aws:
        session = new_session()
        region = session.region_name
        preflight = Preflight(
            config,
            session.client,  # type: ignore[arg-type]
            region=region,
            on_aws=True,
            invoke=args.invoke,
            required_bootstrap=required_bootstrap_version(),
        )
    else:
        endpoint = args.endpoint or (project.running_cloud() or {}).get("endpoint")
        region = "us-east-1"
        session = new_session(aws_access_key_id="local", aws_secret_access_key="local", region_name=region)
        outputs = None
        if project.LOCAL_STACK_FILE.exists():
            outputs = json.loads(project.LOCAL_STACK_FILE.read_text()).get("outputs")
        preflight = Preflight(
            config,
            lambda service: session.client(service, endpoint_url=endpoint or "http://127.0.0.1:1"),  # type: ignore[call-overload]
            region=region,
            on_aws=False,
            invoke=args.invoke,
            local_outputs=outputs,
        )
    estimator = getattr(args, "estimate", None)
    estimate = estimator(args, config) if estimator is not None else None
    checks = preflight.run()
    report = {
        "ok": not any(check.status == "fail" for check in checks),
        "target": "aws" if args.aws else "local",
        "region": region,
        "model_id": config.model_id,
        "checks": [asdict(check) for check in checks],
        "estimate": estimate,
    }
    emit(args, report, lambda: _print(report))
    return EXIT_OK if report["ok"] else EXIT_JOB_FAILED


def _print(report: dict[str, Any]) -> None:
    out = wide_console()
    colours = {"ok": "green", "warn": "yellow", "fail": "bold red"}
    out.print(
        Text.assemble(
            ("preflight", "bold"), f" ({report['target']}, {report['region']}, model {report['model_id']})"
        )
    )
    for check in report["checks"]:
        colour = colours[check["status"]]
        out.print(
            Text.assemble("  ", (f"{check['status']:>4}", colour), f" {check['name']}: {check['detail']}")
        )
        if check["fix"] and check["status"] != "ok":
            out.print(f"       fix: {check['fix']}")
    if report["estimate"] is not None:
        out.print(Text.assemble(("  estimate", "bold"), f" {report['estimate']['summary']}"))
    out.print(Text("ready", "green") if report["ok"] else Text("not ready", "bold red"))


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    parser = commands.add_parser(
        "preflight", parents=[common], help="check that the account (or the local cloud) is ready for a job"
    )
    parser.add_argument(
        "--aws", action="store_true", help="check the AWS account and region, not the local cloud"
    )
    parser.add_argument(
        "--invoke",
        action="store_true",
        help="make one tiny Converse call to prove model access (run it as an administrator before the first "
        "job: the first call subscribes the account to the model)",
    )
    parser.add_argument("--endpoint", help="the local cloud's endpoint (default: the running one)")
    parser.set_defaults(handler=cmd_preflight)
