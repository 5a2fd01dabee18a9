"""``docagent``: the operator CLI. Every command prints a human view, or one JSON object with --json."""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
from importlib.metadata import version as package_version
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from docagent import project
from docagent.operator import register_operator_commands
from docagent.operator.context import (
    EXIT_BAD_REQUEST,
    EXIT_JOB_FAILED,
    EXIT_NOT_FOUND,
    EXIT_OK,
    OperatorError,
    command,
    emit,
)
from stacks import outputs as names

console = Console(stderr=True, markup=False)  # paths, ids and errors print as written


# Cells run at once: the invoice example's small text documents, and a definition folder's samples (PDFs
# and DOCX files of several pages: at time scale 0.1 a function's 120 s timeout is 12 s, which six jobs
# of real documents at once overran on a 2-core machine, measured 2026-12-01).
CHAOS_PARALLEL, JOB_FOLDER_PARALLEL = 6, 2


def _port_free(port: int) -> bool:
    with socket.socket() as probe:
        # As the server binds: connections of a cloud that just died (TIME_WAIT) do not hold the port.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _restored_line(record: dict[str, Any]) -> str:
    restored = record.get("restored") or {}
    if not restored.get("executions") and not restored.get("requests"):
        return "nothing to restore: the local cloud starts empty" + _journal_line(restored)
    running, jobs = restored.get("running", 0), restored.get("executions", 0)
    line = f"restored {jobs} job{'' if jobs == 1 else 's'}, {running} running"
    line += ", resuming" if running else ""
    changes = restored.get("requests", 0)
    return (
        line
        + (
            f" ({changes} change{'' if changes == 1 else 's'} replayed from {restored.get('state_dir')} "
            f"in {restored.get('seconds', 0):.1f} s)"
        )
        + _journal_line(restored)
    )


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


def cmd_local_up(args: argparse.Namespace) -> int:
    from docagent.localcloud.persistence import load_settings

    existing = project.running_cloud()
    if existing:
        raise OperatorError(f"the local cloud already runs at {existing['endpoint']} (pid {existing['pid']})")
    if not _port_free(args.port):
        raise OperatorError(f"port {args.port} is taken by another program: pick another with --port", 1)
    problem = project.state_dir_problem(project.LOCAL_DIR)
    if problem:
        raise OperatorError(problem, 1, "StateDirectoryNotWritable")
    saved = {} if args.fresh else load_settings(project.LOCAL_DIR)
    time_scale = args.time_scale or float(saved.get("time_scale", 1.0))
    if args.detach:
        return _up_detached(args, time_scale)
    return _serve(args, time_scale)


def _up_detached(args: argparse.Namespace, time_scale: float) -> int:
    command = [sys.executable, "-m", "docagent.cli", "local", "up", "--port", str(args.port)]
    command += ["--time-scale", str(time_scale)] + (["--fresh"] if args.fresh else [])
    command += ["--skip-corrupt"] if args.skip_corrupt else []
    if args.model_faults:
        command += ["--model-faults", args.model_faults]
    command += ["--reader", str(Path(args.reader).resolve())] if args.reader else []
    command += [argument for index in args.deliver_twice for argument in ("--deliver-twice", str(index))]
    project.LOCAL_DIR.mkdir(parents=True, exist_ok=True)
    log_file = project.LOCAL_DIR / "cloud.log"
    log = log_file.open("ab")
    logged = log.tell()
    process = subprocess.Popen(command, cwd=project.ROOT, stdout=log, stderr=log, start_new_session=True)
    deadline = time.time() + 180  # a loaded machine imports moto slowly; a big journal takes a while
    while not project.running_cloud():
        if process.poll() is not None:
            with log_file.open("rb") as printed:
                printed.seek(logged)
                said = " ".join(printed.read().decode("utf-8", "replace").split())
            reason = said.rsplit("error: ", 1)[1] if "error: " in said else f"see {log_file}"
            raise OperatorError(f"the local cloud did not start: {reason}", 1)
        if time.time() > deadline:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            raise OperatorError(f"the local cloud did not start within 180 s; see {log_file}", 1)
        time.sleep(0.1)
    record = project.running_cloud() or {}

    def human() -> None:
        console.print(_restored_line(record))
        console.print(f"local cloud up at {record.get('endpoint')} (pid {process.pid})")

    emit(args, record, human)
    return EXIT_OK


