"""Counts the requests the local endpoint serves, by service and operation (``docagent cost``, ``bench``).

A WSGI middleware in front of moto's dispatcher: it reads only the request line and headers (never the
body), so it changes nothing it counts. The service comes from the SigV4 credential scope, the operation
from ``X-Amz-Target`` (JSON protocols: DynamoDB, Step Functions, Logs, SSM) or from the REST shape (S3,
Lambda). Requests the Step Functions interpreter makes itself (Lambda Invoke, the ItemReader's GetObject,
the ResultWriter's PutObject) go through the endpoint too, and are counted, as AWS bills them.
"""

from __future__ import annotations

import re
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import parse_qs

# Requests from clients whose User-Agent carries this (the operator's: status, the demo's progress polling)
# are not counted: they watch the job, they are not part of it.
OPERATOR_USER_AGENT = "docagent-operator"

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]

_SCOPE = re.compile(r"Credential=[^/]+/\d{8}/[^/]+/([^/]+)/aws4_request")
_S3_BUCKET_QUERIES = (
    ("versions", "ListObjectVersions"),
    ("versioning", "BucketVersioning"),
    ("delete", "DeleteObjects"),
    ("uploads", "MultipartUploads"),
)


def _s3_operation(method: str, path: str, query: dict[str, list[str]], copy: bool = False) -> str:
    """The S3 operation of a path-style request; ``copy``: it names an ``x-amz-copy-source``."""
    parts = [part for part in path.split("/") if part]
    if len(parts) <= 1:  # the bucket itself (path-style addressing, as the local endpoint is called)
        for name, operation in _S3_BUCKET_QUERIES:
            if name in query:
                return operation if method == "GET" or name == "delete" else f"{method}{operation}"
        if method == "GET":
            return "ListObjectsV2" if query.get("list-type") == ["2"] else "ListObjects"
        return {"PUT": "CreateBucket", "HEAD": "HeadBucket", "DELETE": "DeleteBucket"}.get(method, method)
    if "partNumber" in query:
        return "UploadPartCopy" if copy else "UploadPart"
    if "uploadId" in query:
        return "CompleteMultipartUpload" if method == "POST" else f"{method}MultipartUpload"
    return {
        "GET": "GetObject",
        "HEAD": "HeadObject",
        "PUT": "CopyObject" if copy else "PutObject",
        "DELETE": "DeleteObject",
        "POST": "CreateMultipartUpload",
    }.get(method, method)


def _lambda_operation(method: str, path: str) -> str:
    if path.endswith("/invocations"):
        return "Invoke"
    return f"{method} {re.sub(r'/functions/[^/]+', '/functions/{name}', path)}"


def classify(environ: dict[str, Any]) -> tuple[str, str]:
    """(service, operation) of one request, from its method, path, query and headers."""
    method = str(environ.get("REQUEST_METHOD", "GET"))
    path = str(environ.get("PATH_INFO", "/"))
    match = _SCOPE.search(str(environ.get("HTTP_AUTHORIZATION", "")))
    service = match.group(1) if match else "unsigned"
    target = str(environ.get("HTTP_X_AMZ_TARGET", ""))
    if target:
        return service, target.rsplit(".", 1)[-1]
    if service == "s3":
        query = parse_qs(str(environ.get("QUERY_STRING", "")), keep_blank_values=True)
        return service, _s3_operation(method, path, query, copy="HTTP_X_AMZ_COPY_SOURCE" in environ)
    if service == "lambda":
        return service, _lambda_operation(method, path)
    return service, method


class RequestCounter:
    """Thread-safe counts by (service, operation); ``snapshot`` and ``reset`` bracket a measurement.
    Each counted request's time in the endpoint (moto and the journal, not the network) is summed too:
    ``milliseconds`` shows what a request costs the local cloud, and whether that grows with the job; and its
    serving thread's CPU (``cpu_seconds``: moto's work and the journal's, not the wait for a Lambda worker or
    for the disk), what ``docagent bench --profile`` splits the endpoint's CPU by."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: Counter[tuple[str, str]] = Counter()
        self._seconds: defaultdict[tuple[str, str], float] = defaultdict(float)
        self._bytes: Counter[tuple[str, str]] = Counter()
        self._cpu: defaultdict[tuple[str, str], float] = defaultdict(float)

    def count(self, environ: dict[str, Any], seconds: float = 0.0, sent: int = 0, cpu: float = 0.0) -> None:
        """One request; ``sent``: the bytes of its answer (its body's come from Content-Length); ``cpu``: the
        CPU seconds of the thread that served it, while it did."""
        if OPERATOR_USER_AGENT in str(environ.get("HTTP_USER_AGENT", "")):
            return
        key = classify(environ)
        received = str(environ.get("CONTENT_LENGTH") or "0")
        with self._lock:
            self._counts[key] += 1
            self._seconds[key] += seconds
            self._bytes[key] += (int(received) if received.isdigit() else 0) + sent
            self._cpu[key] += cpu

    def bytes(self) -> dict[str, int]:
        """{"service:operation": bytes of the requests' bodies and the answers', summed}."""
        with self._lock:
            return {
                f"{service}:{operation}": count for (service, operation), count in sorted(self._bytes.items())
            }

    def snapshot(self) -> dict[str, dict[str, int]]:
        """{service: {operation: count}}, sorted."""
        with self._lock:
            items = sorted(self._counts.items())
        by_service: dict[str, dict[str, int]] = {}
        for (service, operation), count in items:
            by_service.setdefault(service, {})[operation] = count
        return by_service

    def milliseconds(self) -> dict[str, float]:
        """{"service:operation": mean time in the endpoint per request, in ms}."""
        with self._lock:
            return {
                f"{service}:{operation}": round(self._seconds[service, operation] * 1000 / count, 3)
                for (service, operation), count in sorted(self._counts.items())
            }

    def cpu_seconds(self) -> dict[str, float]:
        """{"service:operation": CPU seconds its requests' serving threads spent on them, summed}."""
        with self._lock:
            return {
                f"{service}:{operation}": round(cpu, 3)
                for (service, operation), cpu in sorted(self._cpu.items())
            }

    def reset(self) -> None:
        with self._lock:
            self._cpu.clear()
            self._counts.clear()
            self._seconds.clear()
            self._bytes.clear()

    def wrap(self, app: WsgiApp) -> WsgiApp:
        def counted(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
            started, cpu_started = time.perf_counter(), time.thread_time()
            length: list[int] = []

            def measured(status: str, headers: list[tuple[str, str]], *rest: Any) -> Any:
                length.extend(int(v) for k, v in headers if k.lower() == "content-length" and v.isdigit())
                return start_response(status, headers, *rest)

            try:
                # moto answers with a list; a lazy answer's time would be spent after this returns
                return app(environ, measured)
            finally:
                head = environ.get("REQUEST_METHOD") == "HEAD"  # its Content-Length is the object's, not sent
                spent = time.thread_time() - cpu_started
                self.count(environ, time.perf_counter() - started, 0 if head else sum(length), spent)

        return counted
