"""``SdkHttpMetadata`` and ``SdkResponseMetadata`` in an optimized integration's result, as AWS adds them.

Step Functions calls a service with the AWS SDK for Java, and the optimized request-response integrations
(``lambda:invoke``, ``sqs:sendMessage``, ``sns:publish``, ``dynamodb:*``, ``states:startExecution``,
``ecs:runTask``) hand the SDK's response metadata on in their result: ``SdkHttpMetadata`` holds the HTTP
answer's headers twice (``AllHttpHeaders``: each name with a list of values, in the answer's order;
``HttpHeaders``: one value each, names sorted regardless of case) and its ``HttpStatusCode``;
``SdkResponseMetadata`` its ``RequestId``. AWS does not document these members; their shape, the headers
each service sends and their spelling are as recorded on AWS in LocalStack's AWS-validated snapshots
services/test_lambda_task_service, test_sqs_task_service, test_sns_task_service,
test_dynamodb_task_service, test_sfn_task_service and test_ecs_task_service (read 2026-12-04;
``events:putEvents`` and the ``aws-sdk:*`` integrations have none). The values are the local call's own:
its request id, its body's length, the date of the answer; DynamoDB's ``x-amz-crc32`` is the CRC32 of the
local body; Lambda's trace id is a fresh one in X-Ray's format. Glue, Batch and API Gateway: no recording,
no metadata.

The interpreter drops botocore's ``ResponseMetadata``; the local cloud's service clients note each answer
(``watch``) for the thread that made the call, and the integration's result gains the members after.
"""

from __future__ import annotations

import email.utils
import secrets
import threading
import time
import uuid
import zlib
from collections.abc import Callable
from typing import Any

from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service import (
    StateTaskService,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_dynamodb import (  # noqa: E501
    StateTaskServiceDynamoDB,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_ecs import (
    StateTaskServiceEcs,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_lambda import (
    StateTaskServiceLambda,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_sfn import (
    StateTaskServiceSfn,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_sns import (
    StateTaskServiceSns,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_sqs import (
    StateTaskServiceSqs,
)

_JSON_1_0 = "application/x-amz-json-1.0"
_JSON_1_1 = "application/x-amz-json-1.1"
# Per service: its headers in the order AWS answers them, each spelt as AWS spells it, with the
# Content-Type AWS answers (the Java SDK's protocol, not necessarily the local one's).
_PLAIN = ("x-amzn-RequestId", "connection", "Content-Length", "Date", "Content-Type")
_HEADERS: dict[type[StateTaskService], tuple[tuple[str, ...], str]] = {
    StateTaskServiceSqs: (_PLAIN, _JSON_1_0),
    StateTaskServiceSns: (_PLAIN, "text/xml"),
    StateTaskServiceSfn: (_PLAIN, _JSON_1_0),
    StateTaskServiceEcs: (("x-amzn-RequestId", "Content-Length", "Date", "Content-Type"), _JSON_1_1),
    StateTaskServiceDynamoDB: (
        ("Server", "Connection", "x-amzn-RequestId", "x-amz-crc32", "Content-Length", "Date", "Content-Type"),
        _JSON_1_0,
    ),
    StateTaskServiceLambda: (
        ("X-Amz-Executed-Version", "x-amzn-Remapped-Content-Length", "Connection", "x-amzn-RequestId",
         "Content-Length", "Date", "X-Amzn-Trace-Id", "Content-Type"),
        "application/json",
    ),
}  # fmt: skip


class _Answer(threading.local):
    """The last service answer this thread's client received (status None: none since it was cleared)."""

    status: int | None = None
    request_id: str = ""
    length: str = "0"
    crc32: str = "0"


_last = _Answer()


def _note(http_response: Any, parsed: Any, model: Any, **_: Any) -> None:
    """botocore's ``after-call`` event: keep what the metadata is built from (a streamed body, Lambda's
    payload, is left unread: its length is the answer's Content-Length)."""
    _last.status = int(http_response.status_code)
    metadata = parsed.get("ResponseMetadata", {}) if isinstance(parsed, dict) else {}
    _last.request_id = str(metadata.get("RequestId") or uuid.uuid4())
    body = b"" if model.has_streaming_output else http_response.content
    _last.length = str(http_response.headers.get("content-length") or len(body))
    _last.crc32 = str(zlib.crc32(body))


def watch(client: Any) -> None:
    """Have ``client`` note each answer it receives for the calling thread."""
    client.meta.events.register("after-call", _note)


def _header_value(name: str, content_type: str, result: dict[str, Any]) -> str:
    values = {
        "x-amzn-requestid": _last.request_id,
        "connection": "keep-alive",
        "content-length": _last.length,
        "date": email.utils.formatdate(time.time(), usegmt=True),
        "content-type": content_type,
        "server": "Server",
        "x-amz-crc32": _last.crc32,
        "x-amz-executed-version": str(result.get("ExecutedVersion", "$LATEST")),
        "x-amzn-remapped-content-length": "0",
        "x-amzn-trace-id": f"root=1-{int(time.time()):08x}-{secrets.token_hex(12)};sampled=0",
    }
    return values[name.lower()]


def metadata(task_type: type[StateTaskService], result: dict[str, Any]) -> dict[str, Any]:
    """The two members AWS adds to a ``task_type`` integration's ``result`` (from the last noted answer)."""
    names, content_type = _HEADERS[task_type]
    headers = {name: _header_value(name, content_type, result) for name in names}
    return {
        "SdkHttpMetadata": {
            "AllHttpHeaders": {name: [value] for name, value in headers.items()},
            "HttpHeaders": dict(sorted(headers.items(), key=lambda item: item[0].lower())),
            "HttpStatusCode": _last.status,
        },
        "SdkResponseMetadata": {"RequestId": _last.request_id},
    }


def _with_metadata(task_type: type[StateTaskService], original: Callable[..., None]) -> Any:
    def eval_service_task(self: StateTaskService, env: Any, *args: Any, **kwargs: Any) -> None:
        _last.status = None
        original(self, env, *args, **kwargs)
        result = env.stack[-1] if env.stack else None
        if self.resource.condition is None and _last.status is not None and isinstance(result, dict):
            result.update(metadata(task_type, result))

    return eval_service_task


def install() -> None:
    for task_type in _HEADERS:
        task_type._eval_service_task = _with_metadata(task_type, task_type._eval_service_task)  # type: ignore[method-assign]
