"""The local cloud: one endpoint on 127.0.0.1 serving S3, DynamoDB, Step Functions (executing),
CloudWatch Logs and Lambda, with Lambda invocations run by the project's own handlers."""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

import boto3
from moto.core.config import default_user_config
from moto.logs.models import logs_backends
from moto.moto_api._internal.models import moto_api_backend
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app

from docagent import project
from docagent.localcloud import patches, request_guard
from docagent.localcloud.bedrock import routes as bedrock
from docagent.localcloud.bedrock.labels import Reader
from docagent.localcloud.bedrock.model_faults import ModelFaults
from docagent.localcloud.iam import enforcement as iam_enforcement
from docagent.localcloud.lambdas.runtime import LambdaRuntime
from docagent.localcloud.request_counts import RequestCounter, WsgiApp
from docagent.localcloud.state import persistence
from docagent.localcloud.state.journal import Journal, JournalWriteError
from docagent.localcloud.stepfunctions import distributed_map, resume
from docagent.localcloud.stepfunctions import redrive_execution as redrive
from docagent.localcloud.stepfunctions import status_events as alerts
from docagent.localcloud.textract import detect_api as textract
from docagent.localcloud.ticket_service import LOCAL_TOPIC_NAME, TICKET_API_URL_PARAMETER, TicketService
from docagent.served_hosts import served_hosts

ACCOUNT_ID = "123456789012"
REGION = "us-east-1"
HOST = "127.0.0.1"
GC_YOUNG = 10_000  # the collector's youngest-generation threshold while a cloud serves (start, below)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


def client_environment(endpoint: str) -> dict[str, str]:
    """What a process needs to talk to the local cloud with the standard AWS SDK settings."""
    return {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": request_guard.LOCAL_ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": request_guard.LOCAL_SECRET_KEY,
        "AWS_SESSION_TOKEN": "local",
        "AWS_DEFAULT_REGION": REGION,
        "AWS_REGION": REGION,
    }


