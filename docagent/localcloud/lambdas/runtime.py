"""The local Lambda service: runs a function's handler in warm worker processes.

Each function gets a pool of workers (separate Python processes, like Lambda execution environments).
A worker serves one invocation at a time; concurrent invocations start more workers up to a cap (16 a
function: worker processes are what this machine can hold). The account's concurrency is what the machine
can carry: at most ``concurrency_limit`` invocations run at once, across every function (by default four
per CPU the process may use, at least 4: ``default_concurrency_limit``, ``DOCAGENT_LAMBDA_CONCURRENCY``
overrides it). Forty Map children each running a Lambda at once on two busy cores ran past their 300 s
timeouts (``docagent bench --fan-in 1000000``, 2026-12-07: the longest that finished took 248 s); admitted a
few at a time, each runs at the machine's speed, and its timeout starts when it is admitted.

An invocation beyond either cap waits for a free slot, in turn, up to ``throttle_after_seconds`` (60 s of
wall time), and only then is throttled as Lambda throttles an invoke past its account's or a function's
reserved concurrency: ``TooManyRequestsException``, HTTP 429, message "Rate Exceeded.", with ``Type``
"User" and ``Reason`` ``ConcurrentInvocationLimitExceeded`` (the account's) or
``ReservedFunctionConcurrentInvocationLimitExceeded`` (the function's) (looked up 2026-12-07: Lambda API
reference, Invoke, TooManyRequestsException; botocore's Lambda model: retryAfterSeconds, Type, message,
Reason). AWS runs 1,000 invocations at once per account and Region by default (looked up 2026-12-01,
Lambda quotas: "Concurrent executions 1,000", of which 100 always stay unreserved; new accounts start
lower), and a throttled invoke is retried by the workflow's Retry on ``Lambda.TooManyRequestsException``
(docs/semantics.md L1) until it runs. Locally the wait stands in for most of those retries, which a small
time scale shrinks to a few hundred milliseconds: five jobs at once would fail instead of waiting; each
retry of a throttled task then waits its turn again, so a job does not fail by its own parallelism.
The function's timeout is enforced by killing the worker (``Sandbox.Timedout``); a worker that dies
mid-invocation, whoever killed it, is reported as ``Runtime.ExitError`` (docs/semantics.md L2).
"""

from __future__ import annotations

import compileall
import io
import json
import os
import select
import shutil
import signal
import threading
import time
import uuid
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docagent.localcloud.lambdas.forking import WORKER_SCRIPT, Launcher, ProcessHandle

__all__ = ["WORKER_SCRIPT", "FunctionSpec", "Invocation", "LambdaRuntime", "Worker"]
INIT_TIMEOUT_SECONDS = 10.0
CONCURRENCY_ENV = "DOCAGENT_LAMBDA_CONCURRENCY"  # the local account's concurrency, overriding the default
INVOCATIONS_PER_CPU = 4  # a worker waits on the local endpoint (S3, DynamoDB, Bedrock) part of its time
MIN_CONCURRENCY = 4
# Lambda's throttle (looked up 2026-12-07, Lambda API reference, Invoke: TooManyRequestsException, 429).
RATE_EXCEEDED = "Rate Exceeded."
ACCOUNT_LIMIT = "ConcurrentInvocationLimitExceeded"
FUNCTION_LIMIT = "ReservedFunctionConcurrentInvocationLimitExceeded"

# How Lambda words a runtime killed by a signal ("Runtime exited with error: signal: killed").
_SIGNAL_WORDS = {
    signal.SIGKILL: "killed",
    signal.SIGTERM: "terminated",
    signal.SIGSEGV: "segmentation fault",
    signal.SIGABRT: "aborted",
}

LogSink = Callable[[str, str, str], None]  # (log group, log stream, line)


