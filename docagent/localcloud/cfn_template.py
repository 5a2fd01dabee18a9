"""Reading a synthesized CloudFormation template for the local deploy (docagent/localcloud/deploy.py): the
cloud assembly (the template and where each asset lies in cdk.out), each resource's physical name and ARN,
and the values of the intrinsic functions CDK emits (Ref, Fn::GetAtt, Fn::Join, Fn::Sub, Fn::Select,
Fn::Split), pseudo parameters and ``{{resolve:ssm:...}}`` dynamic references, as CloudFormation resolves them.
"""

from __future__ import annotations

import importlib.metadata
import json
import re
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from botocore.exceptions import ClientError

from docagent.localcloud.server import ACCOUNT_ID, REGION

# Powertools' public SSM parameters (/aws/service/powertools/python/{arch}/{runtime}/{version}) name the layer
# of a release. Locally the layer is the interpreter's own Powertools, so a parameter resolves only when it
# names the installed version: a template wanting another release fails the deploy, as the layer would differ.
POWERTOOLS_PARAMETER_PREFIX = "/aws/service/powertools/python/"


def _local_powertools_layer(parameter: str) -> str:
    wanted = parameter.rsplit("/", 1)[-1]
    installed = importlib.metadata.version("aws-lambda-powertools")
    if wanted != installed:
        raise DeployError(
            f"{{{{resolve:ssm:{parameter}}}}}: the template wants Powertools {wanted}; the local runtime "
            f"provides the installed {installed} (pin both to one version)"
        )
    arch, runtime = parameter[len(POWERTOOLS_PARAMETER_PREFIX) :].split("/")[:2]
    name = f"AWSLambdaPowertoolsPythonV3-{runtime.replace('.', '')}-{arch}"
    return f"arn:aws:lambda:{REGION}:017000801446:layer:{name}:local"


# CloudFormation dynamic references: {{resolve:service:reference}} inside any string property.
DYNAMIC_REFERENCE = re.compile(r"\{\{resolve:([a-z-]+):([^{}]+)\}\}")

# Each resource type's ARN, by its physical name.
ARN_FORMATS = {
    "AWS::S3::Bucket": "arn:aws:s3:::{name}",
    "AWS::DynamoDB::Table": f"arn:aws:dynamodb:{REGION}:{ACCOUNT_ID}:table/{{name}}",
    "AWS::Lambda::Function": f"arn:aws:lambda:{REGION}:{ACCOUNT_ID}:function:{{name}}",
    "AWS::IAM::Role": f"arn:aws:iam::{ACCOUNT_ID}:role/{{name}}",
    "AWS::Logs::LogGroup": f"arn:aws:logs:{REGION}:{ACCOUNT_ID}:log-group:{{name}}:*",
    "AWS::StepFunctions::StateMachine": f"arn:aws:states:{REGION}:{ACCOUNT_ID}:stateMachine:{{name}}",
    "AWS::SNS::Topic": f"arn:aws:sns:{REGION}:{ACCOUNT_ID}:{{name}}",
    "AWS::Events::Rule": f"arn:aws:events:{REGION}:{ACCOUNT_ID}:rule/{{name}}",
    "AWS::CloudWatch::Alarm": f"arn:aws:cloudwatch:{REGION}:{ACCOUNT_ID}:alarm:{{name}}",
    "AWS::Lambda::LayerVersion": f"arn:aws:lambda:{REGION}:{ACCOUNT_ID}:layer:{{name}}:local",
}

PSEUDO_PARAMETERS = {
    "AWS::AccountId": ACCOUNT_ID,
    "AWS::Region": REGION,
    "AWS::Partition": "aws",
    "AWS::URLSuffix": "amazonaws.com",
    "AWS::NoValue": None,
    # A stack's id ends in a UUID that CloudFormation makes per stack creation (one local deploy here).
    "AWS::StackId": f"arn:aws:cloudformation:{REGION}:{ACCOUNT_ID}:stack/DocAgent/{uuid.uuid4()}",
}


class DeployError(Exception):
    """The template cannot be deployed locally; the message says which resource and why."""


class CloudAssembly:
    """A synthesized stack: its template and where each asset's source lies in cdk.out."""

    def __init__(self, out_dir: Path, stack_name: str) -> None:
        template_path = out_dir / f"{stack_name}.template.json"
        if not template_path.exists():
            raise DeployError(f"{template_path} not found: synthesize the app first (make synth)")
        self.out_dir = out_dir
        self.template: dict[str, Any] = json.loads(template_path.read_text())
        assets = json.loads((out_dir / f"{stack_name}.assets.json").read_text())
        self._asset_by_key: dict[str, Path] = {}
        for asset in assets.get("files", {}).values():
            for destination in asset["destinations"].values():
                self._asset_by_key[destination["objectKey"]] = out_dir / asset["source"]["path"]

    def asset(self, object_key: str) -> Path:
        try:
            return self._asset_by_key[object_key]
        except KeyError:
            raise DeployError(f"asset {object_key} is not in the cloud assembly") from None


