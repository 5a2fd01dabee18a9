"""In-memory fakes shared by the tests.

A Lambda context with a real deadline, a model provider that answers from dicts and counts its calls, an
http action target, and a stand-in for process death.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from docagent.localcloud.bedrock.evidence import with_evidence
from functions.actions.payloads import RemoteRecord
from functions.errors import ActionOutcomeUnknown, ActionTargetUnavailable
from functions.inference.instructions import asked
from functions.payloads.common import utc_now
from functions.payloads.model_calls import ModelReply
from functions.reading.documents import DocumentInput
from functions.reading.page_texts import page_texts


class SimulatedCrash(BaseException):
    """Stands in for the process dying (kill -9, OOM, timeout).

    A BaseException, so neither Powertools idempotency (``except Exception``) nor our code catches it: the
    idempotency record stays exactly as a dead invocation would leave it.
    """


class FakeLambdaContext(LambdaContext):
    """A LambdaContext whose remaining time counts down to a real deadline ``timeout_ms`` from creation."""

    def __init__(self, timeout_ms: int = 60_000, function_name: str = "docagent-test") -> None:
        self._function_name = function_name
        self._function_version = "$LATEST"
        self._invoked_function_arn = f"arn:aws:lambda:us-east-1:123456789012:function:{function_name}"
        self._memory_limit_in_mb = 512
        self._aws_request_id = str(uuid.uuid4())
        self._log_group_name = f"/aws/lambda/{function_name}"
        self._log_stream_name = "2026/11/29/[$LATEST]0123456789abcdef"
        self.deadline = time.time() + timeout_ms / 1000

    def get_remaining_time_in_millis(self) -> int:  # type: ignore[override]
        return max(0, int((self.deadline - time.time()) * 1000))


class CountingProvider:
    """A ModelProvider answering from dicts and counting every call.

    ``replies`` (extraction) and ``classes`` (classification: the class name, or None) are keyed by the
    document's sha256 or its text; what a call asks is read from its user text (instructions.asked).
    ``crash_on_calls`` lists 1-based call numbers that die mid-call (SimulatedCrash) before returning;
    ``reply`` answers every extraction with this text (to produce malformed output). An extraction's reply
    quotes each value from the document, as the local model does (docagent/localcloud/bedrock/evidence.py).
    """

    system = "test.fake"
    operation = "chat"

    def __init__(
        self,
        replies: Mapping[str, str | Mapping[str, object]] | None = None,
        *,
        classes: Mapping[str, str | None] | None = None,
        crash_on_calls: tuple[int, ...] = (),
        reply: str | None = None,
        model_id: str = "fake-model",
    ) -> None:
        self.calls: list[str] = []
        self.asked: list[str] = []
        self.systems: list[str] = []
        self._replies = dict(replies or {})
        self._classes = dict(classes or {})
        self._crash_on_calls = crash_on_calls
        self._reply = reply
        self._model_id = model_id

    @property
    def model_id(self) -> str:
        return self._model_id

    def _answer(self, table: Mapping[str, object], document: DocumentInput, what: str) -> object:
        for key in (hashlib.sha256(document.data).hexdigest(), document.data.decode("utf-8", "replace")):
            if key in table:
                return table[key]
        raise LookupError(f"the fake provider has no {what} for this document: add it to the test's dict")

    def converse(self, document: DocumentInput, system: str, user: str) -> ModelReply:
        request = asked(user)
        assert request is not None, f"a user text no docagent function writes: {user!r}"
        self.calls.append(document.data.decode("utf-8", "replace"))
        self.asked.append(request.kind)
        self.systems.append(system)
        if len(self.calls) in self._crash_on_calls:
            raise SimulatedCrash(f"process died during model call {len(self.calls)}")
        if request.kind == "classify":
            text = json.dumps({"class": self._answer(self._classes, document, "class")})
        elif self._reply is not None:
            text = self._reply
        else:
            answer = self._answer(self._replies, document, "reply")
            text = answer if isinstance(answer, str) else json.dumps(answer)
            # each value quoted from the document as the local model quotes it (its evidence)
            text = with_evidence(text, page_texts(document.data, document.format) or [document.data.decode()])
        return ModelReply(text=text, model_id=self._model_id, input_tokens=100, output_tokens=40)


class InMemoryRecipient:
    """An http action's target recording every call, with the ticket service's fault switches in miniature.

    ``honour_keys=False`` ignores idempotency keys (an API without them; its records carry no key);
    ``lose_answers=n`` makes the next n creates store the record and then lose the answer
    (ActionOutcomeUnknown); ``unavailable=n`` fails the next n calls, creates or searches, with
    ActionTargetUnavailable (nothing done).
    """

    name = "memory"

    def __init__(self, *, honour_keys: bool = True, lose_answers: int = 0, unavailable: int = 0) -> None:
        self.records: list[RemoteRecord] = []
        self.payloads: list[dict[str, Any]] = []
        self.create_calls: list[str] = []
        self.find_calls: list[str] = []
        self.honour_keys = honour_keys
        self.lose_answers = lose_answers
        self.unavailable = unavailable

    def _maybe_unavailable(self) -> None:
        if self.unavailable > 0:
            self.unavailable -= 1
            raise ActionTargetUnavailable("the in-memory target is down")

    def create(
        self, idempotency_key: str, payload: dict[str, Any], *, on_sent: Callable[[], None] | None = None
    ) -> RemoteRecord:
        self.create_calls.append(idempotency_key)
        self._maybe_unavailable()
        existing = [record for record in self.records if record.idempotency_key == idempotency_key]
        if existing and self.honour_keys:
            if on_sent is not None:
                on_sent()
            return existing[0]
        record = RemoteRecord(
            id=f"MEM-{len(self.records) + 1}",
            reference=str(payload["reference"]),
            idempotency_key=idempotency_key if self.honour_keys else "",
            created_at=utc_now(),
        )
        self.records.append(record)
        self.payloads.append(payload)
        if on_sent is not None:
            on_sent()  # the target acted on the request; its answer is not read yet
        if self.lose_answers > 0:
            self.lose_answers -= 1
            raise ActionOutcomeUnknown("the in-memory target lost its answer")
        return record.model_copy(update={"created": True})

    def find_by_reference(self, reference: str) -> list[RemoteRecord]:
        self.find_calls.append(reference)
        self._maybe_unavailable()
        return [record for record in self.records if record.reference == reference]

    def factory(self) -> Callable[..., InMemoryRecipient]:
        """A RecipientFactory answering this target for any URL (run_actions/verify_job ``make=``)."""
        return lambda *_: self


__all__ = [
    "CountingProvider",
    "FakeLambdaContext",
    "InMemoryRecipient",
    "SimulatedCrash",
]