def _serve(args: argparse.Namespace, time_scale: float) -> int:
    from docagent.localcloud.distributed_map import deliver_twice
    from docagent.localcloud.journal import JournalCorruptError
    from docagent.localcloud.persistence import PortTakenError
    from docagent.localcloud.server import LocalCloud

    if args.fresh:
        project.LOCAL_STACK_FILE.unlink(missing_ok=True)  # what it deployed is forgotten with the rest
    cloud = LocalCloud(
        project.LOCAL_DIR,
        port=args.port,
        time_scale=time_scale,
        fresh=args.fresh,
        model_faults=_model_faults(args),
        skip_corrupt=args.skip_corrupt,
        reader=_reader(args),
    )
    try:
        cloud.start()
    except (PortTakenError, JournalCorruptError) as error:
        cloud.stop()
        raise OperatorError(str(error), 1, type(error).__name__.removesuffix("Error")) from None
    deliver_twice(set(args.deliver_twice))
    record = {
        "pid": os.getpid(),
        "port": cloud.port,
        "endpoint": cloud.endpoint,
        "time_scale": time_scale,
        "started_at": time.time(),
        "state_dir": str(project.LOCAL_DIR),
        "restored": {
            "executions": cloud.restored.executions,
            "running": cloud.restored.running,
            "skipped": cloud.restored.skipped,
            "requests": cloud.replayed_requests,
            "seconds": round(cloud.restore_seconds, 2),
            "state_dir": str(project.LOCAL_DIR),
            **cloud.journal_report(),
        },
    }
    console.print(_restored_line(record))
    project.LOCAL_CLOUD_FILE.write_text(json.dumps(record))
    console.print(f"local cloud serving at {cloud.endpoint} (time scale {time_scale}); Ctrl-C stops it")
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
    return EXIT_OK


def cmd_local_status(args: argparse.Namespace) -> int:
    record = project.running_cloud()
    journal = project.LOCAL_JOURNAL
    tickets = project.LOCAL_DIR / "ticket-service" / "tickets.sqlite3"
    sizes: dict[str, int] = {
        "journal_bytes": journal.stat().st_size if journal.exists() else 0,
        "tickets_bytes": tickets.stat().st_size if tickets.exists() else 0,
    }
    status: dict[str, Any] = {
        "up": record is not None,
        "cloud": record,
        "state_dir": str(project.LOCAL_DIR),
        "journal": str(journal),
        **sizes,
        "state_bytes": sum(sizes.values()),
        "deployed": project.LOCAL_STACK_FILE.exists(),
    }

    def human() -> None:
        if record:
            console.print(
                f"local cloud up at {record['endpoint']} (pid {record['pid']}, time scale "
                f"{record.get('time_scale')}); at its start: {_restored_line(record)}"
            )
        else:
            console.print("local cloud down: start it with `docagent local up --detach`")
        size = sum(sizes.values()) / 1e6
        console.print(
            f"state in {project.LOCAL_DIR}: {size:.1f} MB (journal {sizes['journal_bytes'] / 1e6:.1f} MB, "
            f"tickets {sizes['tickets_bytes'] / 1e6:.1f} MB); "
            + ("a deployment is recorded" if status["deployed"] else "nothing deployed")
        )

    emit(args, status, human)
    return EXIT_OK


