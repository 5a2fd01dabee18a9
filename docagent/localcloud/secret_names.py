"""A secret's name checked as Secrets Manager checks it.

API reference "CreateSecret" (2026-12-04): "The secret name can contain ASCII letters, numbers, and the
following characters: /_+=.@-". AWS refuses another name with ValidationException "Invalid name. Must be a
valid name containing alphanumeric characters, or any of the following: -/_+=.@!" (as recorded on AWS in
LocalStack's AWS-validated snapshot stepfunctions/v2/error_handling/test_aws_sdk ``test_invalid_secret_name``,
read 2026-12-04). moto created a secret of any name.
"""

from __future__ import annotations

import re
from typing import Any

from moto.secretsmanager.exceptions import ValidationException
from moto.secretsmanager.models import SecretsManagerBackend

_NAME = re.compile(r"^[A-Za-z0-9/_+=.@-]{1,512}$")
REFUSED = (
    "Invalid name. Must be a valid name containing alphanumeric characters, or any of the following: -/_+=.@!"
)


def _create_secret(self: SecretsManagerBackend, name: str, *args: Any, **kwargs: Any) -> Any:
    if not _NAME.match(name or ""):
        raise ValidationException(REFUSED)
    return _original_create_secret(self, name, *args, **kwargs)


_original_create_secret = SecretsManagerBackend.create_secret


def install() -> None:
    SecretsManagerBackend.create_secret = _create_secret  # type: ignore[method-assign]
