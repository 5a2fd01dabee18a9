"""``docagent bench --fan-in N``: the report's and the verification's fan-in at N documents, beside N / 10.

For each size: a fresh in-process local cloud (state in memory), the stack deployed, a finished synthetic job
of that size written straight into its bucket (docagent/drills/fan_in_job.py: the manifest in parts, one
result and one journalled model call per document, the ResultWriter's result files; every document
extracted, so the job verifies), then the workflow's own report and verification states, cut from the
deployed state machine (SummarizeResults → ReportPartitions → BuildReport → VerifyPartitions → VerifyJob)
and run as a state machine of their own through the local cloud. Printed per size: the stages' wall time and
seconds per document, every Lambda invocation's peak resident memory (the worker's VmHWM, reset per
invocation: Lambda's "Max Memory Used") and duration beside the function's configured memory and timeout,
and the requests and bytes the endpoint served, by operation.

What it leaves out: the documents themselves, ProcessDocument and the model (the Distributed Map of the
review is measured by ``docagent bench --documents``), the listing, RunActions and the approval.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from moto.s3.models import s3_backends
from rich.console import Console
from rich.table import Table

from docagent.drills.demo_cloud import synthesized
from docagent.drills.fan_in_job import write_fan_in_job
from docagent.drills.local_job import LocalJob
from docagent.kit.loader import read_bundle
from docagent.kit.registry import publish
from docagent.localcloud.deploy import deploy
from docagent.localcloud.server import ACCOUNT_ID, LocalCloud
from docagent.project import ROOT
from functions.definition.job_spec import DefinitionBundle
from functions.payloads.job import JobVersions
from stacks import outputs as names

STAGES = ("SummarizeResults", "ReportPartitions", "BuildReport", "VerifyPartitions", "VerifyJob")
BENCH_DEFINITION = "fan-in-bench"
LEAVES_OUT = "the documents, ProcessDocument and the model, the listing, RunActions and the approval"


def _bundle(folder: Path) -> DefinitionBundle:
    """The invoice example without its actions (the bench runs no RunActions), under its own name."""
    shutil.copytree(ROOT / "examples" / "invoices", folder)
    definition = json.loads((folder / "job.json").read_text(encoding="utf-8"))
    definition.update(name=BENCH_DEFINITION, actions=[])
    (folder / "job.json").write_text(json.dumps(definition), encoding="utf-8")
    return read_bundle(folder)


def stages_definition(workflow: dict[str, Any]) -> dict[str, Any]:
    """The deployed workflow's report and verification states as a state machine of their own."""
    states = {name: json.loads(json.dumps(workflow["States"][name])) for name in STAGES}
    states["BuildReport"]["Next"] = "VerifyPartitions"
    return {"Comment": "docagent bench --fan-in: the report and verification stages", "StartAt": STAGES[0],
            "States": states}  # fmt: skip


def _wait(sfn: Any, execution_arn: str) -> dict[str, Any]:
    while True:
        described: dict[str, Any] = sfn.describe_execution(executionArn=execution_arn)
        if described["status"] != "RUNNING":
            return described
        time.sleep(0.5)


