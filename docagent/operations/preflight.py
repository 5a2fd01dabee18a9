"""``docagent preflight [--aws] [--invoke] [--documents N] [--usage FILE] [--json]``: is this account (or the
local cloud) ready for a job, and how long and how much a job of N documents (default: the config's
max_documents) takes at the quotas the config states (docagent/drills/job_estimate.py, which the CLI adds)?

One line per check with the fix when it is not ok; exit 0 when no check fails, 1 otherwise. Without ``--aws``
it checks the running local cloud (the AWS-only checks say so); with ``--aws`` the account and region of the
standard AWS configuration (its Region: ``AWS_REGION``, else boto3's ``AWS_DEFAULT_REGION`` or the profile's).
``--invoke`` makes one tiny Converse call (maxTokens 5) per model to prove model access: run by an
administrator before the first job (``make deploy`` does), that first call of a model also subscribes the
account to it (AWS Marketplace; see functions/inference/converse.py ``model_access_fix``). ``--definition
FOLDER`` adds the models of that job definition (job.json ``models``) to the deployment's.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError
from rich.text import Text

from docagent import project
from docagent.kit.loader import DefinitionInvalid, read_bundle
from docagent.kit.registry import current_bundle
from docagent.operations.context import EXIT_JOB_FAILED, EXIT_OK, OperatorError, command, emit
from docagent.operations.display import wide_console
from docagent.operations.json_shapes import ModelCost
from docagent.operations.model_costs import lines as cost_lines
from docagent.operations.preflight_check import Check, error_code, skipped
from docagent.operations.preflight_models import ModelChecks
from docagent.operations.reference import lookup_checks, reference_warnings
from docagent.operations.sessions import aws_session, new_session
from stacks import outputs as names
from stacks.config import ConfigError, DocAgentConfig, load_config
from stacks.powertools import POWERTOOLS_VERSION, powertools_layer_parameter

# The bootstrap stack version the CDK v2 default synthesizer requires when cdk.out says nothing (as of
# 2026-11, AWS CDK docs "Bootstrapping your environment": templates check BootstrapVersion >= 6).
DEFAULT_REQUIRED_BOOTSTRAP = 6


class Preflight(ModelChecks):
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
        definition_models: list[str] | None = None,
    ) -> None:
        self.config = config
        self.client = client
        self.region = region
        self.on_aws = on_aws
        self.invoke = invoke
        self.required_bootstrap = required_bootstrap
        self.local_outputs = local_outputs
        self.deployed_outputs: dict[str, str] | None = None  # read by stack_outputs on AWS
        # Every model a job may call: the deployment's, then the definition's (job.json models).
        self.models = list(dict.fromkeys([*config.model_ids(), *(definition_models or [])]))
        self.batch_model = (definition_models or [config.model_id])[0]

    def run(self) -> list[Check]:
        checks = [self.credentials()]
        if checks[0].status == "fail":
            return checks
        for check in (
            self.bootstrap,
            self.model_lifecycle,
            self.model_offered,
            self.model_access,
            self.batch_inference,
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
                checks.append(Check(name, "fail", f"{error_code(error)}: {error}", "see the error; retry"))
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
                f"{error_code(error)}: {error}",
                "configure credentials (aws configure, AWS_PROFILE or SSO login)"
                if self.on_aws
                else "start the local cloud: `docagent local up --detach`",
            )
        return Check(
            "credentials", "ok", f"account {identity['Account']} as {identity['Arn']} in {self.region}"
        )

    def bootstrap(self) -> Check:
        if not self.on_aws:
            return skipped("bootstrap", "the local cloud needs no CDK bootstrap stack")
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
            if error_code(error) != "ParameterNotFound":
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
            return skipped("lambda_concurrency", "the local runtime starts workers on demand")
        limit = self.client("lambda").get_account_settings()["AccountLimit"]
        unreserved = int(limit.get("UnreservedConcurrentExecutions", 0))
        needed = self.config.functions_in_flight  # every Map's children at once, and the job-level steps
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
            return skipped("reference_data", "the stack is not deployed")
        # cdk.json's default_definition (stacks/config.py): the definition a job runs unless it names one.
        name = str(getattr(self.config, "default_definition", "") or "")
        if not name:
            return skipped("reference_data", "no default definition (cdk.json default_definition)")
        bundle = current_bundle(self.client("s3"), bucket, name)
        if bundle is None:
            return skipped("reference_data", f"definition {name} is not published")
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


def definition_models(folder: str) -> list[str] | None:
    """The models job.json ``models`` names in a definition folder (None when it names none)."""
    try:
        return read_bundle(folder).definition.models
    except DefinitionInvalid as error:
        raise OperatorError(str(error)) from None


@command
def cmd_preflight(args: argparse.Namespace) -> int:
    config = _config()
    models = definition_models(args.definition) if args.definition else None
    if args.aws:
        session = aws_session()
        region = session.region_name
        preflight = Preflight(
            config,
            session.client,  # type: ignore[arg-type]
            region=region,
            on_aws=True,
            invoke=args.invoke,
            required_bootstrap=required_bootstrap_version(),
            definition_models=models,
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
            definition_models=models,
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
        rows = [ModelCost.model_validate(row) for row in report["estimate"]["per_1000"]]
        for line in cost_lines(rows):
            out.print(Text(f"    {line}"))
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
        help="make one tiny Converse call per model to prove model access (run it as an administrator before "
        "the first job: the first call subscribes the account to the model)",
    )
    parser.add_argument(
        "--definition",
        metavar="FOLDER",
        help="a job definition folder: its job.json models are checked (and invoked) too",
    )
    parser.add_argument("--endpoint", help="the local cloud's endpoint (default: the running one)")
    parser.set_defaults(handler=cmd_preflight)
