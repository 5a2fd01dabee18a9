"""Deploy a synthesized CDK app (cdk.out) onto the local cloud: a small CloudFormation for the
resource types this product uses, creating each resource through its service's real API. This module runs
the deploy (which types, in which order, the stack's outputs); cfn_template.py reads the template (names,
ARNs, intrinsic functions) and cfn_resources.py creates each resource type.

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

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3

from docagent.kit.registry import publish_example
from docagent.localcloud.cfn_resources import ACCEPTED_WITHOUT_EFFECT, ResourceCreator
from docagent.localcloud.cfn_template import CloudAssembly, DeployError, TemplateValues
from docagent.localcloud.server import REGION
from stacks import outputs as names


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


class Deployer:
    """One deploy of ``assembly`` as ``stack_name`` on the local cloud at ``endpoint``: its template read
    (``template``), its resources created type by type (``creator``), recorded in ``stack``."""

    def __init__(self, assembly: CloudAssembly, stack_name: str, endpoint: str) -> None:
        self.assembly = assembly
        self.stack = LocalStack(stack_name)
        self._session = boto3.session.Session(
            aws_access_key_id="local", aws_secret_access_key="local", region_name=REGION
        )
        self._endpoint = endpoint
        self._clients: dict[str, Any] = {}
        self.template = TemplateValues(assembly, stack_name, self.stack.physical, self._client)
        self.resources = self.template.resources
        self.creator = ResourceCreator(self.template, self._client)

    def _client(self, service: str) -> Any:
        """One client a service for the whole deploy (a new boto3 client costs about 25 ms of CPU: the
        deploy asked for 61 of them, 1.5 s of its 5.3 s)."""
        if service not in self._clients:
            self._clients[service] = self._session.client(  # type: ignore[call-overload]
                service, endpoint_url=self._endpoint
            )
        return self._clients[service]

    def deploy(self) -> LocalStack:
        unsupported = sorted(
            {
                f"{resource['Type']} ({logical_id})"
                for logical_id, resource in self.resources.items()
                if resource["Type"] not in self.creator.by_type
                and resource["Type"] not in ACCEPTED_WITHOUT_EFFECT
            }
        )
        if unsupported:
            raise DeployError("the local cloud cannot create: " + ", ".join(unsupported))
        for logical_id, resource in self.resources.items():
            self.stack.physical[logical_id] = self.template.physical_name(logical_id, resource)
        for kind, create in self.creator.by_type.items():
            for logical_id, resource in self.resources.items():
                if resource["Type"] == kind:
                    create(logical_id, resource.get("Properties", {}))
        self.stack.without_effect = sorted(
            logical_id for logical_id, r in self.resources.items() if r["Type"] in ACCEPTED_WITHOUT_EFFECT
        )
        self.stack.outputs = {
            name: str(self.template.resolve(output["Value"]))
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


def deploy(out_dir: Path, stack_name: str, endpoint: str) -> LocalStack:
    return Deployer(CloudAssembly(out_dir, stack_name), stack_name, endpoint).deploy()