def measure(documents: int, *, time_scale: float, say: Any) -> dict[str, Any]:
    """One size: the synthetic job written, then the stages run and measured."""
    job_id = f"fan-in-{documents}"
    with (
        tempfile.TemporaryDirectory() as scratch,
        LocalCloud(Path(scratch) / "cloud", time_scale=time_scale, fresh=True, persist=False) as cloud,
    ):
        stack = deploy(synthesized({}), names.STACK_NAME, cloud.endpoint)
        job = LocalJob.on(cloud.endpoint, stack, job_id)
        bundle = _bundle(Path(scratch) / "definition")
        publish(job.s3, job.bucket, bundle, by="bench")
        versions = JobVersions(
            model_id="bench",
            prompt_version="bench",
            prompt_sha256="0" * 64,
            code_version="bench",
            created_at="2026-12-04T00:00:00Z",
            definition=bundle.name,
            definition_sha256=bundle.sha256,
        )
        started = time.time()
        store = s3_backends[ACCOUNT_ID]["global"]
        synthetic = write_fan_in_job(
            job.s3,
            job.bucket,
            job_id,
            documents,
            bundle=bundle,
            versions=versions,
            clean=True,
            progress=say,
            # Straight into the local cloud's S3 store (in this process): writing through the endpoint costs a
            # request per object, minutes at 100,000 documents, and the writing is not what is measured.
            put=lambda key, body: store.put_object(job.bucket, key, body),
        )
        seed_seconds = round(time.time() - started, 1)
        workflow = json.loads(
            job.sfn.describe_state_machine(stateMachineArn=job.ctx.state_machine_arn)["definition"]
        )
        # The stages machine is not in the template, so the workflow role may not start its Maps' children
        # (the local IAM refuses it, as AWS would): it runs as a role of its own, which the local cloud does
        # not evaluate (docs/local-cloud.md "IAM": roles not deployed from a template).
        workflow_role = job.sfn.describe_state_machine(stateMachineArn=job.ctx.state_machine_arn)["roleArn"]
        role = f"{workflow_role.rsplit('/', 1)[0]}/fan-in-bench-stages"
        machine = job.sfn.create_state_machine(
            name="fan-in-bench-stages", definition=json.dumps(stages_definition(workflow)), roleArn=role
        )["stateMachineArn"]
        functions = {
            config["FunctionName"]: config
            for config in job.ctx.client("lambda").list_functions()["Functions"]
        }
        request = {
            "job_id": job_id,
            "map_run": synthetic.map_run.model_dump(mode="json"),
            "options": {},
            "actions": {"actions": []},
        }
        cloud.requests.reset()
        before = len(cloud.runtime.invocations)
        say(f"{documents} documents: seeded in {seed_seconds} s; running the stages")
        started = time.time()
        execution = job.sfn.start_execution(stateMachineArn=machine, name=job_id, input=json.dumps(request))
        described = _wait(job.sfn, execution["executionArn"])
        wall = time.time() - started
        say(f"{documents} documents: {described['status']} in {wall:.1f} s")
        invocations = cloud.runtime.invocations[before:]
        output = json.loads(described.get("output") or "{}")
        by_function: dict[str, dict[str, Any]] = {}
        for record in invocations:
            config = functions.get(record.function, {})
            figures = by_function.setdefault(
                record.function,
                {
                    "function": record.function,
                    "configured_memory_mb": config.get("MemorySize"),
                    "configured_timeout_seconds": config.get("Timeout"),
                    "invocations": 0,
                    "errors": [],
                    "peak_memory_mb": [],
                    "duration_ms": [],
                },
            )
            figures["invocations"] += 1
            if record.error_type is not None:
                figures["errors"].append(record.error_type)
            figures["peak_memory_mb"].append(record.max_memory_mb)
            figures["duration_ms"].append(round(record.duration_ms))
        requests = cloud.requests.snapshot()
        return {
            "documents": documents,
            "partitions": synthetic.parts,
            "status": described["status"],
            "error": described.get("error"),
            "verified": (output.get("verification") or {}).get("verified"),
            "seed_seconds": seed_seconds,
            "seeded_objects": synthetic.objects_written,
            "seeded_bytes": synthetic.bytes_written,
            "wall_seconds": round(wall, 2),
            "seconds_per_document": wall / documents,
            "invocations": list(by_function.values()),
            "requests": requests,
            "requests_total": sum(sum(operations.values()) for operations in requests.values()),
            "bytes_by_operation": cloud.requests.bytes(),
            "bytes_total": sum(cloud.requests.bytes().values()),
        }


def run_fan_in_bench(documents: int, *, time_scale: float = 1.0, say: Any = None) -> dict[str, Any]:
    """The figures at N / 10 and at N, and their ratio per document."""
    say = say or (lambda _: None)
    runs = [measure(size, time_scale=time_scale, say=say) for size in (max(documents // 10, 1), documents)]
    small, large = runs
    peaks = [
        (peak / figures["configured_memory_mb"], duration / 1000 / figures["configured_timeout_seconds"])
        for figures in large["invocations"]
        for peak, duration in zip(figures["peak_memory_mb"], figures["duration_ms"], strict=True)
        if peak is not None and figures["configured_memory_mb"] and figures["configured_timeout_seconds"]
    ]
    return {
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "runs": runs,
        "seconds_per_document_ratio": round(large["seconds_per_document"] / small["seconds_per_document"], 3),
        "largest_share_of_configured_memory": round(max((m for m, _ in peaks), default=0.0), 3),
        "largest_share_of_configured_timeout": round(max((t for _, t in peaks), default=0.0), 3),
        "leaves_out": LEAVES_OUT,
    }


def print_fan_in(figures: dict[str, Any], console: Console) -> None:
    for run in figures["runs"]:
        console.print(
            f"\n{run['documents']:,} documents, {run['partitions']} partitions: {run['status']} "
            f"(verified: {run['verified']}) in {run['wall_seconds']} s, "
            f"{run['seconds_per_document'] * 1000:.3f} ms per document; {run['requests_total']:,} requests, "
            f"{run['bytes_total'] / 1e6:.1f} MB"
        )
        table = Table("function", "invocations", "peak MB (max)", "of configured", "ms (max)", "timeout s")
        for figures_ in run["invocations"]:
            peaks = [peak for peak in figures_["peak_memory_mb"] if peak is not None]
            table.add_row(
                figures_["function"],
                str(figures_["invocations"]),
                f"{max(peaks, default=0):.0f}",
                str(figures_["configured_memory_mb"]),
                str(max(figures_["duration_ms"])),
                str(figures_["configured_timeout_seconds"]),
            )
        console.print(table)
    console.print(
        f"time per document at the larger size: {figures['seconds_per_document_ratio']} times the smaller's; "
        f"largest peak {figures['largest_share_of_configured_memory']:.0%} of its configured memory, "
        f"longest {figures['largest_share_of_configured_timeout']:.0%} of its timeout. "
        f"Leaves out: {figures['leaves_out']}."
    )
