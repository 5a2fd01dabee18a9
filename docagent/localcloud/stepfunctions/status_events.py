"""Step Functions "Execution Status Change" events on the local cloud, delivered as EventBridge would.

When an execution ends, the local cloud builds the event AWS sends to EventBridge (source ``aws.states``),
matches it against the deployed rules (moto's event pattern matcher), renders each target's input
transformer, and publishes the message to the SNS topic it names. SNS delivers nothing off a laptop, so the
**local alert sink** records every message published this way: one JSON line per alert in
``<state dir>/alerts.jsonl`` and a line on the local cloud's console. ``docagent demo`` reads the file.

Only parent executions end here: Distributed Map children run inside their parent's interpreter locally (a
README deviation), and on AWS the rule's exact ``stateMachineArn`` match leaves them out anyway.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from moto.events.models import events_backends
from moto.sns.models import sns_backends
from moto.stepfunctions.parser.backend.execution import BaseExecutionWorkerCommunication, Execution

from docagent.localcloud.stepfunctions import redrive_execution as redrive

ALERTS_FILE = "alerts.jsonl"
EVENT_SOURCE = "aws.states"
EVENT_DETAIL_TYPE = "Step Functions Execution Status Change"
_PLACEHOLDER = re.compile(r"<([A-Za-z0-9_.-]+)>")

Printer = Callable[[str], None]


class _Sink:
    path: Path | None = None
    printer: Printer | None = None
    lock = threading.Lock()
    installed = False
    original: Callable[[BaseExecutionWorkerCommunication], None] | None = None


def discard(_: str) -> None:
    """A printer for callers that show alerts themselves (the demo) or expect them (the crash matrix)."""


def install(state_dir: Path, printer: Printer | None = None) -> None:
    """Emit status-change events from now on; alerts go to ``state_dir/alerts.jsonl`` (and ``printer``)."""
    with _Sink.lock:
        _Sink.path = state_dir / ALERTS_FILE
        _Sink.printer = printer
        if not _Sink.installed:
            _Sink.original = BaseExecutionWorkerCommunication.terminated
            BaseExecutionWorkerCommunication.terminated = _terminated  # type: ignore[method-assign]
            _Sink.installed = True


def uninstall() -> None:
    with _Sink.lock:
        _Sink.path = None
        _Sink.printer = None


def read_alerts(state_dir: Path) -> list[dict[str, Any]]:
    path = state_dir / ALERTS_FILE
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _terminated(self: BaseExecutionWorkerCommunication) -> None:
    assert _Sink.original is not None
    _Sink.original(self)
    try:
        deliver(status_change_event(self.execution))
    except Exception as error:  # an alert must never break the execution it reports
        if _Sink.printer:
            _Sink.printer(f"local alert sink: could not deliver the status-change event: {error!r}")


def _millis(moment: dt.datetime | None) -> int | None:
    return int(moment.timestamp() * 1000) if moment else None


def status_change_event(execution: Execution) -> dict[str, Any]:
    """The event Step Functions sends to EventBridge when an execution's status changes."""
    status = execution.exec_status.value if execution.exec_status else "RUNNING"
    record = redrive.redrive_record(str(execution.exec_arn))
    return {
        "version": "0",
        "id": str(uuid.uuid4()),
        "detail-type": EVENT_DETAIL_TYPE,
        "source": EVENT_SOURCE,
        "account": execution.account_id,
        "time": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "region": execution.region_name,
        "resources": [str(execution.exec_arn)],
        "detail": {
            "executionArn": str(execution.exec_arn),
            "stateMachineArn": str(execution.state_machine_arn),
            "name": execution.name,
            "status": status,
            "startDate": _millis(execution.start_date),
            "stopDate": _millis(execution.stop_date),
            "input": json.dumps(execution.input_data) if execution.input_data is not None else None,
            "output": json.dumps(execution.output) if execution.output is not None else None,
            "error": execution.error,
            "cause": execution.cause,
            "redriveCount": int(record.get("count", 0)),
        },
    }


def _path_value(event: dict[str, Any], path: str) -> Any:
    node: Any = event
    for part in path.removeprefix("$").strip(".").split("."):
        if not part:
            continue
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def render_input_transformer(transformer: dict[str, Any], event: dict[str, Any]) -> Any:
    """EventBridge's input transformer: ``<name>`` in the template becomes the value at its input path (a
    string is written escaped, as JSON inside the template's quotes; a path that matches nothing is empty)."""
    values = {
        name: _path_value(event, path) for name, path in (transformer.get("InputPathsMap") or {}).items()
    }

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            return match.group(0)
        value = values[name]
        if value is None:
            return ""
        text = value if isinstance(value, str) else json.dumps(value)
        return json.dumps(text)[1:-1]

    rendered = _PLACEHOLDER.sub(substitute, transformer["InputTemplate"])
    try:
        return json.loads(rendered)
    except ValueError:
        return rendered


def matching_targets(event: dict[str, Any]) -> list[tuple[Any, dict[str, Any]]]:
    """(rule, target) of every enabled rule of the default bus whose pattern matches the event."""
    backend = events_backends[event["account"]][event["region"]]
    found = []
    for rule in list(backend.event_buses["default"].rules.values()):
        if rule.state != "ENABLED" or not rule.event_pattern.get_pattern():
            continue
        if rule.event_pattern.matches_event(event):  # type: ignore[arg-type]
            found += [(rule, target) for target in rule.targets]
    return found


def deliver(event: dict[str, Any]) -> list[dict[str, Any]]:
    """Match the event against every enabled rule of the default bus; publish to SNS targets and record
    each message in the sink. Returns the alerts recorded."""
    delivered = []
    for rule, target in matching_targets(event):
        arn = str(target.get("Arn", ""))
        if ":sns:" not in arn:
            continue
        if "InputTransformer" in target:
            message = render_input_transformer(target["InputTransformer"], event)
        elif "Input" in target:
            message = json.loads(target["Input"])
        else:
            message = event
        text = message if isinstance(message, str) else json.dumps(message)
        sns_backends[event["account"]][event["region"]].publish(text, arn=arn)
        alert = {
            "time": event["time"],
            "rule": rule.name,
            "topic_arn": arn,
            "job_id": event["detail"]["name"],
            "status": event["detail"]["status"],
            "message": text,
            "event": event,
        }
        _record(alert)
        delivered.append(alert)
    return delivered


def _record(alert: dict[str, Any]) -> None:
    with _Sink.lock:
        if _Sink.path is not None:
            _Sink.path.parent.mkdir(parents=True, exist_ok=True)
            with _Sink.path.open("a", encoding="utf-8") as sink:
                sink.write(json.dumps(alert, default=str) + "\n")
        if _Sink.printer is not None:
            lines = [
                line if len(line) <= 200 else f"{line[:200]}..." for line in alert["message"].splitlines()
            ]
            _Sink.printer(f"ALERT to {alert['topic_arn'].rsplit(':', 1)[-1]}:\n" + "\n".join(lines))
