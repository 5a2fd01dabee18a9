"""How the local Lambda runtime starts a worker process: forked from a fork server, or a fresh interpreter.

A worker's cold start was mostly importing the same third-party modules (boto3, botocore, pydantic,
Powertools, the X-Ray SDK) in every worker: about two thirds of the workers' CPU in the 200-document demo
(docs/performance.md). ``Launcher`` starts one fork server (``zygote.py``) that imports them once, and forks
each worker from it. The worker is then what a fresh interpreter would be: its own session, its cwd the code
root, the function's environment (set before the handler is imported), stdout and stderr the function's log,
the handler imported fresh from the code root, and its exit code or signal reported as ``subprocess`` does.

What is left of a cold start is importing the function's own code (``functions``: its pydantic models are
built at import, about 0.3 s of CPU a worker). So the server forks, for each function, a template: a process
that imports that function's handler once, with the function's environment in its code root, as a worker
would, and then forks that function's workers, which start with the handler imported (``ForkServer.
template``; the workers of a 12-document demo used 5.0 to 6.0 s of CPU against 7.8 to 8.8 s, 2026-12-02). A
worker is forked by the server itself when its template's import read something that differs for it (each
worker's own log stream, say), or that import failed, started a thread or listed the environment; a function
whose environment or code changed gets a new template (the old one lives until the stop, with any worker
still running an invocation of the old code).

The functions of one code root import much the same modules of it (the project's share its payload models,
the job definition, storage: about 0.1 s of CPU of each template, 2026-12-08). So the server forks, for a
code root and the functions deployed with it, a code template that imports the modules every one of their
handlers imports (read from the code: ``shared_imports.py``), in the environment of the first function that
needs a template; each function's template is forked from it, when what its imports read is the same for
that function (else from the server, as before).

A worker is started the old way (``subprocess.Popen`` of ``environment.py``) when a fork could differ from
it: the variables the preloaded imports read (``ForkServer.reads``) or the interpreter reads at start-up
have other values for this function, the code root holds a module of the same name as one preloaded, or the
server is gone (it is not restarted). ``DOCAGENT_LAMBDA_FORK=0`` turns the server off.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

from docagent.localcloud.lambdas.shared_imports import shared_modules

FORK_SWITCH = "DOCAGENT_LAMBDA_FORK"
WORKER_SCRIPT = Path(__file__).with_name("environment.py")
ZYGOTE_SCRIPT = Path(__file__).with_name("zygote.py")
PRELOAD_TIMEOUT_SECONDS = 120.0  # the imports take about a CPU second; a loaded machine stretches it
SPAWN_TIMEOUT_SECONDS = 30.0
MAX_MESSAGE = 1 << 20
# Read by an import for whether it is set, not for its value (looked up 2026-12-02 in aws_xray_sdk 2.15.0,
# core/lambda_launcher.py check_in_lambda: `if not os.getenv(LAMBDA_TASK_ROOT_KEY): return None`, then a
# LambdaContext that keeps nothing of it), so one server serves every code root.
PRESENCE_ONLY = frozenset({"LAMBDA_TASK_ROOT"})
# What the interpreter reads at start-up (its flags, sys.path, the locale, the user site, the time zone).
_INTERPRETER_PREFIXES = ("PYTHON", "LC_")
_INTERPRETER_KEYS = frozenset({"HOME", "LANG", "LANGUAGE", "TZ"})
_PIPE_KEYS = frozenset({"DOCAGENT_REQUEST_FD", "DOCAGENT_RESPONSE_FD"})
_PER_WORKER_KEYS = frozenset({"AWS_LAMBDA_LOG_STREAM_NAME"})  # runtime.Worker: one log stream a worker


class ProcessHandle(Protocol):
    """What the runtime needs of a worker process: ``subprocess.Popen`` has it, so has ``ForkedProcess``."""

    @property
    def pid(self) -> int: ...

    @property
    def returncode(self) -> int | None: ...

    @property
    def stdout(self) -> IO[bytes] | None: ...

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...

    def kill(self) -> None: ...


class ForkServerError(Exception):
    """The fork server cannot start a worker (it died, or did not answer)."""


class ForkedProcess:
    """A worker forked by the server: signalled through its pidfd, its exit code reported by the server."""

    def __init__(self, pid: int, pidfd: int, log: IO[bytes] | None = None) -> None:
        self.pid = pid
        self.stdout: IO[bytes] | None = log
        self.returncode: int | None = None
        self._pidfd = pidfd  # -1 once the server reported the exit (its number may then be reused)
        self._lock = threading.Lock()
        self._exited = threading.Event()

    def _ended(self, code: int) -> None:
        with self._lock:
            self.returncode = code
            os.close(self._pidfd)
            self._pidfd = -1
        self._exited.set()

    def _gone(self) -> bool:
        """Whether the process has ended, reaped or not (its pidfd turns readable)."""
        with self._lock:
            if self._pidfd < 0:
                return True
            ready, _, _ = select.select([self._pidfd], [], [], 0)
            return bool(ready)

    def poll(self) -> int | None:
        if not self._gone():
            return None
        # Ended: the server reports the code once it has reaped the process, a moment later.
        return self.wait(timeout=SPAWN_TIMEOUT_SECONDS)

    def wait(self, timeout: float | None = None) -> int:
        if not self._exited.wait(timeout):
            raise subprocess.TimeoutExpired([str(WORKER_SCRIPT)], timeout or 0.0)
        assert self.returncode is not None
        return self.returncode

    def kill(self) -> None:
        # The pidfd names this process even if it has ended and its pid was given to another one.
        with self._lock, contextlib.suppress(ProcessLookupError):
            if self._pidfd >= 0:
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)

    def _wait_gone(self, seconds: float) -> None:
        with self._lock:
            if self._pidfd >= 0:
                select.select([self._pidfd], [], [], seconds)


@dataclass
class _Pending:
    done: threading.Event = field(default_factory=threading.Event)
    process: ForkedProcess | None = None
    error: str = ""


def _without_pipes(environment: dict[str, str]) -> dict[str, str]:
    """A worker's environment but for its pipes' numbers (a worker's own; no import reads them)."""
    return {key: value for key, value in environment.items() if key not in _PIPE_KEYS}


class ForkServer:
    """A process that forks workers, and the thread that reads what it says: the runtime's ``zygote.py``
    (``ForkServer.start``), or a function's template forked from it (``template``)."""

    def __init__(
        self,
        environment: dict[str, str],
        channel: socket.socket,
        process: subprocess.Popen[bytes] | ForkedProcess,
        modules: frozenset[str] | None = None,
        inherited: dict[str, str | None] | None = None,
    ) -> None:
        """Wait for the server's ``ready`` on ``channel``. ``modules``: the modules a code root must not
        shadow (a template's are its server's: the handler's own come from the code root); ``inherited``:
        what the imports of the process it was forked from read (a template's workers have those too)."""
        self.environment = environment  # what the server (or template) was started with
        self._channel = channel
        self.process = process
        self._lock = threading.Lock()
        self._ids = itertools.count()
        self._pending: dict[int, _Pending] = {}
        self._children: dict[int, ForkedProcess] = {}
        self._early: dict[int, int] = {}  # exit codes that came before the spawn's answer was handled
        self.alive = False
        ready, _, _ = select.select([channel], [], [], PRELOAD_TIMEOUT_SECONDS)
        hello = json.loads(channel.recv(MAX_MESSAGE) or b"{}") if ready else {}
        if hello.get("op") != "ready":
            self.stop()
            raise ForkServerError("the fork server did not start")
        self.reads: dict[str, str | None] = {**(inherited or {}), **hello["reads"]}
        self.modules: frozenset[str] = frozenset(hello["modules"]) if modules is None else modules
        self.sound = not hello["listed_environment"] and hello["threads"] == 1 and not hello["failed"]
        self.alive = True
        threading.Thread(target=self._listen, name="lambda-fork-server", daemon=True).start()

    @classmethod
    def start(cls, environment: dict[str, str]) -> ForkServer:
        """The runtime's ``zygote.py``, started with the first worker's environment."""
        environment = _without_pipes(environment)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        process = subprocess.Popen(
            [sys.executable, str(ZYGOTE_SCRIPT), str(theirs.fileno())],
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,  # its workers' output goes to their own logs; its errors to ours
            pass_fds=(theirs.fileno(),),
            start_new_session=True,  # as the workers: a Ctrl-C in the terminal reaches the cloud only
        )
        theirs.close()
        return cls(environment, ours, process)

    def template(
        self, environment: dict[str, str], cwd: Path, modules: list[str] | None = None
    ) -> ForkServer:
        """A template for the function of this worker environment: forked from this server, it imports the
        handler (``_HANDLER``), or ``modules`` (a code template's), with that environment in ``cwd`` (the code
        root), then forks its workers (or templates)."""
        environment = _without_pipes(environment)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            message: dict[str, Any] = {"env": environment, "cwd": str(cwd)}
            if modules is None:
                message["handler"] = environment.get("_HANDLER", "")
            else:
                message["modules"] = modules
            process = self._request("template", message, [theirs.fileno()])
        except ForkServerError:
            ours.close()
            raise
        finally:
            theirs.close()
        try:
            return ForkServer(environment, ours, process, modules=self.modules, inherited=self.reads)
        except ForkServerError:
            ours.close()
            raise

    def differences(self, environment: dict[str, str], code_root: Path) -> list[str]:
        """Why a worker forked from this server could differ from a fresh one (nothing: it may fork)."""
        found = [f"{key} read at import" for key in self.reads if not self._same(key, environment)]
        interpreter = {key for key in {*environment, *self.environment} if _read_by_interpreter(key)}
        found += [
            f"{key} read by the interpreter"
            for key in sorted(interpreter)
            if not self._same(key, environment)
        ]
        shadowed = {entry.name.split(".")[0] for entry in code_root.iterdir()} & self.modules
        found += [f"{name} in the code root shadows a preloaded module" for name in sorted(shadowed)]
        return found

    def _same(self, key: str, environment: dict[str, str]) -> bool:
        ours = self.environment.get(key)
        if key in PRESENCE_ONLY:
            return (ours is None) == (environment.get(key) is None)
        return ours == environment.get(key)

    def spawn(self, environment: dict[str, str], cwd: Path, fds: tuple[int, int]) -> ForkedProcess:
        """Fork a worker with the request and response pipes ``fds``; its stdout and stderr come to us."""
        log_read, log_write = os.pipe()
        try:
            process = self._request("spawn", {"env": environment, "cwd": str(cwd)}, [*fds, log_write])
        except ForkServerError:
            os.close(log_read)
            raise
        finally:
            os.close(log_write)
        process.stdout = os.fdopen(log_read, "rb")
        return process

    def _request(self, op: str, message: dict[str, Any], fds: list[int]) -> ForkedProcess:
        """Ask the server to fork (``op``: spawn or template), passing ``fds``; the child it forked."""
        pending = _Pending()
        try:
            with self._lock:
                if not self.alive:
                    raise ForkServerError("the fork server has stopped")
                request_id = next(self._ids)
                self._pending[request_id] = pending
                data = json.dumps({"op": op, "id": request_id, **message}).encode()
                socket.send_fds(self._channel, [data], fds)
        except OSError as error:
            raise ForkServerError(f"the fork server is gone: {error}") from error
        answered = pending.done.wait(SPAWN_TIMEOUT_SECONDS)
        if not answered:
            # A hung server: ended, so that a late fork cannot share these pipes with the fresh worker that
            # replaces it (a worker dies with its server).
            self.process.kill()
        if not answered or pending.process is None:
            raise ForkServerError(pending.error or "the fork server did not answer")
        return pending.process

    def _listen(self) -> None:
        try:
            while True:
                data, fds, _, _ = socket.recv_fds(self._channel, MAX_MESSAGE, 1)
                if not data:
                    break
                self._heard(json.loads(data), fds)
        except OSError:
            pass
        self._lost()

    def _heard(self, message: dict[str, Any], fds: list[int]) -> None:
        with self._lock:
            if message["op"] == "spawned":
                process = ForkedProcess(message["pid"], fds[0])
                self._children[process.pid] = process
                pending = self._pending.pop(message["id"])
                pending.process = process
                if process.pid in self._early:
                    self._ended(process.pid, self._early.pop(process.pid))
                pending.done.set()
            elif message["op"] == "exited":
                if message["pid"] in self._children:
                    self._ended(message["pid"], message["code"])
                else:
                    self._early[message["pid"]] = message["code"]
            elif message["op"] == "error":
                pending = self._pending.pop(message["id"])
                pending.error = message["message"]
                pending.done.set()

    def _ended(self, pid: int, code: int) -> None:
        self._children.pop(pid)._ended(code)

    def _lost(self) -> None:
        """The server ended: its workers were killed with it (PR_SET_PDEATHSIG); say so to their waiters."""
        with self._lock:
            self.alive = False
            for pending in self._pending.values():
                pending.error = "the fork server stopped"
                pending.done.set()
            self._pending.clear()
            for pid in list(self._children):
                process = self._children[pid]
                process.kill()
                process._wait_gone(5)
                self._ended(pid, -signal.SIGKILL)

    def stop(self) -> None:
        """End the server (its end of the socket closes); any worker it still has dies with it."""
        self.alive = False
        with contextlib.suppress(OSError):
            self._channel.shutdown(socket.SHUT_RDWR)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._channel.close()


def _configuration(environment: dict[str, str]) -> dict[str, str]:
    """A worker's environment but for what each worker has of its own (its pipes, its log stream)."""
    return {key: value for key, value in _without_pipes(environment).items() if key not in _PER_WORKER_KEYS}


def _read_by_interpreter(key: str) -> bool:
    return key in _INTERPRETER_KEYS or key.startswith(_INTERPRETER_PREFIXES)


class Launcher:
    """Starts the runtime's workers: forked from one fork server when that is the same, else as before."""

    def __init__(self, enabled: bool | None = None) -> None:
        switched_on = os.environ.get(FORK_SWITCH, "1") != "0" if enabled is None else enabled
        # pidfds (Linux 5.3) and PR_SET_PDEATHSIG are Linux's: elsewhere every worker is a fresh interpreter.
        self.enabled = switched_on and sys.platform == "linux" and hasattr(os, "pidfd_open")
        self.server: ForkServer | None = None
        # A function's template by (code root, handler, function): the workers of that function fork from it
        # with the handler imported. One replaced (its function's environment changed) stays until the stop:
        # its workers may still be running invocations, and they die with it.
        self.templates: dict[tuple[str, str, str], ForkServer] = {}
        # A code root's code template by (code root, the handlers that share it): it imported the modules
        # every one of those handlers imports (shared_imports.py); their templates fork from it. None: none.
        self.code_templates: dict[tuple[str, tuple[str, ...]], ForkServer | None] = {}
        self._replaced: list[ForkServer] = []
        self.forked = 0
        self.from_template = 0  # of the forked, those forked by a template
        self.started = 0  # fresh interpreters
        self.why_not: list[str] = []  # the last reason a worker was not forked
        self._failed = False
        self._lock = threading.Lock()

    def start(
        self,
        environment: dict[str, str],
        cwd: Path,
        fds: tuple[int, int],
        code_handlers: tuple[str, ...] = (),
    ) -> ProcessHandle:
        """A worker; ``code_handlers``: the handlers of every function deployed with this code root."""
        server = self._server(environment)
        if server is not None:
            self.why_not = server.differences(environment, cwd)
            if not server.sound:
                self.why_not.append("the server's imports started a thread, failed or listed the environment")
            if not self.why_not:
                template = self._template(server, environment, cwd, code_handlers)
                if template is not None:
                    with contextlib.suppress(ForkServerError):  # then from the server, as before
                        process = template.spawn(environment, cwd, fds)
                        self.forked += 1
                        self.from_template += 1
                        return process
                try:
                    process = server.spawn(environment, cwd, fds)
                    self.forked += 1
                    return process
                except ForkServerError as error:
                    self.why_not = [str(error)]
        self.started += 1
        return subprocess.Popen(
            [sys.executable, str(WORKER_SCRIPT)],
            env=environment,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            pass_fds=fds,
            start_new_session=True,  # a Ctrl-C in the terminal reaches the local cloud, not each worker
        )

    def _server(self, environment: dict[str, str]) -> ForkServer | None:
        """The fork server, started with the first worker's environment; None when off or gone."""
        with self._lock:
            if not self.enabled or self._failed:
                return None
            if self.server is None:
                try:
                    self.server = ForkServer.start(environment)
                except (ForkServerError, OSError) as error:
                    self._failed, self.why_not = True, [str(error)]
                    return None
            if not self.server.alive:
                self._failed = True  # not restarted: whatever killed it, the old way still works
                return None
            return self.server

    def _template(
        self, server: ForkServer, environment: dict[str, str], cwd: Path, code_handlers: tuple[str, ...] = ()
    ) -> ForkServer | None:
        """The template of this worker's function, started with its first worker; None when a worker forked
        from it could differ from one forked by the server (what the handler's import read differs, or that
        import failed, started a thread or listed the environment: the worker imports it itself then)."""
        key = (str(cwd), environment.get("_HANDLER", ""), environment.get("AWS_LAMBDA_FUNCTION_NAME", ""))
        with self._lock:
            template = self.templates.get(key)
            if template is not None and template.alive:
                if not template.differences(environment, cwd):
                    return template if template.sound else None
                if _configuration(template.environment) == _configuration(environment):
                    return None  # its import read what each worker has of its own: the server forks them
            if template is not None:
                self._replaced.append(template)
            parent = self._code_template(server, environment, cwd, code_handlers) or server
            try:
                template = self.templates[key] = parent.template(environment, cwd)
            except (ForkServerError, OSError):
                self.templates.pop(key, None)
                return None
            return template if template.sound else None

    def _code_template(
        self, server: ForkServer, environment: dict[str, str], cwd: Path, code_handlers: tuple[str, ...]
    ) -> ForkServer | None:
        """The code template of this code root and the functions that share it (made with the first of them
        that needs a template, in its environment), when a function's template may fork from it: it is
        sound, and what its imports read is the same for this function. Called with the lock held."""
        key = (str(cwd), code_handlers)
        if key not in self.code_templates:
            modules = shared_modules(cwd, code_handlers)
            try:
                self.code_templates[key] = server.template(environment, cwd, modules) if modules else None
            except (ForkServerError, OSError):
                self.code_templates[key] = None
        found = self.code_templates[key]
        if found is None or not found.alive or not found.sound or found.differences(environment, cwd):
            return None
        return found

    def stop(self) -> None:
        with self._lock:
            # The templates first, then the code templates they were forked from: each is reaped by what
            # forked it (and reaps its workers), so their CPU is counted.
            for template in [*self.templates.values(), *self._replaced]:
                template.stop()
            for code_template in self.code_templates.values():
                if code_template is not None:
                    code_template.stop()
            self.templates.clear()
            self.code_templates.clear()
            self._replaced.clear()
            if self.server is not None:
                self.server.stop()
                self.server = None