class CloudWatchLogsSink:
    """Writes worker output into the local CloudWatch Logs, one stream per worker, as Lambda does."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._streams: set[tuple[str, str]] = set()
        self.journal: Journal | None = None  # log lines are kept too, without waiting for the disk

    def __call__(self, group: str, stream: str, line: str, timestamp: int | None = None) -> None:
        backend = logs_backends[ACCOUNT_ID][REGION]
        timestamp = timestamp or int(time.time() * 1000)
        with self._lock:
            if group not in backend.groups:
                backend.create_log_group(group, tags={})
            if (group, stream) not in self._streams and stream not in backend.groups[group].streams:
                backend.create_log_stream(group, stream)
            self._streams.add((group, stream))
            backend.put_log_events(group, stream, [{"timestamp": timestamp, "message": line}])
            if self.journal is not None:
                record = {"t": "log", "group": group, "stream": stream, "line": line, "at": timestamp}
                with contextlib.suppress(JournalWriteError):  # a full disk costs a log line, not the writer
                    self.journal.append(record, durable=False)

    def forget(self) -> None:
        with self._lock:
            self._streams.clear()


class CachedDispatcher(DomainDispatcherApplication):
    """moto's dispatcher with each host's backend remembered. moto looks it up again for every request, under
    one lock, by listing its package directory (~150 stat calls) and trying every service's URL patterns:
    a few milliseconds of serialized CPU per request, the largest cost of the endpoint itself in a profile of
    a 200-document job (docs/local-cloud.md "Speed")."""

    def __init__(self, create_app: Any) -> None:
        super().__init__(create_app)
        self._backend_by_host: dict[str | None, Any] = {}

    def get_backend_for_host(self, host: str | None) -> Any:
        if host not in self._backend_by_host:
            self._backend_by_host[host] = super().get_backend_for_host(host)
        return self._backend_by_host[host]


class LocalCloud:
    """Start with ``start()``, stop with ``stop()`` (or use as a context manager)."""

    def __init__(
        self,
        state_dir: Path,
        port: int | None = None,
        time_scale: float = 1.0,
        alert_printer: alerts.Printer | None = None,
        model_faults: ModelFaults | None = None,
        *,
        persist: bool = True,
        fresh: bool = False,
        skip_corrupt: bool = False,
        reader: Reader | None = None,
        hosts: tuple[str, ...] = (),
        origins: tuple[str, ...] = (),
        iam: bool | None = None,
    ) -> None:
        """``persist``: keep state in ``state_dir`` (persistence.py) and restore it at start; ``fresh``:
        forget what is there first; ``skip_corrupt``: set damaged journal records aside and restore the rest
        (without it, a journal with damaged records in its middle is refused: ``JournalCorruptError``);
        ``reader``: the local Bedrock's answerer of unlabelled documents of its class (labels.py); ``hosts``,
        ``origins``: the Host names and browser origins served besides 127.0.0.1/localhost and none
        (request_guard.py; ``DOCAGENT_LOCAL_ALLOW_ORIGINS`` adds origins); ``iam``:
        authorize the deployed roles' requests (iam/enforcement.py; None: unless DOCAGENT_LOCAL_IAM=off)."""
        if time_scale <= 0:
            raise ValueError("time scale must be positive")
        self.port = port or free_port()
        self.endpoint = f"http://{HOST}:{self.port}"
        self.hosts = served_hosts(self.port, hosts)
        self.origins = request_guard.allowed_origins(origins)
        self.state_dir = state_dir
        self.time_scale = time_scale
        self.alert_printer = alert_printer or _print_alert
        self.logs = CloudWatchLogsSink()
        self.model_faults = model_faults
        self.reader = reader
        self.runtime = LambdaRuntime(
            state_dir=state_dir,
            base_env={**_inherited_environment(), **client_environment(self.endpoint)},
            log=self.logs,
            time_scale=time_scale,
            code_cache=project.CODE_CACHE,
        )
        self.persist = persist
        self.fresh = fresh
        self.skip_corrupt = skip_corrupt
        self.journal: Journal | None = None
        self.restored = resume.Restored()
        self.restore_seconds = 0.0
        self.replayed_requests = 0
        self._server: persistence.JournaledMotoServer | None = None
        self._gc_threshold: tuple[int, int, int] | None = None
        self.requests = RequestCounter()
        self.iam = iam_enforcement.Authorizer(ACCOUNT_ID, REGION) if iam_enforcement.enabled(iam) else None
        # The external ticket API of local runs; its store outlives the cloud (and the service's restarts).
        self.tickets_path = state_dir / "ticket-service" / "tickets.sqlite3"
        self.tickets = TicketService(self.tickets_path)

    def start(self) -> LocalCloud:
        if self.fresh:
            self.tickets.stop()
            persistence.wipe(self.state_dir, [self.tickets_path.parent])
            self.tickets = TicketService(self.tickets_path)
        settings = persistence.load_settings(self.state_dir) if self.persist else {}
        # The deployed functions hold the ticket API's URL: a restarted cloud serves it on the same port.
        if not self.tickets.running:
            self.tickets.port = int(settings.get("ticket_port", 0))
        patches.install(self.runtime, self.time_scale)
        # moto's backends live as long as the process: a new local cloud starts empty (then restores).
        moto_api_backend.reset()
        if self.iam is not None:
            self.iam.invalidate()
        distributed_map.reset()
        redrive.reset()
        self.logs.forget()
        _freeze_what_is_held()
        try:
            self._serve(settings)
        except BaseException:
            gc.unfreeze()  # a start that failed leaves the collector as it found it
            raise
        return self

    def _serve(self, settings: dict[str, Any]) -> None:
        # Bedrock Runtime's Converse, with the fault switches it starts with (changed at run time over HTTP)
        # and the labels it answers from (kept with the rest of the state).
        labels_folder = persistence.state_folder(self.state_dir) if self.persist else None
        bedrock.install(self.model_faults, state_folder=labels_folder, reader=self.reader)
        textract.install()  # DetectDocumentText read by a real OCR engine (docagent/localcloud/textract/)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        default_user_config["stepfunctions"]["execute_state_machine"] = True
        # The interpreter calls S3 and Lambda through boto3 at localhost:MOTO_PORT.
        os.environ["MOTO_PORT"] = str(self.port)
        for name in ("moto", "werkzeug"):
            logging.getLogger(name).setLevel(logging.CRITICAL)
        if self.persist:
            path = persistence.state_folder(self.state_dir) / persistence.JOURNAL_NAME
            self.journal = Journal(path, repair=self.skip_corrupt)
        server = persistence.JournaledMotoServer(
            self.journal, HOST, self.port, app=CachedDispatcher(create_backend_app), count=self._front
        )
        server.bind()  # a taken port fails here, before anything is restored
        self._server = server
        resume.install(None)  # restoring records nothing
        if self.journal is not None:
            self._restore(server)
        resume.install(self.journal)
        self.logs.journal = self.journal
        server.serve()
        self.tickets.start()
        if self.persist:
            persistence.save_settings(
                self.state_dir, {**settings, "ticket_port": self.tickets.port, "time_scale": self.time_scale}
            )
        self.prepare_action_targets()
        # Status-change events to the deployed EventBridge rules; SNS messages to the local alert sink
        # (kept across a restart with the rest of the state, unless the cloud starts fresh or keeps nothing).
        if self.fresh or not self.persist:
            (self.state_dir / alerts.ALERTS_FILE).unlink(missing_ok=True)
        alerts.install(self.state_dir, self.alert_printer)
        # What the process holds now (moto, its backends, the restored state, the caller's own imports) stays
        # as long as the cloud: out of the collector's way, the full collections while it serves walk only
        # what came after. The 200-document demo's process (run_demo, no crash) spent 4.4 s in the collector
        # without it (gc.callbacks; 12 full collections, 3.2 s) and 2.8 s with it (14 full, 1.8 s), on
        # 2026-12-02 at load 8. Given back to the collector at stop (gc.unfreeze).
        gc.freeze()
        # And while it serves, the youngest generation is collected every GC_YOUNG allocations instead of
        # every 700: a request allocates thousands of short-lived objects (moto's parsing, the journal's
        # record), and each young collection moved survivors on towards a full one. The 200-document demo
        # took 17.8 and 18.2 s with it against 17.7 and 19.7 s without, a 12-document demo 5.2-5.5 s of user
        # CPU against 5.2-5.6 s (2026-12-03, a quiet machine): a few per cent, within the noise of one run.
        # The caller's thresholds come back at stop.
        self._gc_threshold = gc.get_threshold()
        gc.set_threshold(GC_YOUNG, *self._gc_threshold[1:])
        resume.resume(self.restored)

    def _front(self, app: WsgiApp) -> WsgiApp:
        """What clients reach before the journal and moto: refused unless sent by this machine's AWS clients
        (request_guard.py), then counted, then IAM (denials are counted, never journaled)."""
        iam_enforcement.activate(self.iam)
        counted = self.requests.wrap(self.iam.wrap(app) if self.iam is not None else app)
        return request_guard.guard(self.hosts, self.origins)(counted)

    def _restore(self, server: persistence.JournaledMotoServer) -> None:
        assert self.journal is not None
        started = time.perf_counter()
        engine = resume.EngineRecords()
        for record in self.journal.records():
            kind = record.get("t")
            if kind == "api":
                persistence.replay_request(server.app, record)
                self.replayed_requests += 1
            elif kind == "log":
                self.logs(record["group"], record["stream"], record["line"], record["at"])
            else:
                engine.add(record)
        self.restored = engine.restore(ACCOUNT_ID, REGION)
        self.restore_seconds = time.perf_counter() - started

    def journal_report(self) -> dict[str, Any]:
        """What opening the journal cut off (a torn last record) or set aside (``skip_corrupt``)."""
        if self.journal is None:
            return {}
        return {
            "torn_tail_bytes": self.journal.dropped_bytes,
            "torn_tail_offset": self.journal.torn_tail_offset,
            "set_aside": [damaged.describe() for damaged in self.journal.set_aside],
        }

    def prepare_action_targets(self) -> None:
        """What the local profile's actions allow-list names: the SSM parameter its ``tickets`` destination
        resolves at deploy time (the ticket service's URL), and the topic sns actions may publish to."""
        session = boto3.session.Session(
            aws_access_key_id="local", aws_secret_access_key="local", region_name=REGION
        )
        ssm = session.client("ssm", endpoint_url=self.endpoint)
        ssm.put_parameter(
            Name=TICKET_API_URL_PARAMETER, Value=self.tickets.url, Type="String", Overwrite=True
        )
        session.client("sns", endpoint_url=self.endpoint).create_topic(Name=LOCAL_TOPIC_NAME)

    def stop(self) -> None:
        bedrock.stop()
        if self._server is not None:
            self._server.stop()
            self._server = None
        self.runtime.shutdown()
        patches.uninstall(self.runtime)
        alerts.uninstall()
        self.tickets.stop()
        resume.install(None)
        self.logs.journal = None
        if self.journal is not None:
            self.journal.close()
            self.journal = None
        gc.unfreeze()
        if self._gc_threshold is not None:
            gc.set_threshold(*self._gc_threshold)
            self._gc_threshold = None

    def __enter__(self) -> LocalCloud:
        return self.start()

    def __exit__(self, *_: Any) -> None:
        self.stop()


class _Process:
    served = False  # a local cloud started in this process before


def _freeze_what_is_held() -> None:
    """What the process holds as a cloud starts (moto, the caller's imports) out of the collector's way from
    then on, not only once the cloud serves (``gc.freeze`` at the end of ``start``): the start's own first
    requests (the process's first boto3 client reads the SDK's models, a burst of allocations) set off full
    collections over all of it, 0.08 s of the start's 0.24 s of CPU (``LocalCloud.start`` with and without,
    alternated three times, 2026-12-08). The state of a cloud that served in this process before is garbage
    by now (its backends reset): collected first, so none of it is kept frozen."""
    if _Process.served:
        gc.collect()
    gc.freeze()
    _Process.served = True


def _print_alert(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _inherited_environment() -> dict[str, str]:
    """Only what a worker needs from this process: the interpreter's paths, not the caller's AWS settings."""
    # DOCAGENT_PROFILE_DIR: `docagent bench --profile` (docagent/drills/profiling.py)
    keep = ("PATH", "HOME", "LANG", "LC_ALL", "TZ", "TMPDIR", "SYSTEMROOT", "DOCAGENT_PROFILE_DIR")
    return {key: os.environ[key] for key in keep if key in os.environ}
