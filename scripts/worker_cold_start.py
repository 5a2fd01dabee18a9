"""A local Lambda worker's cold start, forked from the fork server and as a fresh interpreter (printed only).

    .venv/bin/python scripts/worker_cold_start.py [--rounds 3] [--json]

Unpacks the code asset (``functions/``) as the local runtime does, then starts, one after another, a worker
of each handler ``--rounds`` times in each mode (fresh: ``DOCAGENT_LAMBDA_FORK=0``'s path; forked:
docagent/localcloud/lambdas/forking.py) and waits until its handler is imported. Prints, per mode, the
median wall time to ready, the worker's own CPU seconds at ready (from /proc), the fork server's CPU (its
imports, paid once) and the CPU of all of it. Wall times depend on the machine's load: read the CPU.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from docagent import project
from docagent.localcloud.lambdas.forking import Launcher
from docagent.localcloud.lambdas.runtime import FunctionSpec, LambdaRuntime, Worker

HANDLERS = ("prepare_job", "process_document", "build_report", "run_actions", "verify_job")


def cpu_seconds(pid: int) -> float:
    """User and system CPU of one process, itself only (/proc/PID/stat, utime and stime)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def code_asset() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted((project.ROOT / "functions").rglob("*.py")):
            archive.write(path, path.relative_to(project.ROOT))
    return buffer.getvalue()


def measure(root: Path, forked: bool, rounds: int) -> dict[str, Any]:
    launcher = Launcher(enabled=forked)
    base = {key: os.environ[key] for key in ("PATH", "HOME", "LANG") if key in os.environ}
    walls: list[float] = []
    own: list[float] = []
    started_at = time.perf_counter()
    for _ in range(rounds):
        for handler in HANDLERS:
            spec = FunctionSpec(
                handler, f"arn:{handler}", f"functions.handlers.{handler}.handler", 60, 512, {}, "-", "/cold"
            )
            began = time.perf_counter()
            worker = Worker(spec, root, base, lambda *_: None, launcher)
            if not worker.wait_ready():
                raise SystemExit(f"{handler}: the worker did not get ready")
            walls.append(time.perf_counter() - began)
            own.append(cpu_seconds(worker.pid))
            worker.close()
    server = cpu_seconds(launcher.server.process.pid) if launcher.server is not None else 0.0
    launcher.stop()
    return {
        "mode": "forked" if forked else "fresh",
        "workers": len(walls),
        "forked": launcher.forked,
        "wall_to_ready_ms_median": round(statistics.median(walls) * 1000, 1),
        "worker_cpu_ms_median": round(statistics.median(own) * 1000, 1),
        "server_cpu_seconds": round(server, 2),
        "cpu_seconds_total": round(sum(own) + server, 2),
        "wall_seconds": round(time.perf_counter() - started_at, 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = LambdaRuntime(Path(folder), {}, lambda *_: None).code_root("cold-start", code_asset())
        results = [measure(root, forked, arguments.rounds) for forked in (False, True)]
    load = os.getloadavg()[0]
    if arguments.json:
        print(json.dumps({"load_average": load, "modes": results}))
    else:
        print(f"load average {load:.1f}")
        for result in results:
            print(", ".join(f"{key} {value}" for key, value in result.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
