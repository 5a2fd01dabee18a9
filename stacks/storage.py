"""Where the job's state lives: the job bucket and the two DynamoDB tables."""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_s3 as s3
from constructs import Construct

from stacks import nag

NONCURRENT_VERSION_RETENTION = Duration.days(30)
INCOMPLETE_UPLOAD_RETENTION = Duration.days(7)


class Storage(Construct):
    """The job bucket (documents, manifests, results, reports, map-run output) and the tables.

    Everything is retained on stack deletion: job artefacts are the audit trail of what the model saw.
    """

    def __init__(self, scope: Construct, construct_id: str) -> None:
        super().__init__(scope, construct_id)

        self.bucket = s3.Bucket(
            self,
            "JobBucket",
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            enforce_ssl=True,
            encryption=s3.BucketEncryption.S3_MANAGED,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            versioned=True,
            lifecycle_rules=[
                s3.LifecycleRule(
                    id="ExpireNoncurrentVersions",
                    noncurrent_version_expiration=NONCURRENT_VERSION_RETENTION,
                    # The Distributed Map's ResultWriter uploads in parts; don't pay for abandoned ones.
                    abort_incomplete_multipart_upload_after=INCOMPLETE_UPLOAD_RETENTION,
                )
            ],
            removal_policy=RemovalPolicy.RETAIN,
        )
        nag.acknowledge(
            self.bucket,
            "S1",
            "Only the stack's own roles touch this bucket and every write is a job artefact whose key names "
            "the job; a second bucket for server access logs adds cost without adding evidence. Enable "
            "CloudTrail S3 data events on this bucket if object-level access auditing is required.",
        )

        # Powertools idempotency records: `id` key and `expiration` TTL are fixed by Powertools.
        self.idempotency_table = dynamodb.Table(
            self,
            "IdempotencyTable",
            partition_key=dynamodb.Attribute(name="id", type=dynamodb.AttributeType.STRING),
            time_to_live_attribute="expiration",
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            removal_policy=RemovalPolicy.RETAIN,
        )

        # Every reference table of every job definition (lookup checks; `docagent reference load`): partition
        # key the reference table's name, sort key the looked-up value, the row's attributes beside them.
        self.reference_table = dynamodb.Table(
            self,
            "ReferenceTable",
            partition_key=dynamodb.Attribute(name="table", type=dynamodb.AttributeType.STRING),
            sort_key=dynamodb.Attribute(name="key", type=dynamodb.AttributeType.STRING),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            removal_policy=RemovalPolicy.RETAIN,
        )