def cmd_local_down(args: argparse.Namespace) -> int:
    record = project.running_cloud()
    if record is None:
        raise OperatorError("no local cloud is running", EXIT_NOT_FOUND)
    os.kill(record["pid"], signal.SIGTERM)
    deadline = time.time() + 15
    while time.time() < deadline and project.running_cloud():
        time.sleep(0.1)
    emit(args, {"stopped": record}, lambda: console.print(f"local cloud at {record['endpoint']} stopped"))
    return EXIT_OK


def _model_faults(args: argparse.Namespace) -> Any:
    from docagent.localcloud.bedrock import parse_model_faults

    if not getattr(args, "model_faults", None):
        return None
    try:
        return parse_model_faults(args.model_faults)
    except ValueError as error:
        raise OperatorError(str(error)) from None


def _reader(args: argparse.Namespace) -> Any:
    from docagent.localcloud.labels import load_reader

    if not getattr(args, "reader", None):
        return None
    try:
        return load_reader(args.reader)
    except ValueError as error:
        raise OperatorError(str(error)) from None


def cmd_local_labels(args: argparse.Namespace) -> int:
    from docagent.localcloud.labels import LabelsInvalid, post_labels, read_labels, read_recordings

    try:
        labels, recordings = read_labels(args.directory), read_recordings(args.directory)
    except LabelsInvalid as invalid:
        details = {"problems": invalid.problems}
        raise OperatorError(str(invalid), error_type="LabelsInvalid", details=details) from None
    held = post_labels(_endpoint(args), labels, recordings)
    answer = {
        "registered": len(labels) + len(recordings),
        "labels": held["labels"],
        "recordings": held["recordings"],
        "directory": str(args.directory),
    }
    emit(
        args,
        answer,
        lambda: console.print(f"{len(labels)} label(s) registered; the local cloud holds {held['labels']}"),
    )
    return EXIT_OK


def cmd_local_model_faults(args: argparse.Namespace) -> int:
    from docagent.localcloud.bedrock import model_faults_of, set_model_faults

    endpoint = _endpoint(args)
    if args.faults is None:
        answer = model_faults_of(endpoint)
    else:
        faults = _model_faults(argparse.Namespace(model_faults=args.faults))
        answer = set_model_faults(endpoint, faults)
    emit(args, answer, lambda: Console(markup=False).print_json(data=answer))
    return EXIT_OK


def _endpoint(args: argparse.Namespace) -> str:
    if getattr(args, "endpoint", None):
        return str(args.endpoint)
    record = project.running_cloud()
    if record is None:
        raise OperatorError(project.cloud_down_message(), EXIT_NOT_FOUND, "LocalCloudDown")
    return str(record["endpoint"])


def cmd_local_deploy(args: argparse.Namespace) -> int:
    from docagent.localcloud.deploy import DeployError, deploy
    from docagent.localcloud.synth import synth_local

    endpoint = _endpoint(args)
    out_dir = Path(args.out_dir) if args.out_dir else synth_local()
    try:
        stack = deploy(out_dir, args.stack_name, endpoint)
    except DeployError as error:
        raise OperatorError(str(error), 1) from None
    stack.save(project.LOCAL_STACK_FILE)
    emit(
        args,
        stack.__dict__,
        lambda: console.print(
            f"deployed {len(stack.physical)} resources of {stack.stack_name}; outputs:\n"
            + "\n".join(f"  {name} = {value}" for name, value in stack.outputs.items())
        ),
    )
    return EXIT_OK


