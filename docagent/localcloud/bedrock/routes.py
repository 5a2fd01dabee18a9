"""The local Bedrock's routes on moto's server: Converse (moto's BedrockRuntimeResponse has none), the fault,
label and model admin routes, and batch inference (``install``; ``stop`` wakes what a ``timeout`` fault
holds). The emulation itself is docagent/localcloud/bedrock/converse_api.py."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from moto.bedrockruntime.responses import BedrockRuntimeResponse
from moto.moto_server.werkzeug_app import DomainDispatcherApplication
from pydantic import ValidationError

from docagent.localcloud.bedrock.backends import MODEL_PATH, ModelChoice
from docagent.localcloud.bedrock.batch_path import PATH as BATCH_PATH
from docagent.localcloud.bedrock.converse_api import BATCH, STATE
from docagent.localcloud.bedrock.labels import LABELS_FILE, LABELS_PATH, Label, Reader
from docagent.localcloud.bedrock.model_faults import ADMIN_PATH, ModelFaults
from docagent.localcloud.bedrock.recordings import Recording


def _converse(self: BedrockRuntimeResponse) -> tuple[int, dict[str, str], str]:
    """BedrockRuntimeResponse.converse: moto's parsed request, answered by the local Bedrock."""
    config = self._get_param("inferenceConfig") or {}
    status, headers, body = STATE.converse(
        str(self._get_param("modelId")),
        self._get_param("system") or [],
        self._get_param("messages") or [],
        int(config.get("maxTokens") or 4096),
        self._get_param("toolConfig"),
    )
    return status, {**headers, "status": str(status)}, body


def _model_admin(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
    """GET what answers the model calls; PUT/POST a ModelChoice (``--model``); DELETE: labels again."""
    method = environ.get("REQUEST_METHOD", "GET")
    if method in {"PUT", "POST"}:
        length = int(environ.get("CONTENT_LENGTH") or 0)
        try:
            STATE.choose_model(ModelChoice.model_validate_json(environ["wsgi.input"].read(length) or b"{}"))
        except (ValidationError, ValueError) as error:
            start_response("400 Bad Request", [("Content-Type", "application/json")])
            return [json.dumps({"message": str(error)}).encode()]
    elif method == "DELETE":
        STATE.choose_model(ModelChoice())
    start_response("200 OK", [("Content-Type", "application/json")])
    return [STATE.model.model_dump_json().encode()]


def _admin(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
    """GET the faults and counters; PUT/POST new faults (the JSON of ModelFaults); DELETE resets both."""
    method = environ.get("REQUEST_METHOD", "GET")
    status = "200 OK"
    if method in {"PUT", "POST"}:
        length = int(environ.get("CONTENT_LENGTH") or 0)
        try:
            STATE.configure(ModelFaults.model_validate_json(environ["wsgi.input"].read(length) or b"{}"))
        except (ValidationError, ValueError) as error:
            status = "400 Bad Request"
            payload = json.dumps({"message": str(error)}).encode()
            start_response(status, [("Content-Type", "application/json")])
            return [payload]
    elif method == "DELETE":
        STATE.reset()
    start_response(status, [("Content-Type", "application/json")])
    return [json.dumps(STATE.snapshot()).encode()]


def _labels_admin(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
    """GET how many labels and recordings are held; POST {"labels": [Label, ...], "recordings": [Recording,
    ...]} adds them; DELETE forgets them all."""
    method = environ.get("REQUEST_METHOD", "GET")
    answer: dict[str, Any] = {}
    if method in {"PUT", "POST"}:
        length = int(environ.get("CONTENT_LENGTH") or 0)
        try:
            body = json.loads(environ["wsgi.input"].read(length) or b"{}")
            labels = [Label.model_validate(item) for item in body.get("labels", [])]
            recordings = [Recording.model_validate(item) for item in body.get("recordings", [])]
        except (ValidationError, ValueError, AttributeError) as error:
            start_response("400 Bad Request", [("Content-Type", "application/json")])
            return [json.dumps({"message": str(error)}).encode()]
        STATE.labels.add(labels, recordings)
        answer["added"] = len(labels) + len(recordings)
    elif method == "DELETE":
        STATE.labels.clear()
    answer.update(STATE.labels.counts())
    answer["reader"] = STATE.reader.path if STATE.reader else None
    start_response("200 OK", [("Content-Type", "application/json")])
    return [json.dumps(answer).encode()]


class _Installed:
    done = False
    call: Callable[..., Any] | None = None


def install(
    faults: ModelFaults | None = None, *, state_folder: Path | None = None, reader: Reader | None = None
) -> None:
    """Serve Converse and the admin routes from moto's server; start with ``faults`` (none by default), the
    labels kept in ``state_folder`` (None: in memory, none at start) and ``reader``."""
    STATE.reset()
    BATCH.reset()
    STATE.configure(faults or ModelFaults())
    STATE.labels.attach(None if state_folder is None else state_folder / LABELS_FILE)
    STATE.reader = reader
    if _Installed.done:
        return
    BedrockRuntimeResponse.converse = _converse  # type: ignore[attr-defined]
    original = DomainDispatcherApplication.__call__
    _Installed.call = original

    def dispatch(self: DomainDispatcherApplication, environ: dict[str, Any], start_response: Any) -> Any:
        if environ.get("PATH_INFO", "") == ADMIN_PATH:
            return _admin(environ, start_response)
        if environ.get("PATH_INFO", "") == LABELS_PATH:
            return _labels_admin(environ, start_response)
        if environ.get("PATH_INFO", "") == MODEL_PATH:
            return _model_admin(environ, start_response)
        if BATCH_PATH.match(environ.get("PATH_INFO", "")):
            return BATCH.handle(environ, start_response)
        return original(self, environ, start_response)

    DomainDispatcherApplication.__call__ = dispatch  # type: ignore[method-assign]
    _Installed.done = True


def stop() -> None:
    """Wake every call held by a ``timeout`` fault (the server is stopping)."""
    STATE.stopping.set()
    BATCH.reset()
