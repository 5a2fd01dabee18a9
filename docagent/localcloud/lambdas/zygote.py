"""The fork server of the local Lambda runtime: imports the third-party modules once, forks each worker.

Run as a script by ``forking.ForkServer`` (never imported by the runtime), so its ``sys.path`` is exactly a
worker's: this folder first, then the interpreter's site-packages. It imports ``PRELOAD`` (the SDK,
pydantic, Powertools: what every handler imports; the document readers) and nothing of the
deployed code, which each worker imports fresh from its code root. Then it serves one Unix socket
(SOCK_SEQPACKET, one JSON message each, file descriptors passed alongside):

- ``spawn`` (with the worker's request, response and log pipes): fork; the child becomes a worker
  (``_become_worker``); answered ``spawned`` with the child's pid and a pidfd for it;
- ``template`` (with a channel of its own): fork; the child becomes a function's template
  (``_become_template``): it imports that function's handler as its workers would, says ``ready`` on its
  channel, and serves ``spawn`` there for that function's workers, which start with the handler imported;
  answered ``spawned`` as a worker is. With ``modules`` instead of a handler, a code template: it imports
  those (what every function of its code root imports) and serves ``template`` for those functions;
- a child's exit is reported ``exited`` with its code as ``subprocess`` gives it (negative: a signal).

The server ignores Ctrl-C (it runs in its own session, as the workers do) and exits at the end of its socket,
which is when the runtime stops it or the local cloud dies. Each worker asks the kernel to kill it when the
server dies (PR_SET_PDEATHSIG), so no worker outlives the cloud that started it.

This file imports the standard library only (and, once preloaded, the SDK): it is started by path, outside
the ``docagent`` package.
"""

from __future__ import annotations

import atexit
import collections.abc
import contextlib
import ctypes
import gc
import importlib
import json
import os
import runpy
import select
import signal
import socket
import sys
import threading
import traceback
from typing import Any

# What every handler imports (python -X importtime of each handler, 2026-12-02): importing these here and
# forking saves each worker most of its cold start. Never `functions` or anything else of the code asset.
PRELOAD = (
    "boto3",
    "boto3.dynamodb.types",
    "botocore.client",
    "s3transfer.manager",
    "pydantic",
    "pydantic.main",
    "pydantic._internal._generate_schema",
    "pydantic._internal._validators",
    "pydantic.fields",
    "pydantic.types",
    "pydantic.plugin._loader",
    "annotated_types",
    "aws_lambda_powertools",
    "aws_lambda_powertools.logging",
    "aws_lambda_powertools.metrics",
    "aws_lambda_powertools.tracing",
    "aws_lambda_powertools.utilities.idempotency",
    "aws_lambda_powertools.utilities.idempotency.serialization.pydantic",
    "aws_lambda_powertools.utilities.typing",
    # Not the X-Ray SDK's core (0.15 s of CPU, its recorder): the local workers trace nothing
    # (POWERTOOLS_TRACE_DISABLED, runtime.py) and the project's Tracer then imports none of it
    # (functions/observability.py), so no worker of the pipeline imports it (2026-12-08). Code that does
    # (Powertools' plain ``Tracer()``) imports it in its function's template, once a function.
    "fastjsonschema",
    "dateutil.parser",
    # The document layer's readers, which ProcessDocument imports with its first PDF or Word document: each
    # forked worker imported them again (pypdf 0.13 s and python-docx 0.06 s of CPU a worker; a fifth of the
    # 200-document demo's worker samples, `py-spy record --subprocesses --gil`, 2026-12-07). Locally the layer
    # is the interpreter's own libraries (docagent/localcloud/cfn_resources.py), so a code root holds none of
    # them.
    "pypdf",
    "docx",
    # The grounding's fuzzy matcher (the layer's rapidfuzz) and, locally only, pypdfium2 (a grounded span's
    # box on a PDF page: functions/reading/page_texts.py; not in the layer, so on Lambda the box is null):
    # each forked ProcessDocument worker imported them with its first grounded field, 2 % of the
    # 200-document demo's CPU (`py-spy record --subprocesses --gil`, 2026-12-08).
    "rapidfuzz.fuzz",
    "pypdfium2",
    "pypdfium2.raw",
)
# The services whose SDK data (botocore's JSON: each one's model and endpoint rules, besides the endpoints and
# partitions every client reads) the handlers' first clients load: read once here (``share_sdk_data``).
SDK_SERVICES = ("s3", "dynamodb", "bedrock-runtime")
WORKER_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "environment.py")
MAX_MESSAGE = 1 << 20
_PR_SET_PDEATHSIG = 1  # linux/prctl.h