def cmd_demo(args: argparse.Namespace) -> int:
    from docagent.drills.demo import Crash, default_crash_index, default_time_scale, run_demo

    job_folder = _job_folder(args, "--crash-cloud")
    if args.crash_cloud:
        from docagent.drills.cloud_crash import run_cloud_crash_demo

        if args.documents < 1:
            raise OperatorError("--documents must be at least 1")
        index = default_crash_index(args.documents) if args.crash_at is None else args.crash_at
        if not 0 <= index < args.documents:
            raise OperatorError(f"--crash-at must be a document index from 0 to {args.documents - 1}")
        time_scale = args.time_scale or default_time_scale(args.documents)
        summary = run_cloud_crash_demo(args.documents, time_scale, index, show_progress=not args.json)
        emit(args, summary, lambda: _print_summary(summary))
        return EXIT_OK if summary["status"] == "SUCCEEDED" and summary["verified"] else EXIT_JOB_FAILED
    from docagent.drills.formats import parse_formats

    crash = None
    # With --model-faults the story is the model's (throttling ridden out by Retry): no crash unless asked.
    asked = args.crash_at is not None or args.crash_mode is not None
    if not args.no_crash and (asked or not args.model_faults):
        index = default_crash_index(args.documents) if args.crash_at is None else args.crash_at
        crash = Crash(document_index=index, mode=args.crash_mode or "redrive")
    try:
        summary = run_demo(
            documents=args.documents,
            time_scale=args.time_scale,
            show_progress=not args.json,
            crash=crash,
            keep=args.keep,
            persist=not args.no_persistence,
            model_faults=_model_faults(args),
            formats=parse_formats(args.formats),
            documents_per_child=args.documents_per_child,
            job_folder=job_folder,
            inference=args.inference,
        )
    except ValueError as error:
        raise OperatorError(str(error)) from None
    emit(args, summary, lambda: _print_summary(summary))
    if summary.get("kept") and not args.json:
        kept = summary["kept"]
        console.print(
            f"The local cloud stays up at {kept['endpoint']} (pid {kept['pid']}) "
            f"with job {summary['job_id']}: "
            "explore it with\n  "
            + "\n  ".join(kept["commands"][:-1])
            + f"\nand stop it with `{kept['commands'][-1]}`."
        )
    return EXIT_OK if summary["status"] == "SUCCEEDED" and summary["verified"] else EXIT_JOB_FAILED


def cmd_bench(args: argparse.Namespace) -> int:
    from docagent.drills.benchmarks import print_figures, run_benchmarks

    if args.documents_per_child < 1:
        raise OperatorError("--documents-per-child must be at least 1")
    try:
        figures = run_benchmarks(
            args.documents, args.time_scale, documents_per_child=args.documents_per_child
        )
    except ValueError as error:
        raise OperatorError(str(error)) from None
    emit(args, figures, lambda: print_figures(figures, Console(markup=False)))
    return EXIT_OK


def cmd_cost(args: argparse.Namespace) -> int:
    from docagent.drills.cost import UsageModel, cost_report, deployed_config, measure

    if args.documents < 1:
        raise OperatorError("--documents must be at least 1")
    config = deployed_config()
    if args.usage:
        try:
            saved = json.loads(Path(args.usage).read_text())
            model = UsageModel(
                tuple(saved["sizes"]),
                saved["per_document"],
                saved["per_job"],
                int(saved.get("documents_per_child", 1)),
            )
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise OperatorError(
                f"--usage {args.usage}: not a usage file written by --save-usage ({error})"
            ) from None
    else:
        model = measure()
    documents_per_child = args.documents_per_child or config.documents_per_child
    if documents_per_child < 1:
        raise OperatorError("--documents-per-child must be at least 1")
    try:
        report = cost_report(args.documents, model.batched(documents_per_child), config)
    except LookupError as error:
        raise OperatorError(str(error)) from None
    if args.save_usage:
        Path(args.save_usage).write_text(json.dumps(model.to_json(), indent=2))
    emit(args, report, lambda: _print_cost(report))
    return EXIT_OK