@dataclass(frozen=True)
class FunctionSpec:
    """What the runtime needs of a function's configuration."""

    name: str
    arn: str
    handler: str
    timeout_seconds: float
    memory_mb: int
    environment: dict[str, str]
    code_sha256: str
    log_group: str
    # The handlers of every function deployed with this code (this one's among them): what their workers
    # share (forking.py's code template). Not part of what the function is: a pool stays as it is when it
    # changes.
    code_handlers: tuple[str, ...] = field(default=(), compare=False)


@dataclass
class Invocation:
    """The outcome of one invocation: a JSON payload and, for a failure, Lambda's FunctionError."""

    payload: bytes
    function_error: str | None = None
    request_id: str = ""
    worker_pid: int = 0
    duration_ms: float = 0.0
    max_memory_mb: float | None = None  # the worker's peak resident size during the invocation


@dataclass(frozen=True)
class InvocationRecord:
    """One finished invocation, kept for benchmarks and crash drills."""

    function: str
    request_id: str
    event: Any
    error_type: str | None
    duration_ms: float
    max_memory_mb: float | None = None


class Worker:
    """One execution environment: a process that imported the handler once."""

    def __init__(
        self,
        spec: FunctionSpec,
        code_root: Path,
        base_env: dict[str, str],
        log: LogSink,
        launcher: Launcher | None = None,
    ) -> None:
        self.spec = spec
        self.log_stream = f"{time.strftime('%Y/%m/%d')}/[$LATEST]{uuid.uuid4().hex}"
        request_read, self._request_write = os.pipe()
        self._response_read, response_write = os.pipe()
        env = {
            **base_env,
            **spec.environment,
            "AWS_LAMBDA_FUNCTION_NAME": spec.name,
            "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(spec.memory_mb),
            "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
            "AWS_LAMBDA_LOG_GROUP_NAME": spec.log_group,
            "AWS_LAMBDA_LOG_STREAM_NAME": self.log_stream,
            "_HANDLER": spec.handler,
            "LAMBDA_CODE_ROOT": str(code_root),
            # Where Lambda puts the code. The X-Ray SDK reads it to run in its Lambda mode (the segment is
            # Lambda's; no sampling rules fetched): without it, importing the SDK, which Powertools' Tracer
            # does, creates two X-Ray clients, a tenth of a worker's cold start in a profile (docs/scale.md).
            "LAMBDA_TASK_ROOT": str(code_root),
            # With LAMBDA_TASK_ROOT, Powertools would start tracing: there is no X-Ray daemon locally, so it
            # stays off, as it was (README, the deviations of the local cloud).
            "POWERTOOLS_TRACE_DISABLED": "true",
            "DOCAGENT_REQUEST_FD": str(request_read),
            "DOCAGENT_RESPONSE_FD": str(response_write),
            "PYTHONUNBUFFERED": "1",
        }
        # Forked from the runtime's fork server, or a fresh interpreter (forking.py): the same either way.
        try:
            self.process: ProcessHandle = (launcher or Launcher(enabled=False)).start(
                env, code_root, (request_read, response_write), spec.code_handlers
            )
        finally:
            os.close(request_read)
            os.close(response_write)
        self._log = log
        self._ready = False
        self.current: dict[str, Any] | None = None  # the invocation in progress: request id, event, start
        threading.Thread(target=self._forward_logs, name=f"logs-{spec.name}", daemon=True).start()

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def _forward_logs(self) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            self._log(self.spec.log_group, self.log_stream, raw.decode("utf-8", "replace").rstrip("\n"))

    def wait_ready(self) -> bool:
        """Wait for the end of init (Lambda allows 10 s), once per worker."""
        if not self._ready:
            self._ready = self._read_line(time.time() + INIT_TIMEOUT_SECONDS) is not None
        return self._ready

    def invoke(self, event: Any, request_id: str, time_scale: float) -> Invocation:
        if not self.wait_ready():  # died or hung during init: reported as the runtime's exit
            self.kill()
            return self._outcome(None, request_id, deadline=float("inf"))
        started = time.time()
        self.current = {"request_id": request_id, "event": event, "started": started}
        deadline = started + self.spec.timeout_seconds * time_scale
        request = {
            "event": event,
            "request_id": request_id,
            "deadline": deadline,
            "function_arn": self.spec.arn,
        }
        self._log(self.spec.log_group, self.log_stream, f"START RequestId: {request_id} Version: $LATEST")
        try:
            os.write(self._request_write, (json.dumps(request) + "\n").encode())
            line = self._read_line(deadline)
        except BrokenPipeError:
            line = None
        duration_ms = (time.time() - started) * 1000
        outcome = self._outcome(line, request_id, deadline)
        outcome.duration_ms = duration_ms
        outcome.worker_pid = self.pid
        self.current = None
        self._log(self.spec.log_group, self.log_stream, f"END RequestId: {request_id}")
        used = "" if outcome.max_memory_mb is None else f"\tMax Memory Used: {outcome.max_memory_mb:.0f} MB"
        self._log(
            self.spec.log_group,
            self.log_stream,
            f"REPORT RequestId: {request_id}\tDuration: {duration_ms:.2f} ms"
            f"\tMemory Size: {self.spec.memory_mb} MB{used}",
        )
        return outcome

    def _read_line(self, deadline: float) -> bytes | None:
        """Read one answer line, or None if the worker died or the deadline passed."""
        buffer = b""
        while not buffer.endswith(b"\n"):
            remaining = deadline - time.time()
            if remaining <= 0:
                return None
            ready, _, _ = select.select([self._response_read], [], [], remaining)
            if not ready:
                return None
            chunk = os.read(self._response_read, 65536)
            if not chunk:
                return None
            buffer += chunk
        return buffer

    def _outcome(self, line: bytes | None, request_id: str, deadline: float) -> Invocation:
        if line is not None:
            answer = json.loads(line)
            peak = answer.get("max_memory_mb")
            if "error" in answer:
                failed = json.dumps(answer["error"]).encode()
                return Invocation(failed, "Unhandled", request_id, max_memory_mb=peak)
            return Invocation(json.dumps(answer["result"]).encode(), None, request_id, max_memory_mb=peak)
        timeout_error = {
            "errorType": "Sandbox.Timedout",
            "errorMessage": f"RequestId: {request_id} Error: Task timed out after "
            f"{self.spec.timeout_seconds:.2f} seconds",
        }
        if self.alive() and time.time() >= deadline:
            self.kill()
            error = timeout_error
        else:
            code = self.process.wait(timeout=5)
            reason = (
                f"signal: {_SIGNAL_WORDS.get(signal.Signals(-code), str(-code))}"
                if code < 0
                else f"exit status {code}"
            )
            error = {
                "errorType": "Runtime.ExitError",
                "errorMessage": f"RequestId: {request_id} Error: Runtime exited with error: {reason}",
            }
            if code == -signal.SIGALRM:  # the worker's own deadline timer (worker.py) ended it
                error = timeout_error
        self._log(self.spec.log_group, self.log_stream, f"RequestId: {request_id} {error['errorMessage']}")
        return Invocation(json.dumps(error).encode(), "Unhandled", request_id)

    def kill(self) -> None:
        if self.alive():
            self.process.kill()
        self.process.wait(timeout=5)

    def close(self) -> None:
        os.close(self._request_write)
        os.close(self._response_read)
        self.kill()


