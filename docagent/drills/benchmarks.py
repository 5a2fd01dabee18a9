"""``docagent bench``: the local cloud's speed figures, printed (never asserted).

- lambda overhead: median time of a warm invocation of an empty handler, measured at the runtime
  (process hop + JSON) and through the endpoint (boto3 → HTTP → moto → runtime);
- for each requested document count (e.g. 200 2000 20000: the 20,000-document run takes hours on 2 shared
  cores, run it on a quiet machine): the clean job's wall time, ``job_seconds_per_document`` and the requests
  per document by service and operation, counted by the local endpoint (flat when nothing grows with N).
"""

from __future__ import annotations

import io
import statistics
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

import boto3

from docagent.drills.demo import run_demo
from docagent.localcloud.runtime import FunctionSpec
from docagent.localcloud.server import REGION, LocalCloud

EMPTY_HANDLER = "def handler(event, context):\n    return event\n"


def lambda_overhead(invocations: int = 300) -> dict[str, float]:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("app.py", EMPTY_HANDLER)
    code = buffer.getvalue()
    with tempfile.TemporaryDirectory() as state, LocalCloud(Path(state)) as cloud:
        session = boto3.session.Session(
            aws_access_key_id="local", aws_secret_access_key="local", region_name=REGION
        )
        client = session.client("lambda", endpoint_url=cloud.endpoint)
        role = session.client("iam", endpoint_url=cloud.endpoint).create_role(
            RoleName="bench", AssumeRolePolicyDocument="{}"
        )["Role"]["Arn"]
        arn = client.create_function(
            FunctionName="empty",
            Runtime="python3.13",
            Role=role,
            Handler="app.handler",
            Code={"ZipFile": code},
        )["FunctionArn"]
        spec = FunctionSpec("empty", arn, "app.handler", 3.0, 128, {}, "bench", "/aws/lambda/empty")
        cloud.runtime.invoke(spec, code, {})  # cold start, not measured
        direct = []
        for _ in range(invocations):
            started = time.perf_counter()
            cloud.runtime.invoke(spec, code, {"n": 1})
            direct.append((time.perf_counter() - started) * 1000)
        client.invoke(FunctionName="empty", Payload=b"{}")
        through_endpoint = []
        for _ in range(invocations):
            started = time.perf_counter()
            client.invoke(FunctionName="empty", Payload=b'{"n": 1}')
            through_endpoint.append((time.perf_counter() - started) * 1000)
    return {
        "invocations": invocations,
        "runtime_median_ms": round(statistics.median(direct), 3),
        "runtime_p95_ms": round(sorted(direct)[int(invocations * 0.95)], 3),
        "endpoint_median_ms": round(statistics.median(through_endpoint), 3),
    }


def run_benchmarks(document_counts: list[int], time_scale: float | None) -> dict[str, Any]:
    figures: dict[str, Any] = {"lambda_overhead": lambda_overhead()}
    figures["demo"] = []
    for documents in document_counts:
        summary = run_demo(documents=documents, time_scale=time_scale, show_progress=False, crash=None)
        figures["demo"].append(
            {
                "documents": documents,
                "status": summary["status"],
                "error": summary["error"],
                "wall_seconds": summary["wall_seconds"],
                "phase_seconds": summary["phase_seconds"],
                "job_seconds_per_document": round(summary["phase_seconds"]["job"] / documents, 4),
                **per_document(summary["usage"], documents),
            }
        )
    return figures


def per_document(usage: dict[str, Any], documents: int) -> dict[str, Any]:
    """The job's requests (counted by the local endpoint), invocations and state transitions per document:
    flat across sizes when nothing in the workflow grows with the job."""
    requests = usage["requests"]
    return {
        "requests_per_document": {
            service: round(sum(operations.values()) / documents, 3)
            for service, operations in requests.items()
        },
        "requests_per_document_by_operation": {
            f"{service}:{operation}": round(count / documents, 3)
            for service, operations in requests.items()
            for operation, count in operations.items()
        },
        "invocations_per_document": round(
            sum(figures["invocations"] for figures in usage["lambda"].values()) / documents, 3
        ),
        "state_transitions_per_document": round(usage["state_transitions"] / documents, 3),
    }