def _print_cost(report: dict[str, Any]) -> None:
    from rich.table import Table

    table = Table(
        title=f"docagent cost: {report['documents']:,} documents (prices as of {report['prices_as_of']})"
    )
    for column in ("service", "per 1,000 documents", "this job", "what"):
        table.add_column(column, justify="left" if column in ("service", "what") else "right")
    for service, figures in report["by_service"].items():
        what = ", ".join(
            f"{name} {value:,}" if isinstance(value, (int, float)) else f"{name} {value}"
            for name, value in figures.items()
            if name not in ("usd", "per_1000_usd")
        )
        table.add_row(service, f"${figures['per_1000_usd']:,.4f}", f"${figures['usd']:,.2f}", what)
    table.add_row("total", f"${report['per_1000_usd']:,.4f}", f"${report['total_usd']:,.2f}", "")
    Console(markup=False).print(table)
    modes = report["inference"]
    batch = "n/a" if modes["batch_usd"] is None else f"${modes['batch_usd']:,.2f}"
    Console(markup=False).print(
        f"on-demand ${modes['on_demand_usd']:,.2f}, batch inference {batch}: {modes['verdict']} "
        "(docs/batch.md)"
    )


def cmd_chaos(args: argparse.Namespace) -> int:
    from docagent.drills.chaos import (
        POINTS,
        CellOutcome,
        parse_choices,
        print_matrix,
        run_chaos,
        select_cells,
    )

    job_folder = _job_folder(args, "--cloud")
    if args.cloud:
        from docagent.drills.cloud_chaos import REDUCED_CLOUD_POINTS, print_cloud_cells, run_cloud_chaos

        try:
            points = (
                REDUCED_CLOUD_POINTS if args.reduced else parse_choices(args.points, POINTS, "fault points")
            )
            found = run_cloud_chaos(points, documents=args.documents, time_scale=args.time_scale)
        except ValueError as error:
            raise OperatorError(str(error)) from None
        emit(args, found, lambda: print_cloud_cells(found, Console(markup=False)))
        return EXIT_OK if found["passed"] else EXIT_JOB_FAILED

    try:
        cells = select_cells(args.points, args.modes, args.recoveries, reduced=args.reduced)
    except ValueError as error:
        raise OperatorError(str(error)) from None

    def progress(outcome: CellOutcome) -> None:
        colour = {"pass": "green", "fail": "bold red", "n/a": "dim"}[outcome.status]
        timing = "" if outcome.status == "n/a" else f" ({outcome.seconds:.0f} s)"
        where = f"{outcome.point} · {outcome.mode} · {outcome.recovery}"
        console.print(Text.assemble("  ", (outcome.status, colour), f" {where}{timing}"))

    try:
        summary = run_chaos(
            cells,
            documents=args.documents,
            at_least_once=not args.no_at_least_once,
            time_scale=args.time_scale,
            parallel=args.parallel or (JOB_FOLDER_PARALLEL if job_folder is not None else CHAOS_PARALLEL),
            on_cell=None if args.json else progress,
            job_folder=job_folder,
        )
    except ValueError as error:
        raise OperatorError(str(error)) from None
    wide = Console(width=max(Console(markup=False).width, 150), markup=False)
    emit(args, summary, lambda: print_matrix(summary, wide))
    return EXIT_OK if summary["passed"] else EXIT_JOB_FAILED


def cmd_experiment(args: argparse.Namespace) -> int:
    from docagent.drills.experiment.cli import run_command

    return run_command(args)


def _print_summary(summary: dict[str, Any]) -> None:
    from rich.table import Table

    table = Table(title=f"docagent demo: job {summary['job_id']}", show_header=False)
    for key, value in summary.items():
        if key == "kept":
            continue
        shown = value
        if key == "alerts":
            shown = [f"{alert['status']} at {alert['time']} to {alert['topic_arn']}" for alert in value]
        table.add_row(key.replace("_", " "), _readable(shown))
    Console(markup=False).print(table)


def _readable(value: Any) -> str:
    """One line for a table cell: nested records as `key value` pairs, lists comma-separated."""
    if isinstance(value, dict):
        return ", ".join(f"{key.replace('_', ' ')} {_readable(item)}" for key, item in value.items())
    if isinstance(value, list):
        return ", ".join(_readable(item) for item in value) or "none"
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


