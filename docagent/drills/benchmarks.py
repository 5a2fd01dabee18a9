"""``docagent bench``: the local cloud's speed figures, printed (never asserted).

- lambda overhead: median time of a warm invocation of an empty handler, measured at the runtime
  (process hop + JSON) and through the endpoint (boto3 → HTTP → moto → runtime);
- for each requested document count (e.g. 200 2000 20000: the 20,000-document run takes hours on 2 shared
  cores, run it on a quiet machine): the clean job's wall time, ``job_seconds_per_document`` and the requests
  per document by service and operation, counted by the local endpoint (flat when nothing grows with N).
- persistence: median latency of a journaled change (S3 PutObject, DynamoDB PutItem) with the state kept
  on disk and without, and the time a restart takes to replay those changes.
"""

from __future__ import annotations

import io
import os
import statistics
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

import boto3
from rich.console import Console
from rich.table import Table

from docagent.drills.demo import run_demo
from docagent.drills.profiling import PROFILE_DIR_ENV, ThreadProfiles, enable_worker_profiles, profile_figures
from docagent.localcloud.lambdas.runtime import FunctionSpec
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


def _median_ms(timings: list[float]) -> float:
    return round(statistics.median(timings) * 1000, 3)


def _changes(cloud: LocalCloud, count: int) -> dict[str, float]:
    """Median latency of ``count`` S3 PutObject and ``count`` DynamoDB PutItem calls."""
    session = boto3.session.Session(
        aws_access_key_id="local", aws_secret_access_key="local", region_name=REGION
    )
    s3 = session.client("s3", endpoint_url=cloud.endpoint)
    dynamodb = session.client("dynamodb", endpoint_url=cloud.endpoint)
    s3.create_bucket(Bucket="bench")
    dynamodb.create_table(
        TableName="bench",
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    puts, items = [], []
    for index in range(count):
        started = time.perf_counter()
        s3.put_object(Bucket="bench", Key=f"k/{index}.json", Body=b"x" * 1024)
        puts.append(time.perf_counter() - started)
        started = time.perf_counter()
        dynamodb.put_item(TableName="bench", Item={"id": {"S": str(index)}, "v": {"S": "x" * 200}})
        items.append(time.perf_counter() - started)
    return {"s3_put_median_ms": _median_ms(puts), "dynamodb_put_median_ms": _median_ms(items)}


def persistence_cost(changes: int = 300) -> dict[str, Any]:
    """What keeping the state on disk costs per change, and what a restart costs per kept change."""
    figures: dict[str, Any] = {"changes_each": changes}
    with tempfile.TemporaryDirectory() as state:
        with LocalCloud(Path(state), persist=False) as cloud:
            figures["in_memory"] = _changes(cloud, changes)
        with LocalCloud(Path(state), fresh=True) as cloud:
            figures["on_disk"] = _changes(cloud, changes)
            assert cloud.journal is not None
            figures["journal"] = {"records": cloud.journal.appended, "syncs": cloud.journal.syncs}
        with LocalCloud(Path(state)) as cloud:
            figures["restart"] = {
                "changes_replayed": cloud.replayed_requests,
                "seconds": round(cloud.restore_seconds, 3),
                "ms_per_change": round(cloud.restore_seconds * 1000 / max(cloud.replayed_requests, 1), 3),
            }
    return figures


def run_benchmarks(
    document_counts: list[int], time_scale: float | None, *, documents_per_child: int = 1
) -> dict[str, Any]:
    figures: dict[str, Any] = {"lambda_overhead": lambda_overhead(), "persistence": persistence_cost()}
    figures["demo"] = []
    for documents in document_counts:
        summary = run_demo(
            documents=documents,
            time_scale=time_scale,
            show_progress=False,
            crash=None,
            documents_per_child=documents_per_child,
        )
        figures["demo"].append(
            {
                "documents": documents,
                "documents_per_child": documents_per_child,
                **totals(summary["usage"]),
                "status": summary["status"],
                "error": summary["error"],
                "wall_seconds": summary["wall_seconds"],
                "phase_seconds": summary["phase_seconds"],
                "job_seconds_per_document": round(summary["phase_seconds"]["job"] / documents, 4),
                "cpu_seconds": summary["cpu_seconds"],
                **per_document(summary["usage"], documents),
            }
        )
    return figures


def totals(usage: dict[str, Any]) -> dict[str, int]:
    """The job's Lambda invocations and state transitions (docs/scale.md, "Batching": what K saves)."""
    return {
        "invocations": sum(int(figures["invocations"]) for figures in usage["lambda"].values()),
        "process_document_invocations": int(usage["lambda"].get("ProcessDocument", {}).get("invocations", 0)),
        "state_transitions": int(usage["state_transitions"]),
    }


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
        # The endpoint's own time per request (moto and the journal): flat when no operation grows with N.
        "endpoint_ms_per_request": usage.get("endpoint_ms_per_request", {}),
        # The CPU its serving threads spent on each kind of request, per document of the job.
        "endpoint_cpu_ms_per_document": {
            operation: round(seconds * 1000 / documents, 3)
            for operation, seconds in usage.get("endpoint_cpu_seconds", {}).items()
        },
    }


