"""What a forked worker no longer pays for at its start (docagent/localcloud/lambdas/zygote.py): the SDK's
data files, read once by the fork server, and collections over everything the server imported (frozen)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import botocore.loaders
import botocore.session
import pytest

from docagent.localcloud.lambdas.forking import ForkedProcess, Launcher
from docagent.localcloud.lambdas.runtime import FunctionSpec, Worker
from docagent.localcloud.lambdas.zygote import share_sdk_data

HANDLER = """
import gc
import botocore.loaders
import botocore.session

def handler(event, context):
    read = []
    original = botocore.loaders.JSONFileLoader.load_file

    def load_file(self, file_path):
        found = original(self, file_path)
        if found is not None:
            read.append(file_path.rsplit("/data/", 1)[-1])
        return found

    botocore.loaders.JSONFileLoader.load_file = load_file
    try:
        session = botocore.session.get_session()
        client = session.create_client(
            "s3", region_name="us-east-1", aws_access_key_id="a", aws_secret_access_key="b",
            endpoint_url="http://127.0.0.1:9",
        )
    finally:
        botocore.loaders.JSONFileLoader.load_file = original
    return {
        "read": read,
        "service": client.meta.service_model.service_name,
        "operations": len(client.meta.service_model.operation_names),
        "gc_enabled": gc.isenabled(),
        "frozen": gc.get_freeze_count(),
    }
"""
BASE_ENV = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/root"), "LANG": "C.UTF-8"}


class Workers:
    def __init__(self, tmp_path: Path, forking: bool) -> None:
        self.tmp_path = tmp_path
        self.launcher = Launcher(enabled=forking)
        self.started: list[Worker] = []

    def invoke(self, name: str, environment: dict[str, str] | None = None) -> tuple[Worker, dict[str, Any]]:
        root = self.tmp_path / name
        root.mkdir()
        (root / "app.py").write_text(HANDLER)
        spec = FunctionSpec(
            name, f"arn:{name}", "app.handler", 10, 128, environment or {}, "sha", f"/aws/lambda/{name}"
        )
        worker = Worker(spec, root, BASE_ENV, lambda *line: None, self.launcher)
        self.started.append(worker)
        outcome = worker.invoke({}, f"request-{time.monotonic_ns()}", 1.0)
        assert outcome.function_error is None, outcome.payload
        return worker, json.loads(outcome.payload)

    def stop(self) -> None:
        for worker in self.started:
            worker.close()
        self.launcher.stop()


@pytest.fixture
def forked(tmp_path: Path) -> Iterator[Workers]:
    workers = Workers(tmp_path / "forked", forking=True)
    workers.tmp_path.mkdir()
    yield workers
    workers.stop()


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[Workers]:
    workers = Workers(tmp_path / "fresh", forking=False)
    workers.tmp_path.mkdir()
    yield workers
    workers.stop()


def test_a_forked_workers_sessions_start_with_the_sdk_data_the_server_read(forked: Workers, fresh: Workers):
    worker, answer = forked.invoke("forked")
    assert isinstance(worker.process, ForkedProcess), forked.launcher.why_not
    _, before = fresh.invoke("fresh")
    assert "s3/2006-03-01/service-2" in before["read"] and "endpoints" in before["read"]
    # The same client, from data read once by the server: no model, rule set or endpoint file read again.
    assert (answer["service"], answer["operations"]) == (before["service"], before["operations"])
    assert not [path for path in answer["read"] if "s3/" in path or path.startswith("endpoints")], answer


def test_a_session_with_its_own_data_path_reads_its_own_files(forked: Workers, tmp_path: Path):
    (tmp_path / "models").mkdir()
    worker, answer = forked.invoke("own-path", {"AWS_DATA_PATH": str(tmp_path / "models")})
    assert isinstance(worker.process, ForkedProcess), forked.launcher.why_not
    assert "s3/2006-03-01/service-2" in answer["read"]


def test_a_forked_worker_collects_its_garbage_but_not_the_servers_imports(forked: Workers, fresh: Workers):
    _, answer = forked.invoke("forked")
    assert answer["gc_enabled"] is True
    assert answer["frozen"] > 10_000, "the server's imports are in the permanent generation"
    _, before = fresh.invoke("fresh")
    assert before["gc_enabled"] is True and before["frozen"] == 0


def files_read_by_a_new_session(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The SDK data files a new botocore session reads to make an S3 client."""
    read: list[str] = []
    original = botocore.loaders.JSONFileLoader.load_file

    def load_file(self: Any, file_path: str) -> Any:
        found = original(self, file_path)
        if found is not None:
            read.append(file_path.rsplit("/data/", 1)[-1])
        return found

    with monkeypatch.context() as patched:
        patched.setattr(botocore.loaders.JSONFileLoader, "load_file", load_file)
        botocore.session.get_session().create_client(
            "s3", region_name="us-east-1", aws_access_key_id="a", aws_secret_access_key="b"
        )
    return read


def test_in_the_local_clouds_process_a_second_session_reads_no_file_the_first_read(
    monkeypatch: pytest.MonkeyPatch,
):
    share_sdk_data()  # what the local cloud does at its start (patches.install), once a process
    share_sdk_data()  # a second call changes nothing
    files_read_by_a_new_session(monkeypatch)  # the first session of the process may read them
    again = files_read_by_a_new_session(monkeypatch)
    assert not [path for path in again if "s3/" in path or path.startswith("endpoints")], again
