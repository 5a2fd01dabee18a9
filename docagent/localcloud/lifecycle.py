"""The local cloud's process lifecycle: up (served in this process until SIGTERM or Ctrl-C, or detached as a
child process that serves it), status, and down; the record a serving cloud keeps in
``project.LOCAL_CLOUD_FILE`` while it runs. ``docagent local up|status|down`` (docagent/local_commands.py) is
this module with a parser and a human view.

What it refuses is a ``LifecycleError`` carrying the CLI's exit code and error name; nothing here prints
except ``serve``, through the ``say`` it is given.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docagent import project

MODEL_FAULTS_HELP = (
    "local Bedrock faults, e.g. throttle=0.3,unavailable=0.05,timeout=0.01,malformed=0.02,cutoff=0.02,"
    "latency=0.05,deny=MODEL_ID,missing=MODEL_ID,corrupt=FIELD:0.5,misquote=FIELD:0.5,seed=7; "
    "models=MODEL_ID keeps the others (but deny, missing) to that model's calls"
)
MODEL_HELP = (
    "what answers the model steps: labels (default: the samples' labels and recordings), bedrock (real "
    "Amazon Bedrock, your AWS credentials and Region), or openai=URL[#MODEL] (an OpenAI-compatible "
    "chat-completions endpoint: Ollama, vLLM, LM Studio)"
)


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    """``--model SPEC`` and ``--record`` (docagent/localcloud/bedrock/backends.py)."""
    parser.add_argument("--model", metavar="SPEC", help=MODEL_HELP)
    parser.add_argument(
        "--record",
        action="store_true",
        help="keep each reply as its document's recording (NAME-SHA.recording.json beside a labelled "
        "sample): a later run without --model replays it offline",
    )


def model_choice(args: argparse.Namespace) -> Any:
    """``--model SPEC [--record]`` read (a docagent/localcloud/bedrock/backends.py ModelChoice), None for the
    labels without recording; ValueError naming the forms for a bad spec."""
    from docagent.localcloud.bedrock.backends import parse_model  # the CLI starts without pydantic models

    if args.model is None and not args.record:
        return None
    return parse_model(args.model or "labels", record=args.record)


EXIT_REFUSED, EXIT_FAILED, EXIT_NOT_FOUND = 2, 1, 3
# A loaded machine imports moto slowly; a big journal takes a while to replay.
DETACHED_START_SECONDS = 180
DOWN_WAIT_SECONDS = 15


class LifecycleError(Exception):
    """Why the local cloud cannot start or stop: the message, the CLI's exit code, and a name for --json
    (None: the CLI's default name for the exit code)."""

    def __init__(self, message: str, exit_code: int = EXIT_REFUSED, error_type: str | None = None) -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.error_type = error_type


@dataclass(frozen=True)
class UpOptions:
    """``docagent local up``'s options."""

    port: int
    time_scale: float | None = None
    fresh: bool = False
    skip_corrupt: bool = False
    model_faults: str | None = None
    reader: str | None = None
    deliver_twice: tuple[int, ...] = ()
    model: str | None = None  # --model SPEC (docagent/localcloud/bedrock/backends.py)
    record: bool = False
    allow_host: tuple[
        str, ...
    ] = ()  # --allow-host NAME: served besides 127.0.0.1/localhost (request_guard.py)
    allow_origin: tuple[str, ...] = ()  # --allow-origin ORIGIN: a browser origin allowed to call the endpoint
    iam: bool = True  # --no-iam: the deployed roles' requests are not authorized (debugging only)


def port_free(port: int) -> bool:
    with socket.socket() as probe:
        # As the server binds: connections of a cloud that just died (TIME_WAIT) do not hold the port.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def restored_line(record: dict[str, Any]) -> str:
    """What a cloud restored at its start, in one line."""
    restored = record.get("restored") or {}
    if not restored.get("executions") and not restored.get("requests"):
        return "nothing to restore: the local cloud starts empty" + _journal_line(restored)
    running, jobs = restored.get("running", 0), restored.get("executions", 0)
    line = f"restored {jobs} job{'' if jobs == 1 else 's'}, {running} running"
    line += ", resuming" if running else ""
    changes = restored.get("requests", 0)
    since = f", last changed {restored['last_change']}" if restored.get("last_change") else ""
    kept = record.get("time_scale_kept")
    scale = f"; time scale {record.get('time_scale')}, kept from that run" if kept else ""
    return (
        line
        + (
            f" ({changes} change{'' if changes == 1 else 's'} replayed from {restored.get('state_dir')} "
            f"in {restored.get('seconds', 0):.1f} s{since})"
        )
        + scale
        + _journal_line(restored)
        + " (`docagent local up --fresh` starts empty)"
    )


def _last_change(state_dir: Path) -> str | None:
    """When the restored state last changed: the newest file of the state folder, as UTC."""
    from docagent.localcloud.state.persistence import state_folder

    times = [path.stat().st_mtime for path in state_folder(state_dir).rglob("*") if path.is_file()]
    if not times:
        return None
    return dt.datetime.fromtimestamp(max(times), dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _journal_line(restored: dict[str, Any]) -> str:
    """What opening the journal cut off (a torn last record) or set aside (--skip-corrupt), if anything."""
    notes = []
    if restored.get("torn_tail_bytes"):
        notes.append(
            f"a torn last record ({restored['torn_tail_bytes']} bytes at byte "
            f"{restored['torn_tail_offset']}, never answered) was cut off"
        )
    notes += [f"set aside: {damaged}" for damaged in restored.get("set_aside", [])]
    return "".join(f"; {note}" for note in notes)


def time_scale_to_start(options: UpOptions) -> float:
    """The checks before a cloud starts (none running, the port free, the state directory writable), then
    its time scale: the option's, else the last one used here (unless --fresh), else 1."""
    from docagent.localcloud.state.persistence import load_settings

    existing = project.running_cloud()
    if existing:
        raise LifecycleError(
            f"the local cloud already runs at {existing['endpoint']} (pid {existing['pid']})"
        )
    if not port_free(options.port):
        raise LifecycleError(
            f"port {options.port} is taken by another program: pick another with --port", EXIT_FAILED
        )
    problem = project.state_dir_problem(project.LOCAL_DIR)
    if problem:
        raise LifecycleError(problem, EXIT_FAILED, "StateDirectoryNotWritable")
    saved = {} if options.fresh else load_settings(project.LOCAL_DIR)
    return options.time_scale or float(saved.get("time_scale", 1.0))


def start_detached(options: UpOptions, time_scale: float) -> tuple[dict[str, Any], int]:
    """Start ``docagent local up`` as a child process in its own session, wait until it serves; return the
    record it wrote and its pid. Its output goes to cloud.log in the state directory."""
    command = [sys.executable, "-m", "docagent.cli", "local", "up", "--port", str(options.port)]
    command += ["--time-scale", str(time_scale)] + (["--fresh"] if options.fresh else [])
    command += ["--skip-corrupt"] if options.skip_corrupt else []
    if options.model_faults:
        command += ["--model-faults", options.model_faults]
    command += ["--model", options.model] if options.model else []
    command += ["--record"] if options.record else []
    command += [] if options.iam else ["--no-iam"]
    command += ["--reader", str(Path(options.reader).resolve())] if options.reader else []
    command += [argument for index in options.deliver_twice for argument in ("--deliver-twice", str(index))]
    command += [argument for name in options.allow_host for argument in ("--allow-host", name)]
    command += [argument for origin in options.allow_origin for argument in ("--allow-origin", origin)]
    project.LOCAL_DIR.mkdir(parents=True, exist_ok=True)
    log_file = project.LOCAL_DIR / "cloud.log"
    log = log_file.open("ab")
    logged = log.tell()
    process = subprocess.Popen(command, cwd=project.ROOT, stdout=log, stderr=log, start_new_session=True)
    deadline = time.time() + DETACHED_START_SECONDS
    while not project.running_cloud():
        if process.poll() is not None:
            with log_file.open("rb") as printed:
                printed.seek(logged)
                said = " ".join(printed.read().decode("utf-8", "replace").split())
            reason = said.rsplit("error: ", 1)[1] if "error: " in said else f"see {log_file}"
            raise LifecycleError(f"the local cloud did not start: {reason}", EXIT_FAILED)
        if time.time() > deadline:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            raise LifecycleError(
                f"the local cloud did not start within {DETACHED_START_SECONDS} s; see {log_file}",
                EXIT_FAILED,
            )
        time.sleep(0.1)
    return project.running_cloud() or {}, process.pid


def serve(
    options: UpOptions, time_scale: float, *, model_faults: Any, reader: Any, say: Callable[[str], None]
) -> None:
    """Serve the local cloud in this process until SIGTERM or SIGINT; its record is in LOCAL_CLOUD_FILE
    while it serves. ``model_faults`` and ``reader`` are parsed (the local Bedrock's switches, a reader)."""
    from docagent.localcloud.server import LocalCloud
    from docagent.localcloud.state.journal import JournalCorruptError
    from docagent.localcloud.state.persistence import PortTakenError
    from docagent.localcloud.stepfunctions.distributed_map import deliver_twice

    if options.fresh:
        project.LOCAL_STACK_FILE.unlink(missing_ok=True)  # what it deployed is forgotten with the rest
    last_change = None if options.fresh else _last_change(project.LOCAL_DIR)  # before the start writes
    cloud = LocalCloud(
        project.LOCAL_DIR,
        port=options.port,
        time_scale=time_scale,
        fresh=options.fresh,
        model_faults=model_faults,
        skip_corrupt=options.skip_corrupt,
        reader=reader,
        hosts=options.allow_host,
        origins=options.allow_origin,
        iam=None if options.iam else False,
    )
    try:
        cloud.start()
    except (PortTakenError, JournalCorruptError) as error:
        cloud.stop()
        raise LifecycleError(str(error), EXIT_FAILED, type(error).__name__.removesuffix("Error")) from None
    deliver_twice(set(options.deliver_twice))
    if options.model or options.record:
        from docagent.localcloud.bedrock.backends import parse_model
        from docagent.localcloud.bedrock.converse_api import STATE

        STATE.choose_model(parse_model(options.model or "labels", record=options.record))
    record = {
        "pid": os.getpid(),
        "port": cloud.port,
        "endpoint": cloud.endpoint,
        "time_scale": time_scale,
        "time_scale_kept": not options.time_scale and not options.fresh and time_scale != 1.0,
        "started_at": time.time(),
        "state_dir": str(project.LOCAL_DIR),
        "restored": {
            "executions": cloud.restored.executions,
            "running": cloud.restored.running,
            "skipped": cloud.restored.skipped,
            "requests": cloud.replayed_requests,
            "seconds": round(cloud.restore_seconds, 2),
            "state_dir": str(project.LOCAL_DIR),
            "last_change": last_change if cloud.restored.executions else None,
            **cloud.journal_report(),
        },
    }
    say(restored_line(record))
    project.save_cloud_record(record)
    say(f"local cloud serving at {cloud.endpoint} (time scale {time_scale}); Ctrl-C stops it")
    stop = False

    def request_stop(*_: Any) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    try:
        while not stop:
            time.sleep(0.2)
    finally:
        cloud.stop()
        project.LOCAL_CLOUD_FILE.unlink(missing_ok=True)


def status() -> dict[str, Any]:
    """Whether the local cloud is up (its record), where its state lives and how big it is."""
    record = project.running_cloud()
    journal = project.LOCAL_JOURNAL
    tickets = project.LOCAL_DIR / "ticket-service" / "tickets.sqlite3"
    sizes: dict[str, int] = {
        "journal_bytes": journal.stat().st_size if journal.exists() else 0,
        "tickets_bytes": tickets.stat().st_size if tickets.exists() else 0,
    }
    return {
        "up": record is not None,
        "cloud": record,
        "state_dir": str(project.LOCAL_DIR),
        "journal": str(journal),
        **sizes,
        "state_bytes": sum(sizes.values()),
        "deployed": project.LOCAL_STACK_FILE.exists(),
    }


def stop() -> dict[str, Any]:
    """SIGTERM the running local cloud and wait (a while) until its record is gone; return the record."""
    record = project.running_cloud()
    if record is None:
        raise LifecycleError("no local cloud is running", EXIT_NOT_FOUND)
    with contextlib.suppress(ProcessLookupError):  # it stopped between the look and the signal: as well
        os.kill(record["pid"], signal.SIGTERM)
    deadline = time.time() + DOWN_WAIT_SECONDS
    while time.time() < deadline and project.running_cloud():
        time.sleep(0.1)
    return record
