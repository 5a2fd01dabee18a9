"""Deploy a synthesized CDK app (cdk.out) onto the local cloud: a small CloudFormation for the
resource types this product uses, creating each resource through its service's real API.

The state machine definition, the function code and every setting come from the synthesized
template and its assets, so the local run uses exactly what ``cdk deploy`` would ship.

Deploying again (the same app, or a changed one, also on a cloud restored from its journal) updates the
stack as ``cdk deploy`` would: functions get the new code and configuration, the state machine the new
definition, roles their trust policy, log groups their retention; buckets and tables are left as they are
(their data with them). Functions are invoked unqualified ($LATEST), as the template names them: a job
already running invokes the new code from its next task on, as it would on AWS, and its manifest keeps the
code version it started with (``versions.code_version``; ``inspect`` shows the drift). A resource removed
from the template is not deleted locally.
"""

from __future__ import annotations

import functools
import importlib.metadata
import io
import json
import re
import uuid
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3
from botocore.exceptions import ClientError

from docagent.kit.registry import publish_example
from docagent.localcloud.iam.enforcement import ENFORCED_TAG
from docagent.localcloud.patches import LOG_GROUP_TAG
from docagent.localcloud.server import ACCOUNT_ID, REGION
from stacks import outputs as names
from stacks.sdk_pins import (
    DOCUMENT_LAYER_PREFIX,
    SDK_LAYER_PREFIX,
    document_layer_description,
    sdk_layer_description,
)

# The public Powertools layer is not in the local cloud's account: its contents come from the
# local interpreter's site-packages (pinned to the same Powertools version in pyproject.toml).
POWERTOOLS_LAYER = re.compile(r"^arn:aws:lambda:[^:]+:017000801446:layer:AWSLambdaPowertoolsPython")

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


# Resource types with no behaviour in a local run (CDK metadata is inert; Lambda's resource policy, which
# lets EventBridge invoke a function, is not evaluated: docs/local-cloud.md "IAM"). The alert topic's KMS key
# (nothing is encrypted locally), the email subscription (no mail leaves a laptop: the local
# alert sink writes the topic's messages to alerts.jsonl and the console instead) and Logs Insights saved
# queries (moto has no query definitions) are accepted too.
ACCEPTED_WITHOUT_EFFECT = {
    "AWS::CDK::Metadata",
    "AWS::KMS::Key",
    "AWS::SNS::Subscription",
    "AWS::Logs::QueryDefinition",
    "AWS::Lambda::Permission",
}
# CloudFormation properties of AWS::CloudWatch::Alarm that PutMetricAlarm takes under the same name.
ALARM_PROPERTIES = (
    "AlarmDescription",
    "ActionsEnabled",
    "AlarmActions",
    "OKActions",
    "InsufficientDataActions",
    "MetricName",
    "Namespace",
    "Statistic",
    "ExtendedStatistic",
    "Dimensions",
    "Period",
    "Unit",
    "EvaluationPeriods",
    "DatapointsToAlarm",
    "Threshold",
    "ComparisonOperator",
    "TreatMissingData",
    "Metrics",
)

# CloudFormation dynamic references: {{resolve:service:reference}} inside any string property.
DYNAMIC_REFERENCE = re.compile(r"\{\{resolve:([a-z-]+):([^{}]+)\}\}")

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


@dataclass
class LocalStack:
    """What a local deploy created: physical ids by logical id, and the stack's outputs."""

    stack_name: str
    physical: dict[str, str] = field(default_factory=dict)
    outputs: dict[str, str] = field(default_factory=dict)
    without_effect: list[str] = field(default_factory=list)

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.__dict__, indent=2))

    @classmethod
    def load(cls, path: Path) -> LocalStack:
        return cls(**json.loads(path.read_text()))


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


def zip_directory(directory: Path) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(directory.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(directory).as_posix())
    return buffer.getvalue()