def print_figures(figures: dict[str, Any], console: Console) -> None:
    """``docagent bench`` without ``--json``: the same figures, as tables."""
    overhead, persistence = figures["lambda_overhead"], figures["persistence"]
    in_memory, on_disk = persistence["in_memory"], persistence["on_disk"]
    console.print(
        f"Lambda overhead ({overhead['invocations']} warm invocations of an empty handler): "
        f"{overhead['runtime_median_ms']} ms at the runtime, {overhead['endpoint_median_ms']} ms through the "
        "endpoint (medians)"
    )
    console.print(
        f"Persistence ({persistence['changes_each']} changes each): S3 PutObject "
        f"{in_memory['s3_put_median_ms']} ms in memory, {on_disk['s3_put_median_ms']} ms on disk; "
        f"DynamoDB PutItem {in_memory['dynamodb_put_median_ms']} ms, {on_disk['dynamodb_put_median_ms']} ms; "
        f"restart {persistence['restart']['ms_per_change']} ms per kept change"
    )
    for run in figures["demo"]:
        cpu = run["cpu_seconds"]
        console.print(
            f"\n{run['documents']} documents ({run['documents_per_child']} per child): {run['status']} in "
            f"{run['wall_seconds']} s, phases {run['phase_seconds']}; job "
            f"{run['job_seconds_per_document']} s per document; CPU {cpu['per_document']} s per document "
            f"(endpoint process {cpu['endpoint_process']} s, workers {cpu['workers']} s)"
        )
        table = Table(
            "operation", "requests per document", "ms per request (in the endpoint)", "CPU ms per document"
        )
        milliseconds, cpu_ms = run["endpoint_ms_per_request"], run["endpoint_cpu_ms_per_document"]
        for operation, count in run["requests_per_document_by_operation"].items():
            table.add_row(
                operation,
                f"{count:g}",
                f"{milliseconds.get(operation, 0.0):.2f}",
                f"{cpu_ms.get(operation, 0.0):.2f}",
            )
        console.print(table)


def profile_demo(directory: Path, documents: int, time_scale: float | None) -> dict[str, Any]:
    """``docagent bench --profile DIR``: one clean demo job, its cloud's threads and its workers profiled."""
    enable_worker_profiles(directory)
    threads = ThreadProfiles()
    threads.start()
    try:
        # real time by default: a profiled process is slower, and the demo's compressed function timeouts
        # (docagent/drills/demo_cloud.py, default_time_scale) would time its steps out on a busy machine
        summary = run_demo(documents=documents, time_scale=time_scale or 1.0, show_progress=False, crash=None)
    finally:
        profiles = threads.stop()
        os.environ.pop(PROFILE_DIR_ENV, None)
    figures = profile_figures(profiles, directory, summary["usage"], documents)
    return {"status": summary["status"], "cpu_seconds": summary["cpu_seconds"], **figures}


def print_profile(figures: dict[str, Any], console: Console) -> None:
    """``docagent bench --profile`` without ``--json``."""
    cpu = figures["cpu_seconds"]
    console.print(
        f"{figures['documents']} documents, {figures['status']}; CPU under the profiler: cloud process "
        f"{cpu['endpoint_process']} s, workers {cpu['workers']} s (profiles in {figures['directory']})"
    )
    for title, seconds in (
        ("the cloud's process, by thread", figures["cloud_process_by_thread"]),
        ("the endpoint, by request (serving threads)", figures["endpoint_by_request"]),
        ("the workers' invocations, by function", figures["workers_by_function"]),
    ):
        table = Table(title, "CPU s", "per document (ms)")
        for name, value in seconds.items():
            table.add_row(name, f"{value:.3f}", f"{value * 1000 / figures['documents']:.2f}")
        console.print(table)
    for title, tops in (
        ("the cloud's process", figures["cloud_process_top"]),
        ("the workers' steps (functions/)", figures["workers_by_step"]),
    ):
        for group, top in tops.items():
            table = Table(f"{title}: {group}", "CPU s, cumulative")
            for where, value in top:
                table.add_row(where, f"{value:.3f}")
            console.print(table)
