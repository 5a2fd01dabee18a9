"""The local deploy reads a cloud assembly as CloudFormation would, and refuses what it cannot create."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docagent.localcloud.cfn_resources import _moto_compatible
from docagent.localcloud.cfn_template import CloudAssembly, DeployError
from docagent.localcloud.deploy import Deployer
from docagent.localcloud.server import ACCOUNT_ID
from stacks.sdk_pins import document_layer_description, sdk_layer_description, sdk_versions


def assembly(tmp_path: Path, resources: dict, outputs: dict | None = None) -> CloudAssembly:
    template = {"Resources": resources, "Outputs": outputs or {}}
    (tmp_path / "App.template.json").write_text(json.dumps(template))
    (tmp_path / "App.assets.json").write_text(json.dumps({"files": {}}))
    return CloudAssembly(tmp_path, "App")


def test_unsupported_resource_types_are_listed_and_nothing_is_created(tmp_path):
    deployer = Deployer(
        assembly(
            tmp_path,
            {
                "Queue": {"Type": "AWS::SQS::Queue"},
                "Vpc": {"Type": "AWS::EC2::VPC"},
                "Bucket": {"Type": "AWS::S3::Bucket"},
            },
        ),
        "App",
        "http://127.0.0.1:9",  # never reached: the deploy stops before creating anything
    )
    with pytest.raises(DeployError) as refused:
        deployer.deploy()
    assert "AWS::EC2::VPC (Vpc)" in str(refused.value)
    assert "AWS::SQS::Queue (Queue)" in str(refused.value)


def test_intrinsic_functions_resolve_to_local_physical_names(tmp_path):
    deployer = Deployer(
        assembly(
            tmp_path,
            {
                "Bucket": {"Type": "AWS::S3::Bucket"},
                "Table": {"Type": "AWS::DynamoDB::Table", "Properties": {"TableName": "explicit-table"}},
                "Machine": {
                    "Type": "AWS::StepFunctions::StateMachine",
                    "Properties": {"StateMachineName": "App-Review"},
                },
            },
        ),
        "App",
        "http://127.0.0.1:9",
    )
    for logical_id, resource in deployer.resources.items():
        deployer.stack.physical[logical_id] = deployer.template.physical_name(logical_id, resource)
    assert deployer.template.resolve({"Ref": "Bucket"}) == "app-bucket"
    assert deployer.template.resolve({"Ref": "Table"}) == "explicit-table"
    assert deployer.template.resolve({"Fn::GetAtt": ["Table", "Arn"]}).endswith(":table/explicit-table")
    assert deployer.template.resolve({"Ref": "Machine"}).endswith(":stateMachine:App-Review")
    assert (
        deployer.template.resolve({"Fn::Join": ["/", [{"Ref": "Bucket"}, "jobs", "*"]]})
        == "app-bucket/jobs/*"
    )
    assert (
        deployer.template.resolve({"Fn::Sub": "arn:${AWS::Partition}:s3:::${Bucket}/x"})
        == "arn:aws:s3:::app-bucket/x"
    )
    assert deployer.template.resolve({"Fn::Select": [1, {"Fn::Split": [",", "a,b,c"]}]}) == "b"
    with pytest.raises(DeployError, match="Fn::If"):
        deployer.template.resolve({"Fn::If": ["Condition", "a", "b"]})


def test_moto_compatible_definition_keeps_the_same_json_numbers():
    definition = json.dumps({"States": {"Map": {"Type": "Map", "ToleratedFailurePercentage": 5}}})
    rewritten = json.loads(_moto_compatible(definition))
    assert rewritten["States"]["Map"]["ToleratedFailurePercentage"] == 5.0


def test_the_sdk_layer_deploys_only_with_the_installed_pins(tmp_path):
    """Locally the SDK layer is the interpreter's own boto3: a template pinning other versions is refused,
    like a Powertools layer of another release."""
    description = sdk_layer_description()
    layer = {"Type": "AWS::Lambda::LayerVersion", "Properties": {"Description": description}}
    deployer = Deployer(assembly(tmp_path, {"Sdk": layer}), "App", "http://127.0.0.1:9")
    deployer.stack.physical["Sdk"] = deployer.template.physical_name("Sdk", layer)
    deployer.creator.layer("Sdk", layer["Properties"])
    assert (
        deployer.template.resolve({"Ref": "Sdk"})
        == f"arn:aws:lambda:us-east-1:{ACCOUNT_ID}:layer:App-Sdk:local"
    )
    other = {"Description": sdk_layer_description({**sdk_versions(), "botocore": "1.0.0"})}
    with pytest.raises(DeployError, match=r"botocore==1\.0\.0.*installed"):
        deployer.creator.layer("Sdk", other)
    with pytest.raises(DeployError, match="only the SDK and document layers"):
        deployer.creator.layer("Sdk", {"Description": "numpy"})
    deployer.creator.layer("Documents", {"Description": document_layer_description()})
    with pytest.raises(DeployError, match=r"pillow==1\.0\.0.*constraints\.txt"):
        deployer.creator.layer("Documents", {"Description": document_layer_description({"pillow": "1.0.0"})})
