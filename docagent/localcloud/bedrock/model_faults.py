"""The local Bedrock's fault switches (``--model-faults``, ``docagent local model-faults``): how it misbehaves
as Bedrock does when busy or refusing (docagent/localcloud/bedrock/converse_api.py applies them), their
``--model-faults`` text, and the client of a running cloud's fault route (``ADMIN_PATH``)."""

from __future__ import annotations

import datetime as dt
import json
import re
import urllib.request
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from docagent.localcloud.bedrock.evidence import misquoted
from docagent.localcloud.request_guard import signed

ADMIN_PATH = "/_docagent/bedrock/faults"


class ModelFaults(BaseModel):
    """How the local Bedrock misbehaves. Fractions are per call, drawn in the order listed."""

    model_config = ConfigDict(extra="forbid")

    throttle: float = Field(0.0, ge=0, le=1, description="ThrottlingException (HTTP 429)")
    unavailable: float = Field(0.0, ge=0, le=1, description="ServiceUnavailableException (HTTP 503)")
    timeout: float = Field(0.0, ge=0, le=1, description="no answer until the client's read timeout")
    malformed: float = Field(0.0, ge=0, le=1, description="a reply that is not the JSON asked for")
    cutoff: float = Field(0.0, ge=0, le=1, description="a reply cut off at max tokens")
    latency: float = Field(0.0, ge=0, le=60, description="seconds before every answer")
    deny: list[str] = Field(default_factory=list, description="model ids answered AccessDeniedException")
    missing: list[str] = Field(
        default_factory=list, description="model ids answered ResourceNotFoundException"
    )
    corrupt: str | None = Field(
        None,
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*(:(0(\.\d+)?|1(\.0*)?))?$",
        description="FIELD[:RATE]: this top-level field of the reply made wrong (a rate of the replies, "
        "default 1), for docagent eval's gate",
    )
    misquote: str | None = Field(
        None,
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*(:(0(\.\d+)?|1(\.0*)?))?$",
        description="FIELD[:RATE]: this field's evidence quotes text the document does not hold (a rate of "
        "the replies, default 1)",
    )
    batch_record_error: float = Field(
        0.0, ge=0, le=1, description="batch inference: this share of the records answered with an error line"
    )
    batch_job: Literal["", "failed", "expired"] = Field(
        "", description="batch inference: every batch job fails, or expires without starting"
    )
    batch_seconds: float = Field(
        0.0, ge=0, le=3600, description="batch inference: seconds a batch job stays in progress (a slow job)"
    )
    models: list[str] = Field(
        default_factory=list,
        description="the model ids (or parts of them) the per-call faults of Converse apply to (not deny, "
        "missing, nor the batch switches): a cascade's cheap model made worse than the strong one; none: "
        "every model",
    )
    seed: int | None = None

    def applies_to(self, model_id: str) -> bool:
        """Whether the rate, reply and latency faults touch a call of ``model_id`` (``models``)."""
        return not self.models or any(part in model_id for part in self.models)

    def corrupted(self, reply: str, draw: float) -> str:
        """``reply`` with the ``corrupt`` field made wrong when ``draw`` falls under its rate: a number plus
        1, a date a day later, any other value with "-x" appended (a value the schema refuses makes the
        document rejected, as a model's bad reply would)."""
        if self.corrupt is None:
            return reply
        name, _, rate = self.corrupt.partition(":")
        try:
            facts = json.loads(reply)
        except ValueError:
            return reply
        if draw >= float(rate or 1) or not isinstance(facts, dict) or facts.get(name) is None:
            return reply
        value = facts[name]
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            facts[name] = value + 1
        elif isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
            facts[name] = (dt.date.fromisoformat(value) + dt.timedelta(days=1)).isoformat()
        else:
            facts[name] = f"{value}-x"
        return json.dumps(facts)

    def misquoted(self, reply: str, draw: float) -> str:
        """``reply`` with the ``misquote`` field's quotes replaced when ``draw`` falls under its rate."""
        if self.misquote is None:
            return reply
        name, _, rate = self.misquote.partition(":")
        return misquoted(reply, name) if draw < float(rate or 1) else reply

    def model_post_init(self, _: Any) -> None:
        if sum(getattr(self, name) for name in ("throttle", "unavailable", "timeout")) > 1:
            raise ValueError("throttle + unavailable + timeout must not exceed 1")


def parse_model_faults(spec: str) -> ModelFaults:
    """``throttle=0.3,latency=0.05,deny=MODEL_ID`` (repeat deny/missing/models for several ids); ``none``
    clears."""
    values: dict[str, Any] = {}
    for part in (p.strip() for p in spec.split(",")):
        if not part or part == "none":
            continue
        name, sep, value = part.partition("=")
        if not sep:
            raise ValueError(f"model fault {part!r} is not NAME=VALUE")
        if name in {"deny", "missing", "models"}:
            values.setdefault(name, []).append(value)
        else:
            values[name] = value
    try:
        return ModelFaults.model_validate(values)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'faults'}: {e['msg']}" for e in error.errors()
        )
        raise ValueError(f"invalid model faults {spec!r}: {problems}") from None


def model_faults_spec(faults: ModelFaults) -> str:
    """The ``--model-faults`` text of ``faults`` (parse_model_faults reads it back)."""
    parts = []
    for name, value in faults.model_dump(exclude_defaults=True).items():
        values = value if isinstance(value, list) else [value]
        parts += [f"{name}={item}" for item in values]
    return ",".join(parts) or "none"


def set_model_faults(endpoint: str, faults: ModelFaults | None) -> dict[str, Any]:
    """Change a running local cloud's model faults (None resets them and the counters)."""
    data = None if faults is None else faults.model_dump_json().encode()
    request = urllib.request.Request(
        endpoint.rstrip("/") + ADMIN_PATH,
        data=data,
        method="DELETE" if faults is None else "PUT",
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(signed(request), timeout=10) as response:
        answer: dict[str, Any] = json.loads(response.read())
    return answer


def model_faults_of(endpoint: str) -> dict[str, Any]:
    request = signed(urllib.request.Request(endpoint.rstrip("/") + ADMIN_PATH))
    with urllib.request.urlopen(request, timeout=10) as response:
        answer: dict[str, Any] = json.loads(response.read())
    return answer
