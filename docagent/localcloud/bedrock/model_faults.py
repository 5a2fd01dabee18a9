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
        description="FIELD[:RATE]: this top-level field of the reply made a little wrong, its type and shape "
        "kept (a rate of the replies, default 1), for docagent eval's gate and the checks",
    )
    misquote: str | None = Field(
        None,
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*(:(0(\.\d+)?|1(\.0*)?))?$",
        description="FIELD[:RATE]: this field's evidence quotes text the document does not hold (a rate of "
        "the replies, default 1)",
    )
    split: str | None = Field(
        None,
        pattern=r"^(boundary|merge|unplace)(:(0(\.\d+)?|1(\.0*)?))?$",
        description="KIND[:RATE]: a page classification made wrong (a rate of the replies, default 1): "
        "`boundary` moves each boundary a page later (a section's first page joins the section before), "
        "`merge` joins the second section to the first, `unplace` gives the last page no class",
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
        """``reply`` with the ``corrupt`` field made wrong when ``draw`` falls under its rate, as a model
        misreads a value: ``wrong_value`` (of the same type and shape, so its schema still takes it and the
        checks, grounding and review see a plausible wrong value)."""
        if self.corrupt is None:
            return reply
        name, _, rate = self.corrupt.partition(":")
        try:
            facts = json.loads(reply)
        except ValueError:
            return reply
        if draw >= float(rate or 1) or not isinstance(facts, dict) or facts.get(name) is None:
            return reply
        facts[name] = wrong_value(facts[name])
        return json.dumps(facts)

    def wrong_split(self, reply: str, draw: float) -> str:
        """A page classification reply (``{"pages": [{"page", "class", "starts"}]}``) with the ``split``
        fault applied when ``draw`` falls under its rate (docagent eval's split accuracy, the re-split
        review)."""
        if self.split is None:
            return reply
        kind, _, rate = self.split.partition(":")
        try:
            pages = json.loads(reply)["pages"]
        except (ValueError, KeyError, TypeError):
            return reply
        if draw >= float(rate or 1) or not isinstance(pages, list) or not pages:
            return reply
        return json.dumps({"pages": wrong_pages(kind, pages)})

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


# An amount's whole part: digits before a decimal part of one or two digits ("785.00", "1234,5").
_WHOLE_PART = re.compile(r"(\d+)(?=[.,]\d{1,2}(?!\d))")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def wrong_value(value: Any) -> Any:
    """A value a little wrong, of the same JSON type and shape (the local model's ``corrupt``; the label's
    value is its schema's, so the wrong one keeps what a schema can ask of it: type, pattern's character
    classes, length, format): a number plus 1; an ISO date a day later; an amount string ("785.00") one unit
    more ("786.00"); other text with its last number one more ("POL-204415" -> "POL-204416"), else its last
    letter the next one ("Rahman" -> "Rahmao"); a boolean flipped; a list's first item, an object's first
    value made wrong. An ``enum`` member is the one thing it may turn into a value its schema refuses."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        if _ISO_DATE.fullmatch(value):
            return (dt.date.fromisoformat(value) + dt.timedelta(days=1)).isoformat()
        digits = list(_WHOLE_PART.finditer(value)) or list(re.finditer(r"\d+", value))
        if digits:
            last = digits[-1]
            more = str(int(last.group()) + 1).zfill(len(last.group()))
            return value[: last.start()] + more + value[last.end() :]
        letters = [index for index, char in enumerate(value) if char.isascii() and char.isalpha()]
        if not letters:
            return value + "x"
        at = letters[-1]
        char = value[at]
        after = "a" if char == "z" else "A" if char == "Z" else chr(ord(char) + 1)
        return value[:at] + after + value[at + 1 :]
    if isinstance(value, list) and value:
        return [wrong_value(value[0]), *value[1:]]
    if isinstance(value, dict):
        for key, item in value.items():
            if item is not None:
                return {**value, key: wrong_value(item)}
    return value


def wrong_pages(kind: str, pages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A window's page answers split wrong (``ModelFaults.split``): ``boundary``, each section after the
    first starts a page later (its first page takes the class before it); ``merge``, the second section's
    pages take the first's class; ``unplace``, the last page is of no class."""
    answers = [dict(page) for page in pages]
    starts = [
        index
        for index, page in enumerate(answers)
        if index and (page.get("starts") or page.get("class") != answers[index - 1].get("class"))
    ]
    if kind == "unplace":
        answers[-1].update({"class": None, "starts": False})
    elif kind == "merge" and starts:
        end = starts[1] if len(starts) > 1 else len(answers)
        for page in answers[starts[0] : end]:
            page.update({"class": answers[starts[0] - 1].get("class"), "starts": False})
    elif kind == "boundary":
        for index in starts:
            if index + 1 < len(answers) and answers[index + 1].get("class") == answers[index].get("class"):
                answers[index + 1]["starts"] = True
            answers[index].update({"class": answers[index - 1].get("class"), "starts": False})
    return answers
