"""Every new object encrypted with SSE-S3 unless it asks for another encryption, as S3 does.

S3 User Guide "Using server-side encryption with Amazon S3 managed keys (SSE-S3)" (2026-12-04): "Amazon S3
now applies server-side encryption with Amazon S3 managed keys (SSE-S3) as the base level of encryption
for every bucket in Amazon S3. Starting January 5, 2023, all new object uploads to Amazon S3 are
automatically encrypted", with the status "as an additional Amazon S3 API response header"
(``x-amz-server-side-encryption: AES256``; an aws-sdk s3:putObject task's result carries
``"ServerSideEncryption": "AES256"``, as recorded on AWS in LocalStack's AWS-validated snapshot
stepfunctions/v2/services/test_aws_sdk_task_service). moto encrypted an object only when asked to or
when its bucket had a default encryption configuration.
"""

from __future__ import annotations

import inspect
from typing import Any

from moto.s3.models import S3Backend

SSE_S3 = "AES256"


def _put_object(self: S3Backend, *args: Any, **kwargs: Any) -> Any:
    asked = inspect.signature(_original_put_object).bind(self, *args, **kwargs)
    if (
        asked.arguments.get("encryption") is None
        and not self.get_bucket(asked.arguments["bucket_name"]).encryption
    ):
        asked.arguments["encryption"] = SSE_S3
    return _original_put_object(*asked.args, **asked.kwargs)


_original_put_object = S3Backend.put_object


def install() -> None:
    S3Backend.put_object = _put_object  # type: ignore[method-assign]
