"""In-memory fakes shared by the tests.

A Lambda context with a real deadline, a model provider that counts its calls, a ticket client, and a
stand-in for process death.
"""

from __future__ import annotations

import time
import uuid

from aws_lambda_powertools.utilities.typing import LambdaContext

from functions.model.base import parse_facts
from functions.model.offline import OfflineProvider
from functions.models import ModelResponse, TicketPayload, TicketRecord, utc_now


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
    """A ModelProvider that really extracts (via the offline extractor) and counts every call.

    ``crash_on_calls`` lists 1-based call numbers that die mid-call (SimulatedCrash) before returning;
    ``reply`` replaces the model's reply text (to produce malformed output).
    """

    system = "test.fake"
    operation = "chat"

    def __init__(
        self, *, crash_on_calls: tuple[int, ...] = (), reply: str | None = None, model_id: str = "fake-model"
    ) -> None:
        self.calls: list[str] = []
        self._crash_on_calls = crash_on_calls
        self._reply = reply
        self._model_id = model_id
        self._offline = OfflineProvider(model_id)

    @property
    def model_id(self) -> str:
        return self._model_id

    def extract(self, text: str, prompt: str) -> ModelResponse:
        self.calls.append(text)
        if len(self.calls) in self._crash_on_calls:
            raise SimulatedCrash(f"process died during model call {len(self.calls)}")
        reply = self._reply if self._reply is not None else self._offline.reply(text)
        facts = parse_facts(reply, model_id=self._model_id, input_tokens=100, output_tokens=40)
        return ModelResponse(facts=facts, model_id=self._model_id, input_tokens=100, output_tokens=40)


class InMemoryTicketClient:
    """A ticket system honouring idempotency keys, recording every create call."""

    name = "memory"

    def __init__(self) -> None:
        self.tickets: dict[str, TicketRecord] = {}
        self.create_calls: list[str] = []

    def create(self, idempotency_key: str, payload: TicketPayload) -> TicketRecord:
        self.create_calls.append(idempotency_key)
        if idempotency_key in self.tickets:
            return self.tickets[idempotency_key]
        ticket = TicketRecord(
            ticket_id=f"MEM-{len(self.tickets) + 1}",
            reference=payload.reference,
            idempotency_key=idempotency_key,
            title=payload.title,
            body=payload.body,
            created_at=utc_now(),
        )
        self.tickets[idempotency_key] = ticket
        return ticket.model_copy(update={"created": True})

    def find_by_reference(self, reference: str) -> list[TicketRecord]:
        return [ticket for ticket in self.tickets.values() if ticket.reference == reference]


__all__ = [
    "CountingProvider",
    "FakeLambdaContext",
    "InMemoryTicketClient",
    "SimulatedCrash",
]
