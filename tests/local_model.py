"""A model provider for tests: the production request answered by an in-process local Bedrock."""

from __future__ import annotations

import json
from typing import Any

from botocore.exceptions import ClientError

from docagent.localcloud.bedrock.converse_api import LocalBedrock
from docagent.localcloud.bedrock.labels import Label, label_digests
from functions.inference.converse import converse_body, document_refusal, read_reply
from functions.payloads.model_calls import ModelReply
from functions.reading.documents import DocumentInput


class LocalModel:
    """The production request (converse_body) answered by a local Bedrock; its refusals mapped as the
    production provider maps Bedrock's (document_refusal)."""

    system = "test.local"
    operation = "chat"
    model_id = "local-model"

    def __init__(self, labels: dict[bytes, dict[str, Any]]) -> None:
        self.bedrock = LocalBedrock()
        self.bedrock.labels.add(
            Label(sha256=digest, fields=fields)
            for data, fields in labels.items()
            for digest in label_digests(data)
        )
        self.calls = 0

    def converse(self, document: DocumentInput, system: str, user: str) -> ModelReply:
        self.calls += 1
        body = converse_body(document, system, user, 800, 0.0)
        status, _, answer = self.bedrock.converse(self.model_id, body["system"], body["messages"], 800)
        if status != 200:
            error = ClientError(
                {"Error": {"Code": "ValidationException", "Message": json.loads(answer)["message"]}},
                "Converse",
            )
            refused = document_refusal(error, document)
            assert refused is not None, answer
            raise refused
        return read_reply(json.loads(answer), self.model_id, 800)