class _RecordingEnviron(collections.abc.MutableMapping[str, str]):
    """``os.environ`` while preloading: remembers which variables the imports read."""

    def __init__(self, inner: collections.abc.MutableMapping[str, str]) -> None:
        self.inner = inner
        self.read: set[str] = set()
        self.listed = False

    def __getitem__(self, key: str) -> str:
        self.read.add(key)
        return self.inner[key]

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str):
            self.read.add(key)
        return key in self.inner

    def __setitem__(self, key: str, value: str) -> None:
        self.inner[key] = value

    def __delitem__(self, key: str) -> None:
        del self.inner[key]

    def __iter__(self) -> collections.abc.Iterator[str]:
        self.listed = True  # an import that lists the environment depends on all of it
        return iter(list(self.inner))

    def __len__(self) -> int:
        return len(self.inner)

    def copy(self) -> dict[str, str]:
        self.listed = True
        return dict(self.inner)


def preload(names: collections.abc.Iterable[str]) -> dict[str, Any]:
    """Import ``names``; say what they read from the environment and which top-level modules are loaded.
    The SDK's data files are read too (``share_sdk_data``: once a process, so a function's template, forked
    from the server, has them already)."""
    real = os.environ
    recorder = _RecordingEnviron(real)
    os.environ = recorder  # type: ignore[assignment]  # noqa: B003 (os.getenv reads os.environ when called)
    failed: list[str] = []
    try:
        for name in names:
            try:
                importlib.import_module(name)
            except Exception as error:  # a missing optional library is left to the worker, as without us
                failed.append(f"{name}: {error!r}")
        try:
            share_sdk_data(SDK_SERVICES)
        except Exception as error:  # each worker's SDK reads its files itself, as without us
            failed.append(f"SDK data: {error!r}")
    finally:
        os.environ = real  # noqa: B003 (the real one, untouched)
    return {
        "reads": {key: real.get(key) for key in sorted(recorder.read)},
        "listed_environment": recorder.listed,
        "modules": sorted({name.split(".")[0] for name in sys.modules}),
        "threads": threading.active_count(),
        "failed": failed,
    }


def share_sdk_data(services: collections.abc.Iterable[str] = ()) -> None:
    """Read the SDK's data files once a process, for every session it makes.

    A botocore session reads its JSON data through its own ``Loader``, which keeps what it read (its
    ``_cache``, filled by ``@instance_cache``), so each session's first client parsed endpoints.json, the
    partitions and each service's model and endpoint rules again: in a worker, about 45 ms of CPU for S3,
    DynamoDB and Bedrock Runtime, and 30 ms more for each further session (Powertools' idempotency layer
    makes its own), measured 2026-12-02 on forked workers; in the process of a 12-document demo, 198 files
    read for 1.31 s of CPU, endpoints.json five times (0.58 s). After this call every loader for the default
    search path keeps what it reads in one dictionary, so what one session read the next finds: the fork
    server calls it with the handlers' services, read at once and shared by every worker it forks; the local
    cloud calls it with none (patches.py). The results are shared, not copied: botocore shares them among a
    session's clients already and never changes them. Only for the default search path (no
    ``AWS_DATA_PATH`` or ``data_path`` setting), where the files read are the same whatever the environment;
    a loader given other paths reads its own, as before. Once a process: a second call changes nothing.
    (Looked up 2026-12-02 in botocore 1.44.8: ``Session._register_data_loader`` calls
    ``create_loader(self.get_config_variable('data_path'))``, and ``create_loader(None)`` is ``Loader()``.)
    """
    from botocore import loaders, session  # noqa: PLC0415 (imported by PRELOAD already; here for its name)

    if getattr(session.create_loader, "shares_sdk_data", False):
        return
    read = loaders.create_loader()
    for name in ("endpoints", "partitions", "sdk-default-configuration"):
        read.load_data(name)
    for service in services:
        read.load_service_model(service, "service-2")
        read.load_service_model(service, "endpoint-rule-set-1")
    shared = vars(read)["_cache"]
    create_loader = session.create_loader

    def create_loader_with_shared_data(search_path_string: str | None = None) -> Any:
        loader = create_loader(search_path_string)
        if search_path_string is None:
            vars(loader)["_cache"] = shared
        return loader

    vars(create_loader_with_shared_data)["shares_sdk_data"] = True
    session.create_loader = create_loader_with_shared_data


def _send(channel: socket.socket, message: dict[str, Any], fds: list[int] | None = None) -> None:
    data = json.dumps(message).encode()
    if fds:
        socket.send_fds(channel, [data], fds)
    else:
        channel.send(data)


def _close_other_fds(keep: set[int]) -> None:
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2 and fd not in keep:
            with contextlib.suppress(OSError):  # the listing's own descriptor, closed already
                os.close(fd)