class Deployer:
    def __init__(self, assembly: CloudAssembly, stack_name: str, endpoint: str) -> None:
        self.assembly = assembly
        self.resources: dict[str, dict[str, Any]] = assembly.template.get("Resources", {})
        self.stack = LocalStack(stack_name)
        self._session = boto3.session.Session(
            aws_access_key_id="local", aws_secret_access_key="local", region_name=REGION
        )
        self._endpoint = endpoint
        self._clients: dict[str, Any] = {}
        # Each asset's zip, made once: the stack's functions share one code asset (zipping it took 22 ms
        # of CPU, once for each of the seven functions of a deploy, 2026-12-08).
        self._zips: dict[Path, bytes] = {}
        self._creators: dict[str, Callable[[str, dict[str, Any]], None]] = {
            "AWS::IAM::Role": self._role,
            "AWS::Lambda::LayerVersion": self._layer,
            "AWS::Logs::LogGroup": self._log_group,
            "AWS::S3::Bucket": self._bucket,
            "AWS::DynamoDB::Table": self._table,
            "AWS::Lambda::Function": self._function,
            "AWS::StepFunctions::StateMachine": self._state_machine,
            "AWS::SNS::Topic": self._topic,
            "AWS::Events::Rule": self._rule,
            "AWS::CloudWatch::Alarm": self._alarm,
            "AWS::CloudWatch::Dashboard": self._dashboard,
            # The policies last: what they name exists by then. The local endpoint enforces them (iam/).
            "AWS::IAM::Policy": self._policy,
            "AWS::S3::BucketPolicy": self._bucket_policy,
            "AWS::SNS::TopicPolicy": self._topic_policy,
        }

    def _client(self, service: str) -> Any:
        """One client a service for the whole deploy (a new boto3 client costs about 25 ms of CPU: the
        deploy asked for 61 of them, 1.5 s of its 5.3 s)."""
        if service not in self._clients:
            self._clients[service] = self._session.client(  # type: ignore[call-overload]
                service, endpoint_url=self._endpoint
            )
        return self._clients[service]

    # -- names and intrinsic functions ------------------------------------------------------------

    def _physical_name(self, logical_id: str, resource: dict[str, Any]) -> str:
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
        name = f"{self.stack.stack_name}-{logical_id}"
        if resource["Type"] == "AWS::S3::Bucket":
            return name.lower()[:63]
        return name[:64]

    def _arn(self, logical_id: str) -> str:
        resource = self.resources[logical_id]
        name = self.stack.physical[logical_id]
        kind = resource["Type"]
        if kind == "AWS::S3::Bucket":
            return f"arn:aws:s3:::{name}"
        if kind == "AWS::DynamoDB::Table":
            return f"arn:aws:dynamodb:{REGION}:{ACCOUNT_ID}:table/{name}"
        if kind == "AWS::Lambda::Function":
            return f"arn:aws:lambda:{REGION}:{ACCOUNT_ID}:function:{name}"
        if kind == "AWS::IAM::Role":
            return f"arn:aws:iam::{ACCOUNT_ID}:role/{name}"
        if kind == "AWS::Logs::LogGroup":
            return f"arn:aws:logs:{REGION}:{ACCOUNT_ID}:log-group:{name}:*"
        if kind == "AWS::StepFunctions::StateMachine":
            return f"arn:aws:states:{REGION}:{ACCOUNT_ID}:stateMachine:{name}"
        if kind == "AWS::SNS::Topic":
            return f"arn:aws:sns:{REGION}:{ACCOUNT_ID}:{name}"
        if kind == "AWS::Events::Rule":
            return f"arn:aws:events:{REGION}:{ACCOUNT_ID}:rule/{name}"
        if kind == "AWS::CloudWatch::Alarm":
            return f"arn:aws:cloudwatch:{REGION}:{ACCOUNT_ID}:alarm:{name}"
        if kind == "AWS::Lambda::LayerVersion":
            return f"arn:aws:lambda:{REGION}:{ACCOUNT_ID}:layer:{name}:local"
        raise DeployError(f"{logical_id}: no ARN for {kind}")

    def _ref(self, name: str) -> Any:
        if name in PSEUDO_PARAMETERS:
            return PSEUDO_PARAMETERS[name]
        if name not in self.resources:
            raise DeployError(f"Ref to unknown resource or parameter {name!r}")
        arn_types = ("AWS::StepFunctions::StateMachine", "AWS::SNS::Topic", "AWS::Lambda::LayerVersion")
        if self.resources[name]["Type"] in arn_types:
            return self._arn(name)
        return self.stack.physical[name]

    def _get_att(self, logical_id: str, attribute: str) -> Any:
        if attribute == "Arn":
            return self._arn(logical_id)
        if attribute in ("Name", "TopicName"):
            return self.stack.physical[logical_id]
        if attribute == "TopicArn":
            return self._arn(logical_id)
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
        try:
            parameter = self._client("ssm").get_parameter(Name=reference)["Parameter"]
        except ClientError as error:
            code = error.response.get("Error", {}).get("Code", "")
            raise DeployError(f"dynamic reference {match[0]}: {code or error}") from None
        if parameter.get("Type") == "SecureString":
            raise DeployError(f"dynamic reference {match[0]}: a SecureString needs 'ssm-secure'")
        return str(parameter["Value"])

    def _sub_reference(self, name: str) -> Any:
        if "." in name:
            logical_id, attribute = name.split(".", 1)
            return self._get_att(logical_id, attribute)
        return self._ref(name)

    # -- resources --------------------------------------------------------------------------------

    def _role(self, logical_id: str, properties: dict[str, Any]) -> None:
        """The role, tagged for the local endpoint's IAM (iam/enforcement.py), with its inline policies as the
        template has them (a redeploy removes the ones it no longer has) and its managed policies."""
        iam = self._client("iam")
        name = self.stack.physical[logical_id]
        trust = json.dumps(self.resolve(properties.get("AssumeRolePolicyDocument", {})))
        tags = [{"Key": ENFORCED_TAG, "Value": self.stack.stack_name}]
        existed = _exists(lambda: iam.create_role(RoleName=name, AssumeRolePolicyDocument=trust, Tags=tags))
        if existed:
            iam.update_assume_role_policy(RoleName=name, PolicyDocument=trust)
            iam.tag_role(RoleName=name, Tags=tags)
        inline = {str(p["PolicyName"]): p["PolicyDocument"] for p in properties.get("Policies", [])}
        for policy_name, document in inline.items():
            iam.put_role_policy(
                RoleName=name, PolicyName=policy_name, PolicyDocument=json.dumps(self.resolve(document))
            )
        kept = set(inline) | {
            str(self.resolve(r["Properties"]["PolicyName"]))
            for r in self.resources.values()
            if r["Type"] == "AWS::IAM::Policy" and name in self._role_names(r["Properties"])
        }
        if existed:  # a role created just now has only the policies put above: none is stale
            for stale in set(iam.list_role_policies(RoleName=name)["PolicyNames"]) - kept:
                iam.delete_role_policy(RoleName=name, PolicyName=stale)
        for arn in self.resolve(properties.get("ManagedPolicyArns", [])):
            iam.attach_role_policy(RoleName=name, PolicyArn=str(arn))

    def _role_names(self, properties: dict[str, Any]) -> list[str]:
        return [str(self.resolve(role)) for role in properties.get("Roles", [])]

    def _policy(self, logical_id: str, properties: dict[str, Any]) -> None:
        document = json.dumps(self.resolve(properties["PolicyDocument"]))
        for role in self._role_names(properties):
            self._client("iam").put_role_policy(
                RoleName=role, PolicyName=str(self.resolve(properties["PolicyName"])), PolicyDocument=document
            )

    def _bucket_policy(self, logical_id: str, properties: dict[str, Any]) -> None:
        self._client("s3").put_bucket_policy(
            Bucket=str(self.resolve(properties["Bucket"])),
            Policy=json.dumps(self.resolve(properties["PolicyDocument"])),
        )

    def _topic_policy(self, logical_id: str, properties: dict[str, Any]) -> None:
        document = json.dumps(self.resolve(properties["PolicyDocument"]))
        for topic in self.resolve(properties["Topics"]):
            self._client("sns").set_topic_attributes(
                TopicArn=str(topic), AttributeName="Policy", AttributeValue=document
            )

    def _log_group(self, logical_id: str, properties: dict[str, Any]) -> None:
        logs = self._client("logs")
        name = self.stack.physical[logical_id]
        _exists(lambda: logs.create_log_group(logGroupName=name))
        if "RetentionInDays" in properties:
            logs.put_retention_policy(logGroupName=name, retentionInDays=int(properties["RetentionInDays"]))

    def _bucket(self, logical_id: str, properties: dict[str, Any]) -> None:
        s3 = self._client("s3")
        name = self.stack.physical[logical_id]
        _exists(lambda: s3.create_bucket(Bucket=name))  # one already there keeps its objects
        if properties.get("VersioningConfiguration", {}).get("Status") == "Enabled":
            s3.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})

    def _table(self, logical_id: str, properties: dict[str, Any]) -> None:
        dynamodb = self._client("dynamodb")
        name = self.stack.physical[logical_id]
        throughput = properties.get("ProvisionedThroughput")
        created = functools.partial(
            dynamodb.create_table,
            TableName=name,
            KeySchema=properties["KeySchema"],
            AttributeDefinitions=properties["AttributeDefinitions"],
            BillingMode=properties.get("BillingMode", "PROVISIONED"),
            **({"ProvisionedThroughput": throughput} if throughput else {}),
        )
        if _exists(created):  # a table already there is left as it is, with its items
            return
        ttl = properties.get("TimeToLiveSpecification")
        if ttl and ttl.get("Enabled"):
            dynamodb.update_time_to_live(
                TableName=name,
                TimeToLiveSpecification={"Enabled": True, "AttributeName": ttl["AttributeName"]},
            )

    def _function(self, logical_id: str, properties: dict[str, Any]) -> None:
        code = properties["Code"]
        if "S3Key" not in code:
            raise DeployError(f"{logical_id}: only asset (S3Key) code is supported locally")
        layers = [str(arn) for arn in self.resolve(properties.get("Layers", []))]
        own = {self._arn(i) for i, r in self.resources.items() if r["Type"] == "AWS::Lambda::LayerVersion"}
        unknown_layers = [arn for arn in layers if not POWERTOOLS_LAYER.match(arn) and arn not in own]
        if unknown_layers:
            raise DeployError(
                f"{logical_id}: layers not Powertools' nor the stack's are not supported: {unknown_layers}"
            )
        log_group = self.resolve(properties.get("LoggingConfig", {}).get("LogGroup")) or (
            f"/aws/lambda/{self.stack.physical[logical_id]}"
        )
        client = self._client("lambda")
        name = self.stack.physical[logical_id]
        asset = self.assembly.asset(self.resolve(code["S3Key"]))
        if asset not in self._zips:
            self._zips[asset] = zip_directory(asset)
        code_zip = self._zips[asset]
        environment = {"Variables": self.resolve(properties.get("Environment", {}).get("Variables", {}))}
        configuration = {
            "FunctionName": name,
            "Runtime": properties["Runtime"],
            "Role": self.resolve(properties["Role"]),
            "Handler": properties["Handler"],
            "Timeout": int(properties.get("Timeout", 3)),
            "MemorySize": int(properties.get("MemorySize", 128)),
            "Environment": environment,
            "TracingConfig": properties.get("TracingConfig", {"Mode": "PassThrough"}),
        }
        tags = {LOG_GROUP_TAG: log_group}
        create = functools.partial(client.create_function, Code={"ZipFile": code_zip}, Tags=tags)
        if not _exists(lambda: create(**configuration)):
            return  # created
        client.update_function_code(FunctionName=name, ZipFile=code_zip)
        client.update_function_configuration(**configuration)
        client.tag_resource(Resource=self._arn(logical_id), Tags=tags)

    def _layer(self, logical_id: str, properties: dict[str, Any]) -> None:
        """The SDK layer (stacks/sdk_pins.py): locally its content is the interpreter's own boto3, so it
        deploys only when it names the installed versions, as the Powertools layer does. The document layer
        (Pillow, pypdf, ...: stacks/document_layer.py) is the interpreter's own libraries too; it deploys when
        it names constraints.txt's pins (the local synth does not bundle it: docagent/localcloud/synth.py)."""
        description = str(properties.get("Description", ""))
        if description.startswith(DOCUMENT_LAYER_PREFIX):
            if description != document_layer_description():
                raise DeployError(
                    f"{logical_id}: the template wants {description}, not constraints.txt's pins"
                )
            return
        if not description.startswith(SDK_LAYER_PREFIX):
            raise DeployError(f"{logical_id}: only the SDK and document layers are supported locally")
        if description != sdk_layer_description():
            raise DeployError(
                f"{logical_id}: the template wants {description[len(SDK_LAYER_PREFIX) :]}; the local runtime "
                f"provides the installed {sdk_layer_description()[len(SDK_LAYER_PREFIX) :]} (pin both alike)"
            )

    def _state_machine(self, logical_id: str, properties: dict[str, Any]) -> None:
        if "DefinitionS3Location" in properties:
            key = self.resolve(properties["DefinitionS3Location"]["Key"])
            definition = self.assembly.asset(key).read_text()
        elif "DefinitionString" in properties:
            definition = str(self.resolve(properties["DefinitionString"]))
        else:
            raise DeployError(f"{logical_id}: state machine without a definition")
        substitutions = self.resolve(properties.get("DefinitionSubstitutions", {}))
        for placeholder, value in substitutions.items():
            definition = definition.replace("${" + placeholder + "}", str(value))
        leftover = sorted(set(re.findall(r"\$\{(\w+)\}", definition)))
        if leftover:
            raise DeployError(f"{logical_id}: placeholders without a substitution: {leftover}")
        sfn = self._client("stepfunctions")
        definition, role = _moto_compatible(definition), self.resolve(properties["RoleArn"])
        arn = self._arn(logical_id)
        # Described first: moto answers a create of an existing name with the machine it has, whatever the
        # definition (AWS: StateMachineAlreadyExists when it differs). Executions that run keep theirs.
        if _exists(functools.partial(sfn.describe_state_machine, stateMachineArn=arn), missing=True):
            sfn.update_state_machine(stateMachineArn=arn, definition=definition, roleArn=role)
            return
        sfn.create_state_machine(
            name=self.stack.physical[logical_id],
            definition=definition,
            roleArn=role,
            type=properties.get("StateMachineType", "STANDARD"),
        )

    def _topic(self, logical_id: str, properties: dict[str, Any]) -> None:
        # KmsMasterKeyId is left out: the key is accepted without effect (nothing is encrypted locally).
        self._client("sns").create_topic(Name=self.stack.physical[logical_id])

    def _rule(self, logical_id: str, properties: dict[str, Any]) -> None:
        events = self._client("events")
        name = self.stack.physical[logical_id]
        events.put_rule(
            Name=name,
            EventPattern=json.dumps(self.resolve(properties["EventPattern"])),
            State=properties.get("State", "ENABLED"),
            Description=properties.get("Description", ""),
        )
        targets = self.resolve(properties.get("Targets", []))
        if targets:
            events.put_targets(Rule=name, Targets=targets)

    def _alarm(self, logical_id: str, properties: dict[str, Any]) -> None:
        arguments = {key: self.resolve(properties[key]) for key in ALARM_PROPERTIES if key in properties}
        self._client("cloudwatch").put_metric_alarm(AlarmName=self.stack.physical[logical_id], **arguments)

    def _dashboard(self, logical_id: str, properties: dict[str, Any]) -> None:
        self._client("cloudwatch").put_dashboard(
            DashboardName=self.stack.physical[logical_id],
            DashboardBody=str(self.resolve(properties["DashboardBody"])),
        )

    # -- the whole stack --------------------------------------------------------------------------

    def deploy(self) -> LocalStack:
        unsupported = sorted(
            {
                f"{resource['Type']} ({logical_id})"
                for logical_id, resource in self.resources.items()
                if resource["Type"] not in self._creators and resource["Type"] not in ACCEPTED_WITHOUT_EFFECT
            }
        )
        if unsupported:
            raise DeployError("the local cloud cannot create: " + ", ".join(unsupported))
        for logical_id, resource in self.resources.items():
            self.stack.physical[logical_id] = self._physical_name(logical_id, resource)
        for kind, create in self._creators.items():
            for logical_id, resource in self.resources.items():
                if resource["Type"] == kind:
                    create(logical_id, resource.get("Properties", {}))
        self.stack.without_effect = sorted(
            logical_id for logical_id, r in self.resources.items() if r["Type"] in ACCEPTED_WITHOUT_EFFECT
        )
        self.stack.outputs = {
            name: str(self.resolve(output["Value"]))
            for name, output in self.assembly.template.get("Outputs", {}).items()
        }
        self._publish_default_definition()
        return self.stack

    def _publish_default_definition(self) -> None:
        """The functions' DEFAULT_DEFINITION, when it is an example (examples/NAME), published to the job
        bucket: a job started without a definition runs out of the box (docs/defining-a-job.md)."""
        defaults = {
            str(variables["DEFAULT_DEFINITION"])
            for resource in self.resources.values()
            if resource["Type"] == "AWS::Lambda::Function"
            for variables in [resource.get("Properties", {}).get("Environment", {}).get("Variables", {})]
            if variables.get("DEFAULT_DEFINITION")
        }
        bucket = self.stack.outputs.get(names.BUCKET)
        for name in sorted(defaults):
            if bucket:
                publish_example(self._client("s3"), bucket, name)