@dataclass
class FunctionPool:
    """The warm workers of one function version (a code or configuration change starts a new pool)."""

    spec: FunctionSpec
    idle: list[Worker] = field(default_factory=list)
    busy: dict[int, Worker] = field(default_factory=dict)


class TooManyRequestsError(Exception):
    """The account's or the function's concurrency is used up (surfaces as Lambda.TooManyRequestsException):
    ``reason`` is Lambda's (``ACCOUNT_LIMIT`` or ``FUNCTION_LIMIT``), the message says what ran."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


def default_concurrency_limit(environ: dict[str, str] | None = None) -> int:
    """The local account's concurrency: ``DOCAGENT_LAMBDA_CONCURRENCY`` when set (a positive integer),
    else ``INVOCATIONS_PER_CPU`` per CPU this process may run on, at least ``MIN_CONCURRENCY``."""
    environ = dict(os.environ) if environ is None else environ
    given = environ.get(CONCURRENCY_ENV, "").strip()
    if given:
        if not given.isdigit() or int(given) < 1:
            raise ValueError(f"{CONCURRENCY_ENV} must be a positive whole number, not {given!r}")
        return int(given)
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(MIN_CONCURRENCY, INVOCATIONS_PER_CPU * cpus)


def _made_once(folder: Path, make: Callable[[Path], object]) -> None:
    """``folder`` made by ``make`` in a staging folder beside it, then renamed, unless it is there: another
    thread or process making it at the same time leaves one whole folder."""
    if folder.exists():
        return
    staging = folder.parent / f"{folder.name}.{uuid.uuid4().hex}.partial"
    make(staging)
    try:
        staging.rename(folder)
    except OSError:  # made by another first
        shutil.rmtree(staging, ignore_errors=True)


def _linked(source: str, target: str) -> None:
    """A file of a cached package in a runtime's copy: a hard link (the files of a code package are only
    read: a worker that compiles a module writes a new file in its place), else a copy. Either keeps the
    file's time, so the compiled files stay valid for their sources."""
    try:
        os.link(source, target)
    except OSError:  # another file system, or links refused
        shutil.copy2(source, target)