class TemplateValues:
    """A template's resources as a deploy of ``stack_name`` names them (``physical``: physical ids by logical
    id, filled in before any resource is created) and the values its properties resolve to; ``client`` gives
    the deploy's client of a service (SSM, for dynamic references)."""

    def __init__(
        self,
        assembly: CloudAssembly,
        stack_name: str,
        physical: dict[str, str],
        client: Callable[[str], Any],
    ) -> None:
        self.assembly = assembly
        self.resources: dict[str, dict[str, Any]] = assembly.template.get("Resources", {})
        self.stack_name = stack_name
        self.physical = physical
        self._client = client
        # Each SSM parameter read once a deploy: nothing the deploy creates writes one, and the template names
        # the ticket service's URL in each function's environment (7 GetParameter of one name, 2026-12-08).
        self._parameters: dict[str, str] = {}

    def physical_name(self, logical_id: str, resource: dict[str, Any]) -> str:
        explicit = {
            "AWS::S3::Bucket": "BucketName",
            "AWS::DynamoDB::Table": "TableName",
            "AWS::Lambda::Function": "FunctionName",
            "AWS::Logs::LogGroup": "LogGroupName",
            "AWS::StepFunctions::StateMachine": "StateMachineName",
            "AWS::IAM::Role": "RoleName",
            "AWS::SNS::Topic": "TopicName",
            "AWS::Events::Rule": "Name",
            "AWS::CloudWatch::Alarm": "AlarmName",
            "AWS::CloudWatch::Dashboard": "DashboardName",
        }.get(resource["Type"])
        properties = resource.get("Properties", {})
        if explicit and explicit in properties:
            return str(self.resolve(properties[explicit]))
        name = f"{self.stack_name}-{logical_id}"
        if resource["Type"] == "AWS::S3::Bucket":
            return name.lower()[:63]
        return name[:64]

    def arn(self, logical_id: str) -> str:
        resource = self.resources[logical_id]
        name = self.physical[logical_id]
        kind = resource["Type"]
        if kind not in ARN_FORMATS:
            raise DeployError(f"{logical_id}: no ARN for {kind}")
        return ARN_FORMATS[kind].format(name=name)

    def _ref(self, name: str) -> Any:
        if name in PSEUDO_PARAMETERS:
            return PSEUDO_PARAMETERS[name]
        if name not in self.resources:
            raise DeployError(f"Ref to unknown resource or parameter {name!r}")
        arn_types = ("AWS::StepFunctions::StateMachine", "AWS::SNS::Topic", "AWS::Lambda::LayerVersion")
        if self.resources[name]["Type"] in arn_types:
            return self.arn(name)
        return self.physical[name]

    def _get_att(self, logical_id: str, attribute: str) -> Any:
        if attribute == "Arn":
            return self.arn(logical_id)
        if attribute in ("Name", "TopicName"):
            return self.physical[logical_id]
        if attribute == "TopicArn":
            return self.arn(logical_id)
        raise DeployError(f"Fn::GetAtt {logical_id}.{attribute} is not supported locally")

    def resolve(self, value: Any) -> Any:
        """Evaluate the intrinsic functions CDK emits for this stack, and dynamic references."""
        if isinstance(value, list):
            return [self.resolve(item) for item in value]
        if isinstance(value, str) and "{{resolve:" in value:
            return DYNAMIC_REFERENCE.sub(self._dynamic_reference, value)
        if not isinstance(value, dict):
            return value
        if len(value) == 1:
            ((key, argument),) = value.items()
            if key == "Ref":
                return self._ref(argument)
            if key == "Fn::GetAtt":
                logical_id, attribute = argument if isinstance(argument, list) else argument.split(".", 1)
                return self._get_att(logical_id, attribute)
            if key == "Fn::Join":
                separator, parts = argument
                return self.resolve(separator.join(str(self.resolve(part)) for part in self.resolve(parts)))
            if key == "Fn::Sub":
                template, variables = (argument, {}) if isinstance(argument, str) else argument
                variables = {name: self.resolve(v) for name, v in variables.items()}
                return self.resolve(
                    re.sub(
                        r"\$\{([^}]+)\}",
                        lambda match: str(
                            variables[match[1]] if match[1] in variables else self._sub_reference(match[1])
                        ),
                        template,
                    )
                )
            if key == "Fn::Select":
                index, items = argument
                return self.resolve(items)[int(self.resolve(index))]
            if key == "Fn::Split":
                separator, text = argument
                return str(self.resolve(text)).split(separator)
            if key.startswith("Fn::") or key == "Condition":
                raise DeployError(f"intrinsic function {key} is not supported by the local deploy")
        return {key: self.resolve(item) for key, item in value.items()}

    def _dynamic_reference(self, match: re.Match[str]) -> str:
        """``{{resolve:ssm:NAME}}`` or ``{{resolve:ssm:NAME:VERSION}}``, read from the local cloud's SSM at
        deploy time as CloudFormation does; other services' references are not supported locally."""
        service, reference = match[1], match[2]
        if service == "ssm" and reference.startswith(POWERTOOLS_PARAMETER_PREFIX):
            return _local_powertools_layer(reference)
        if service != "ssm":
            raise DeployError(f"dynamic reference {match[0]}: only 'ssm' references are supported locally")
        if reference not in self._parameters:
            self._parameters[reference] = self._parameter(match[0], reference)
        return self._parameters[reference]

    def _parameter(self, written: str, reference: str) -> str:
        try:
            parameter = self._client("ssm").get_parameter(Name=reference)["Parameter"]
        except ClientError as error:
            code = error.response.get("Error", {}).get("Code", "")
            raise DeployError(f"dynamic reference {written}: {code or error}") from None
        if parameter.get("Type") == "SecureString":
            raise DeployError(f"dynamic reference {written}: a SecureString needs 'ssm-secure'")
        return str(parameter["Value"])

    def _sub_reference(self, name: str) -> Any:
        if "." in name:
            logical_id, attribute = name.split(".", 1)
            return self._get_att(logical_id, attribute)
        return self._ref(name)