# What each service answers to a create of something that exists (moto's names, as AWS's).
ALREADY_EXISTS = {
    "EntityAlreadyExists",  # IAM
    "ResourceAlreadyExistsException",  # CloudWatch Logs
    "BucketAlreadyOwnedByYou",  # S3
    "ResourceInUseException",  # DynamoDB
    "ResourceConflictException",  # Lambda
}


def _exists(call: Callable[[], Any], *, missing: bool = False) -> bool:
    """Create something: False when created, True when it was already there (a redeploy). With ``missing``,
    ``call`` reads it instead: True when it is there, False when it is not (``StateMachineDoesNotExist``)."""
    try:
        call()
    except ClientError as error:
        code = error.response.get("Error", {}).get("Code")
        if missing and code == "StateMachineDoesNotExist":
            return False
        if not missing and code in ALREADY_EXISTS:
            return True
        raise
    return missing


def _moto_compatible(definition: str) -> str:
    """moto's ASL grammar reads ToleratedFailurePercentage only as a decimal (``0.0``), not ``0``;
    the two are the same JSON number, so write it as a decimal."""
    document = json.loads(definition)

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("ToleratedFailurePercentage"), int):
                node["ToleratedFailurePercentage"] = float(node["ToleratedFailurePercentage"])
            for child in node.values():
                visit(child)
        elif isinstance(node, list):
            for child in node:
                visit(child)

    visit(document)
    return json.dumps(document)


def deploy(out_dir: Path, stack_name: str, endpoint: str) -> LocalStack:
    return Deployer(CloudAssembly(out_dir, stack_name), stack_name, endpoint).deploy()
