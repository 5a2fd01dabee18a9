"""A Task's ``Resource``: which service integration it names, and whether Step Functions has it.

Developer guide "Integrating services with Step Functions" (looked up 2026-12-04): an optimized integration
is ``arn:aws:states:::SERVICE:ACTION`` with an optional ``.sync`` (``.sync:2``) or ``.waitForTaskToken``
pattern; an AWS SDK integration is ``arn:aws:states:::aws-sdk:SERVICE:ACTION``, SERVICE and ACTION as the
SDK names them. A Resource naming neither is refused at creation ("The resource provided ... is not
recognized"). Lambda function and activity ARNs are resources of their own and not judged here.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import botocore.session
from botocore.exceptions import UnknownServiceError
from botocore.model import OperationModel
from moto.stepfunctions.parser.utils import camel_to_snake_case

# The services with optimized integrations (developer guide "Integrating optimized services", 2026-12-04).
OPTIMIZED = {
    "lambda", "sqs", "sns", "dynamodb", "events", "states", "glue", "ecs", "batch", "apigateway",
    "athena", "bedrock", "codebuild", "eks", "elasticmapreduce", "emr-containers", "emr-serverless",
    "sagemaker", "http", "mediaconvert", "databrew", "evidently", "s3",
}  # fmt: skip
# Step Functions' service names that botocore spells otherwise.
BOTO_NAMES = {"states": "stepfunctions", "sfn": "stepfunctions", "cloudwatchlogs": "logs"}


def sfn_cased(member: str) -> str:
    """A botocore member name as Step Functions spells it in a task's result: the model's name with a
    capital first letter (``ExecutionArn`` for ``executionArn``; ``ChecksumCRC32`` and ``MD5OfMessageBody``
    as they are, as recorded on AWS in LocalStack's AWS-validated snapshots services/test_aws_sdk_task_service
    ``test_s3_put_object`` and services/test_sqs_task_service, read 2026-12-04)."""
    return member[:1].upper() + member[1:]


class Integration(NamedTuple):
    sdk: bool
    service: str  # botocore's name
    action: str  # as written: ``startExecution``
    pattern: str  # "", "sync", "sync:2" or "waitForTaskToken"


def integration(resource: str) -> Integration | None:
    """The service integration ``resource`` names (None: not an ``arn:...:states:::`` integration)."""
    parts = resource.split(":")
    if len(parts) < 7 or parts[0] != "arn" or parts[2] != "states" or parts[3] or parts[4]:
        return None
    sdk = parts[5] == "aws-sdk"
    rest = parts[6:] if not sdk else parts[7:]
    service = parts[6] if sdk else parts[5]
    if not rest:
        return Integration(sdk, BOTO_NAMES.get(service, service), "", "")
    action, _, pattern = ":".join(rest).partition(".")
    return Integration(sdk, BOTO_NAMES.get(service, service), action, pattern)


@functools.cache
def service_model(service: str) -> Any:
    try:
        return botocore.session.get_session().get_service_model(service)
    except UnknownServiceError:
        return None


@functools.cache
def operation(service: str, action: str) -> OperationModel | None:
    """botocore's model of ``action`` (snake_case, as the interpreter names it) of ``service``."""
    model = service_model(BOTO_NAMES.get(service, service))
    if model is None:
        return None
    for name in model.operation_names:
        if camel_to_snake_case(name) == action:
            found: OperationModel = model.operation_model(name)
            return found
    return None


def known(resource: str) -> bool:
    """Whether Step Functions has the integration ``resource`` names (other ARNs are not judged)."""
    found = integration(resource)
    if found is None:
        return True
    if not found.action:
        return False
    if found.sdk:
        return service_model(found.service) is not None
    return found.service in OPTIMIZED or found.service == "stepfunctions"
