"""CPU seconds a local job costs (``docagent demo --json``'s ``cpu_seconds``, ``docagent bench``): measured
with getrusage, so the figure does not depend on how busy the machine is, as wall time does."""

from __future__ import annotations

import resource

CpuClock = tuple[float, float]


def cpu_clock() -> CpuClock:
    """CPU seconds (user + system) of this process, and of its children that have exited and been waited
    for."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def cpu_figures(
    before: CpuClock, job_done: CpuClock, cloud_stopped: CpuClock, documents: int
) -> dict[str, float]:
    """What a job (and its redrive) cost an in-process local cloud: this process from the start of the job to
    its end (the endpoint, the Lambda runtime, the Step Functions interpreter, and the demo's progress
    polling), and the Lambda workers (child processes started during the job and waited for when the cloud
    stops; their cold starts included)."""
    endpoint = job_done[0] - before[0]
    workers = cloud_stopped[1] - before[1]
    return {
        "endpoint_process": round(endpoint, 2),
        "workers": round(workers, 2),
        "per_document": round((endpoint + workers) / documents, 4),
    }
