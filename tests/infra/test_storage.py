"""The job bucket and the two tables."""

from __future__ import annotations

from aws_cdk.assertions import Match

from tests.infra.conftest import Synthesized


def test_bucket_blocks_all_public_access(synthesized: Synthesized) -> None:
    synthesized.template.has_resource_properties(
        "AWS::S3::Bucket",
        {
            "PublicAccessBlockConfiguration": {
                "BlockPublicAcls": True,
                "BlockPublicPolicy": True,
                "IgnorePublicAcls": True,
                "RestrictPublicBuckets": True,
            }
        },
    )


def test_bucket_policy_denies_requests_without_tls(synthesized: Synthesized) -> None:
    synthesized.template.has_resource_properties(
        "AWS::S3::BucketPolicy",
        {
            "PolicyDocument": {
                "Statement": Match.array_with(
                    [
                        Match.object_like(
                            {
                                "Effect": "Deny",
                                "Action": "s3:*",
                                "Principal": {"AWS": "*"},
                                "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                            }
                        )
                    ]
                )
            }
        },
    )


def test_bucket_is_encrypted_with_s3_managed_keys(synthesized: Synthesized) -> None:
    synthesized.template.has_resource_properties(
        "AWS::S3::Bucket",
        {
            "BucketEncryption": {
                "ServerSideEncryptionConfiguration": [
                    {"ServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}
                ]
            }
        },
    )


def test_bucket_is_versioned_and_expires_noncurrent_versions_after_30_days(synthesized: Synthesized) -> None:
    synthesized.template.has_resource_properties(
        "AWS::S3::Bucket",
        {
            "VersioningConfiguration": {"Status": "Enabled"},
            "LifecycleConfiguration": {
                "Rules": Match.array_with(
                    [
                        Match.object_like(
                            {"Status": "Enabled", "NoncurrentVersionExpiration": {"NoncurrentDays": 30}}
                        )
                    ]
                )
            },
        },
    )


def test_there_is_exactly_one_bucket_and_it_is_retained(synthesized: Synthesized) -> None:
    synthesized.template.resource_count_is("AWS::S3::Bucket", 1)
    synthesized.template.has_resource(
        "AWS::S3::Bucket", {"DeletionPolicy": "Retain", "UpdateReplacePolicy": "Retain"}
    )


def test_idempotency_table_matches_powertools_schema(synthesized: Synthesized) -> None:
    table = synthesized.template_json["Resources"][
        synthesized.logical_id(synthesized.stack.storage.idempotency_table)
    ]["Properties"]
    assert table["KeySchema"] == [{"AttributeName": "id", "KeyType": "HASH"}]
    assert table["AttributeDefinitions"] == [{"AttributeName": "id", "AttributeType": "S"}]
    assert table["TimeToLiveSpecification"] == {"AttributeName": "expiration", "Enabled": True}
    assert table["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"] is True
    assert table["BillingMode"] == "PAY_PER_REQUEST"


def test_the_reference_table_is_keyed_by_table_and_key(synthesized: Synthesized) -> None:
    table = synthesized.template_json["Resources"][
        synthesized.logical_id(synthesized.stack.storage.reference_table)
    ]["Properties"]
    assert table["KeySchema"] == [
        {"AttributeName": "table", "KeyType": "HASH"},
        {"AttributeName": "key", "KeyType": "RANGE"},
    ]
    assert table["AttributeDefinitions"] == [
        {"AttributeName": "table", "AttributeType": "S"},
        {"AttributeName": "key", "AttributeType": "S"},
    ]
    assert table["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"] is True
    assert table["BillingMode"] == "PAY_PER_REQUEST"
    assert "TimeToLiveSpecification" not in table


def test_tables_are_retained(synthesized: Synthesized) -> None:
    for table in synthesized.resources("AWS::DynamoDB::Table").values():
        assert table["DeletionPolicy"] == "Retain"
    assert len(synthesized.resources("AWS::DynamoDB::Table")) == 2