def _die_with(server_pid: int) -> bool:
    """Ask the kernel to kill this child when its server dies; False if the server is gone already."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    return os.getppid() == server_pid  # else the server died before the request above took effect


def _become_template(server_pid: int, request: dict[str, Any], fds: list[int]) -> int:
    """In the forked child: a function's template. It imports the function's handler module as its worker
    would (the function's environment, its code root as cwd and first on ``sys.path``, as environment.py
    has them), says what that import read, then serves ``spawn`` for that function's workers on its own
    channel, as the server does: each worker is forked with the handler imported already."""
    [channel_fd] = fds
    if not _die_with(server_pid):
        return 1
    _close_other_fds({channel_fd})
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    if sys.path[0] != request["cwd"]:  # a function's template forked from its code template has it first
        sys.path.insert(0, request["cwd"])
    channel = socket.socket(fileno=channel_fd)
    module = str(request.get("handler", "")).rpartition(".")[0]
    imported = preload(request.get("modules", [module] if module else []))
    try:
        _send(channel, {"op": "ready", **imported})
        serve(channel)
    except (BrokenPipeError, ConnectionResetError):
        pass  # the runtime went away: our workers die with us (PR_SET_PDEATHSIG)
    return 0


def _become_worker(server_pid: int, request: dict[str, Any], fds: list[int]) -> int:
    """In the forked child: the worker's session, descriptors, folder and environment, then its loop."""
    request_fd, response_fd, log_fd = fds
    gc.enable()
    if not _die_with(server_pid):
        return 1
    os.setsid()
    signal.signal(signal.SIGINT, signal.default_int_handler)  # as a fresh interpreter has it
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    _close_other_fds({request_fd, response_fd})
    os.chdir(request["cwd"])
    environment = dict(request["env"])
    # The pipes' numbers in this process, where the runtime's numbers mean nothing.
    environment["DOCAGENT_REQUEST_FD"] = str(request_fd)
    environment["DOCAGENT_RESPONSE_FD"] = str(response_fd)
    os.environ.clear()  # os.environ updates the C environment too (putenv/unsetenv)
    os.environ.update(environment)
    sys.argv = [WORKER_SCRIPT]  # as `python environment.py` has it
    try:
        runpy.run_path(WORKER_SCRIPT, run_name="__main__")
        code = 0
    except SystemExit as leaving:
        code = leaving.code if isinstance(leaving.code, int) else (0 if leaving.code is None else 1)
        if leaving.code is not None and not isinstance(leaving.code, int):
            print(leaving.code, file=sys.stderr)
    except BaseException:  # as the interpreter ends a script with an unhandled exception
        traceback.print_exc()
        code = 1
    atexit._run_exitfuncs()
    return code


Becoming = collections.abc.Callable[[int, dict[str, Any], list[int]], int]


def _fork_worker(
    channel: socket.socket, request: dict[str, Any], fds: list[int], become: Becoming
) -> tuple[int, int] | None:
    """Fork a worker (or a template); its (pidfd, pid), or None if it could not be watched (then it is
    killed). The child's collector stays off until it becomes a worker (``_become_worker``)."""
    server_pid = os.getpid()
    # What the server holds moves to the collector's permanent generation: a worker's collections skip it
    # instead of walking (and writing to, so copying) every preloaded object. Python's gc documentation
    # (looked up 2026-12-02, gc.freeze): disable gc in the parent, freeze before fork(), enable gc in the
    # child. A forked worker's first client took 150 ms of CPU without it and 55 ms with it.
    gc.freeze()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            code = become(server_pid, request, fds)
        finally:
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(Exception):
                    stream.flush()
            os._exit(code)
    for fd in fds:
        os.close(fd)
    try:
        pidfd = os.pidfd_open(pid)  # the child is not reaped yet: this is its pid, not a reused one
    except OSError as error:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        _send(channel, {"op": "error", "id": request["id"], "message": repr(error)})
        return None
    _send(channel, {"op": "spawned", "id": request["id"], "pid": pid}, [pidfd])
    return pidfd, pid


def serve(channel: socket.socket) -> None:
    children: dict[int, int] = {}  # pidfd -> pid
    while True:
        ready, _, _ = select.select([channel.fileno(), *children], [], [])
        for fd in ready:
            if fd != channel.fileno():
                pid = children.pop(fd)
                _, status = os.waitpid(pid, 0)
                os.close(fd)
                _send(channel, {"op": "exited", "pid": pid, "code": os.waitstatus_to_exitcode(status)})
                continue
            data, fds, _, _ = socket.recv_fds(channel, MAX_MESSAGE, 8)
            if not data:  # the runtime stopped us, or the local cloud died
                return
            message = json.loads(data)
            become = {"spawn": _become_worker, "template": _become_template}.get(message["op"])
            if become is not None:
                forked = _fork_worker(channel, message, fds, become)
                if forked is not None:
                    children[forked[0]] = forked[1]


def main() -> None:
    # No collection here (the server keeps everything it imports; reference counting frees the rest):
    # a collection would free holes in the pages the workers share (see _fork_worker).
    gc.disable()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    channel = socket.socket(fileno=int(sys.argv[1]))
    preloaded = preload(PRELOAD)
    try:
        _send(channel, {"op": "ready", **preloaded})
        serve(channel)
    except (BrokenPipeError, ConnectionResetError):
        pass  # the runtime went away while we spoke: our workers die with us (PR_SET_PDEATHSIG)


if __name__ == "__main__":
    main()