MODEL_FAULTS_HELP = (
    "local Bedrock faults, e.g. throttle=0.3,unavailable=0.05,timeout=0.01,malformed=0.02,cutoff=0.02,"
    "latency=0.05,deny=MODEL_ID,missing=MODEL_ID,corrupt=FIELD:0.5,seed=7"
)


def _add_local_commands(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    local = commands.add_parser("local", help="the local cloud").add_subparsers(
        dest="local_command", required=True
    )
    up = local.add_parser("up", parents=[common], help="serve the local cloud on 127.0.0.1")
    up.add_argument("--port", type=int, default=4566)
    up.add_argument(
        "--time-scale",
        type=float,
        help="scale retry intervals, waits and timeouts (default: the last one used here, else 1)",
    )
    up.add_argument(
        "--fresh",
        action="store_true",
        help="forget the kept state (jobs, buckets, tables, tickets) and start empty",
    )
    up.add_argument("--detach", action="store_true", help="run in the background (stop with `local down`)")
    up.add_argument(
        "--skip-corrupt",
        action="store_true",
        help="restore a journal with damaged records in its middle: keep every whole record, set exactly "
        "the damaged bytes aside next to it (without this flag such a journal is refused and named)",
    )
    up.add_argument(
        "--deliver-twice",
        type=int,
        action="append",
        default=[],
        metavar="INDEX",
        help="deliver this item twice to EXPRESS Distributed Map children (AWS runs them at least once)",
    )
    up.add_argument("--model-faults", metavar="SPEC", help=MODEL_FAULTS_HELP)
    up.add_argument(
        "--reader",
        metavar="FILE",
        help="a Python file answering unlabelled documents of one class (examples/invoices/local_reader.py)",
    )
    up.set_defaults(handler=cmd_local_up)
    labels = local.add_parser(
        "labels",
        parents=[common],
        help="register a folder's labels (NAME.EXT + NAME.label.json) and recordings (NAME.recording.json) "
        "with the local Bedrock",
    )
    labels.add_argument(
        "directory", metavar="DIR", help="a definition folder (its samples/) or a samples folder"
    )
    labels.add_argument("--endpoint", help="the local cloud's endpoint (default: the running one)")
    labels.set_defaults(handler=cmd_local_labels)
    faults = local.add_parser(
        "model-faults",
        parents=[common],
        help="show or change the local Bedrock's fault switches while the cloud runs",
    )
    faults.add_argument("faults", nargs="?", metavar="SPEC", help=MODEL_FAULTS_HELP + " ('none' resets)")
    faults.add_argument("--endpoint", help="the local cloud's endpoint (default: the running one)")
    faults.set_defaults(handler=cmd_local_model_faults)
    down = local.add_parser("down", parents=[common], help="stop a detached local cloud")
    down.set_defaults(handler=cmd_local_down)
    status = local.add_parser(
        "status", parents=[common], help="whether the local cloud is up, where its state lives, how big it is"
    )
    status.set_defaults(handler=cmd_local_status)
    deploy = local.add_parser(
        "deploy", parents=[common], help="deploy the synthesized app to the local cloud"
    )
    deploy.add_argument(
        "--out-dir", help="a synthesized cloud assembly (default: the app synthesized with the local profile)"
    )
    deploy.add_argument("--stack-name", default=names.STACK_NAME)
    deploy.add_argument("--endpoint", help="the local cloud's endpoint (default: the running one)")
    deploy.set_defaults(handler=cmd_local_deploy)


def _add_demo_command(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    demo = commands.add_parser("demo", parents=[common], help="run the main job on the local cloud")
    demo.add_argument("--documents", type=int, default=200)
    demo.add_argument(
        "--time-scale", type=float, help="default 0.05 for 200 documents, more for larger jobs (up to 1)"
    )
    demo.add_argument("--crash-at", type=int, help="index of the document whose worker dies (default 138)")
    demo.add_argument(
        "--crash-mode",
        choices=["redrive", "transient"],
        help="(default redrive) redrive: the worker dies on every attempt until the job is redriven; "
        "transient: only the first attempt dies and Retry recovers it",
    )
    demo.add_argument("--no-crash", action="store_true", help="run the job without a fault")
    demo.add_argument(
        "--keep",
        action="store_true",
        help="leave the local cloud up with the job in it (inspect, logs, trace work; local down stops it)",
    )
    demo.add_argument(
        "--no-persistence",
        action="store_true",
        help="keep the local cloud's state in memory only",
    )
    demo.add_argument(
        "--crash-cloud",
        action="store_true",
        help="kill -9 the local cloud itself (and its workers) at the crash document, restart it, finish",
    )
    demo.add_argument("--model-faults", metavar="SPEC", help=MODEL_FAULTS_HELP)
    demo.add_argument(
        "--formats",
        default="pdf,docx,html,txt,md",
        help="document formats of the corpus, in the default mix renormalised over them "
        "(pdf 50%%, docx 20%%, html 15%%, txt 8%%, md 7%%; xlsx 10%% only when named)",
    )
    demo.add_argument(
        "--documents-per-child",
        type=int,
        default=1,
        help="documents per Distributed Map child (ItemBatcher; default 1)",
    )
    demo.add_argument(
        "--inference",
        choices=["on_demand", "batch", "auto"],
        default="on_demand",
        help="the job's model calls: on_demand (one Converse call a document), batch (one Bedrock batch "
        "inference job: about half the price) or auto (batch from its minimum of records); docs/batch.md",
    )
    demo.set_defaults(handler=cmd_demo)


# ---- `docagent init`, and `--job PATH` of demo and chaos (docagent/drills/scaffold.py) ----


def cmd_init(args: argparse.Namespace) -> int:
    from docagent.drills.scaffold import ScaffoldRefused, scaffold

    try:
        written = scaffold(args.target)
    except ScaffoldRefused as error:
        raise OperatorError(str(error)) from None

    def human() -> None:
        console.print(
            f"wrote {written['folder']}: job.json, classes/, {len(written['samples'])} samples, README.md"
        )
        console.print("next:\n  " + "\n  ".join(written["next"]))

    emit(args, written, human)
    return EXIT_OK


def _job_folder(args: argparse.Namespace, unsupported: str) -> Any:
    """``--job PATH``: the definition folder (validated; its samples are the job's documents), or None."""
    if not args.job:
        return None
    if getattr(args, unsupported.removeprefix("--").replace("-", "_")):
        raise OperatorError(f"{unsupported} runs the invoice example only; leave out --job or {unsupported}")
    from docagent.drills.job_folder import JobFolder

    try:
        folder = JobFolder.read(args.job)
    except ValueError as error:
        raise OperatorError(str(error)) from None
    args.documents = len(folder.documents)
    return folder


def _add_kit_commands(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    job_help = (
        "a job definition folder (docagent init): run it on its samples instead of the invoice example "
        "(validated, published, its labels and references/*.csv loaded first)"
    )
    for drill in ("demo", "chaos"):
        commands.choices[drill].add_argument("--job", metavar="PATH", help=job_help)
    init = commands.add_parser(
        "init", parents=[common], help="scaffold a job definition folder that runs as it is (demo --job)"
    )
    init.add_argument("target", metavar="NAME|PATH", help="a new or empty folder; its name is the job's")
    init.set_defaults(handler=cmd_init)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="docagent", description=__doc__)
    parser.add_argument("--version", action="version", version=f"docagent {package_version('docagent')}")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", help="print one JSON object instead of the human view")
    commands = parser.add_subparsers(dest="command", required=True)
    _add_local_commands(commands, common)
    _add_demo_command(commands, common)
    register_operator_commands(commands, common)

    bench = commands.add_parser("bench", parents=[common], help="print the local cloud's speed figures")
    bench.add_argument("--documents", type=int, nargs="*", default=[200], help="demo sizes to time")
    bench.add_argument("--time-scale", type=float, help="as for demo (default: by job size)")
    bench.add_argument(
        "--documents-per-child",
        type=int,
        default=1,
        help="documents per Distributed Map child (ItemBatcher; default 1)",
    )
    bench.set_defaults(handler=cmd_bench)

    cost = commands.add_parser(
        "cost",
        parents=[common],
        help="what a job of N documents costs on AWS",
        description="Runs two small clean jobs on the local cloud, counts their requests by service and "
        "operation, and prices a job of N documents with the dated table in docagent/drills/prices.py.",
    )
    cost.add_argument("--documents", type=int, default=1000, help="job size to price (default 1000)")
    cost.add_argument(
        "--documents-per-child",
        type=int,
        help="documents per Distributed Map child to price (default: the config's documents_per_child)",
    )
    cost.add_argument("--usage", help="price a usage measurement saved by --save-usage instead of measuring")
    cost.add_argument("--save-usage", help="write the measured usage per document and per job to this file")
    cost.set_defaults(handler=cmd_cost)

    chaos = commands.add_parser(
        "chaos",
        parents=[common],
        help="run the crash matrix (fault point x mode x recovery) on the local cloud",
        description="Every fault point x mode x recovery as a small job checked against a crash-free run, "
        "plus EXPRESS at-least-once delivery; exits 1 if any cell fails (docs/crash-matrix.md).",
    )
    chaos.add_argument("--documents", type=int, default=3, help="documents per job (default 3)")
    chaos.add_argument("--points", help="comma-separated fault points (default: all)")
    chaos.add_argument("--modes", help="comma-separated modes: exit,raise,hang (default: all)")
    chaos.add_argument("--recoveries", help="comma-separated recoveries: retry,redrive (default: both)")
    chaos.add_argument("--reduced", action="store_true", help="only the reduced matrix the test suite runs")
    chaos.add_argument(
        "--cloud",
        action="store_true",
        help="kill the local cloud itself (not a worker) at each fault point, restart it, check the job",
    )
    chaos.add_argument(
        "--no-at-least-once", action="store_true", help="skip the EXPRESS at-least-once delivery cell"
    )
    chaos.add_argument("--time-scale", type=float, default=0.1, help="local cloud time scale (default 0.1)")
    chaos.add_argument(
        "--parallel",
        type=int,
        default=None,
        help=f"cells run at once (default {CHAOS_PARALLEL}; {JOB_FOLDER_PARALLEL} with --job, whose real "
        "documents take longer to read at the time scale's shortened function timeouts)",
    )
    chaos.set_defaults(handler=cmd_chaos)
    _add_kit_commands(commands, common)

    from docagent.drills.experiment.cli import add_parser as add_experiment_parser

    add_experiment_parser(commands, common, cmd_experiment)

    from docagent.evaluation.cli import add_parser as add_eval_parser

    add_eval_parser(commands, common)
    return parser


# The extra (pyproject.toml) that brings each optional top-level module: the operator's commands need none.
EXTRAS = {
    "moto": "local",
    "aws_cdk": "cdk",
    "constructs": "cdk",
    "cdk_nag": "cdk",
    "matplotlib": "experiment",
    "langgraph": "experiment",
}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(command(args.handler)(args))
    except ModuleNotFoundError as error:
        extra = EXTRAS.get((error.name or "").split(".")[0])
        if extra is None:
            raise
        Console(stderr=True, markup=False).print(
            f"error: this command needs {error.name}, which the CLI alone does not install: "
            f"pip install 'docagent[{extra}]' (or `make setup`)",
            markup=False,
            soft_wrap=True,
        )
        return EXIT_BAD_REQUEST


if __name__ == "__main__":
    sys.exit(main())