def _unpacked(code_zip: bytes, staging: Path, final: Path) -> None:
    with zipfile.ZipFile(io.BytesIO(code_zip)) as archive:
        archive.extractall(staging)
    # Compiled once here rather than by each new worker: a first wave of workers (MaxConcurrency of them at
    # once) otherwise each compiles the same modules (docs/scale.md). ``ddir`` names the final folder in the
    # compiled code (a copy's imports name the copy: Python gives loaded code the path it was loaded from).
    compileall.compile_dir(staging, ddir=str(final), quiet=2)


class LambdaRuntime:
    """Runs invocations for every function of the local cloud."""

    def __init__(
        self,
        state_dir: Path,
        base_env: dict[str, str],
        log: LogSink,
        time_scale: float = 1.0,
        *,
        max_workers_per_function: int = 16,
        throttle_after_seconds: float = 60.0,
        concurrency_limit: int | None = None,
        code_cache: Path | None = None,
    ) -> None:
        """``code_cache``: where code packages are unpacked and compiled once for every runtime that names
        it (each one copies a package from there into its own ``state_dir``); None: each runtime unpacks."""
        self.state_dir = state_dir
        self.code_cache = code_cache
        self.base_env = base_env
        self.time_scale = time_scale
        self.max_workers = max_workers_per_function
        self.concurrency_limit = concurrency_limit or default_concurrency_limit()
        self.running = 0  # invocations running now, across every function (at most concurrency_limit)
        self.throttle_after_seconds = throttle_after_seconds
        self._log = log
        self._pools: dict[str, FunctionPool] = {}
        self._lock = threading.Lock()
        self._freed = threading.Condition(self._lock)  # a worker came free
        self.launcher = Launcher()  # starts its fork server with the first worker (forking.py)
        self.invocations: list[InvocationRecord] = []
        self.waited = 0  # invocations that waited for a free worker
        self.throttled = 0  # invocations that waited throttle_after_seconds and were refused

    def code_root(self, code_sha256: str, code_zip: bytes) -> Path:
        """Unpack a function's code once per content hash, as Lambda caches a code package: copied from the
        code cache (unpacked and compiled there once for every local cloud of this machine: about 0.2 s of
        CPU a cloud, 2026-12-08), or unpacked here without one."""
        # CodeSha256 is base64: make it a safe directory name.
        name = code_sha256.replace("/", "_").replace("+", "-")
        root = self.state_dir / "code" / name
        if self.code_cache is not None:
            cached = self.code_cache / name
            try:
                _made_once(cached, lambda staging: _unpacked(code_zip, staging, cached))
            except OSError:  # a cache that cannot be written: unpacked here, as without one
                pass
            else:
                _made_once(root, lambda staging: shutil.copytree(cached, staging, copy_function=_linked))
                return root
        _made_once(root, lambda staging: _unpacked(code_zip, staging, root))
        return root

    def _checkout(self, spec: FunctionSpec, code_zip: bytes) -> tuple[FunctionPool, Worker]:
        deadline = time.monotonic() + self.throttle_after_seconds
        waited = False
        with self._freed:
            while True:
                pool = self._pools.get(spec.name)
                if pool is None or pool.spec != spec:
                    if pool is not None:
                        for stale in pool.idle:
                            stale.close()
                    pool = self._pools[spec.name] = FunctionPool(spec)
                worker = (
                    self._admitted(pool, spec, code_zip) if self.running < self.concurrency_limit else None
                )
                if worker is not None:
                    self.running += 1
                    pool.busy[worker.pid] = worker
                    return pool, worker
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    self.throttled += 1
                    raise self._throttle(spec, pool)
                if not waited:
                    waited = True
                    self.waited += 1
                self._freed.wait(remaining)

    def _admitted(self, pool: FunctionPool, spec: FunctionSpec, code_zip: bytes) -> Worker | None:
        """An idle worker of the pool, else a new one under the function's cap; None at the cap."""
        while pool.idle:
            worker = pool.idle.pop()
            if worker.alive():
                return worker
            worker.close()
        if len(pool.busy) < self.max_workers:
            return Worker(
                spec, self.code_root(spec.code_sha256, code_zip), self.base_env, self._log, self.launcher
            )
        return None

    def _throttle(self, spec: FunctionSpec, pool: FunctionPool) -> TooManyRequestsError:
        waited = f"for {self.throttle_after_seconds:g} s"
        if self.running >= self.concurrency_limit:
            return TooManyRequestsError(
                f"{RATE_EXCEEDED} {self.running} invocations ran at once (the local account's concurrency, "
                f"{CONCURRENCY_ENV}={self.concurrency_limit}) {waited}",
                ACCOUNT_LIMIT,
            )
        return TooManyRequestsError(
            f"{RATE_EXCEEDED} {spec.name} ran {len(pool.busy)} invocations at once {waited}", FUNCTION_LIMIT
        )

    def invoke(self, spec: FunctionSpec, code_zip: bytes, event: Any) -> Invocation:
        pool, worker = self._checkout(spec, code_zip)
        request_id = str(uuid.uuid4())
        try:
            outcome = worker.invoke(event, request_id, self.time_scale)
        finally:
            with self._freed:
                self.running -= 1
                pool.busy.pop(worker.pid, None)
                if worker.alive() and self._pools.get(spec.name) is pool:
                    pool.idle.append(worker)
                else:
                    worker.close()
                self._freed.notify_all()
        error_type = json.loads(outcome.payload).get("errorType") if outcome.function_error else None
        with self._lock:
            self.invocations.append(
                InvocationRecord(
                    spec.name, request_id, event, error_type, outcome.duration_ms, outcome.max_memory_mb
                )
            )
        return outcome

    def invocations_of(self, function_name: str) -> list[InvocationRecord]:
        with self._lock:
            return [record for record in self.invocations if record.function == function_name]

    def workers(self) -> list[dict[str, Any]]:
        """Every live worker, for operators and for tests that kill one from outside."""
        with self._lock:
            return [
                {"function": name, "pid": worker.pid, "busy": busy, "invocation": worker.current}
                for name, pool in self._pools.items()
                for busy, group in ((True, list(pool.busy.values())), (False, pool.idle))
                for worker in group
                if worker.alive()
            ]

    def shutdown(self) -> None:
        with self._lock:
            for pool in self._pools.values():
                for worker in [*pool.idle, *pool.busy.values()]:
                    worker.close()
            self._pools.clear()
        self.launcher.stop()
