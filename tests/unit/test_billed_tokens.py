"""The local Bedrock reports the tokens Bedrock would bill for a Converse request
(docagent/localcloud/bedrock/billed_tokens.py; docs/cost.md, "Token counting"): the system prompt, the text
blocks, each document's name and extracted text, the tools and the request's framing; the reply's text."""

from __future__ import annotations

import json

from docagent.localcloud.bedrock import billed_tokens
from docagent.localcloud.bedrock.converse_api import LocalBedrock
from docagent.localcloud.bedrock.labels import Reader
from functions.inference.converse import converse_body
from functions.reading.documents import DocumentInput

SYSTEM = "You extract invoices."  # 21 characters: 6 tokens
USER = "Fields of this invoice as JSON."  # 31: 8
NAME = "invoice-7"  # 9: 3
TEXT = "Invoice INV-7, total 120.00 EUR, due 2026-12-31."  # 48: 12
REPLY = json.dumps({"invoice_number": "INV-7", "total": 120.0})


def request() -> dict:
    document = {"document": {"format": "txt", "name": NAME, "source": {"bytes": TEXT.encode()}}}
    return {
        "system": [{"text": SYSTEM}],
        "messages": [{"role": "user", "content": [document, {"text": USER}]}],
    }


def test_a_request_bills_its_prompt_its_document_its_name_and_its_framing():
    body = request()
    billed = billed_tokens.input_tokens(body["system"], body["messages"], TEXT)
    assert billed == billed_tokens.REQUEST_FRAMING_TOKENS + 6 + 8 + 3 + 12
    # without a document block the text is in the user text already: counted once
    plain = [{"role": "user", "content": [{"text": USER}]}]
    framing = billed_tokens.REQUEST_FRAMING_TOKENS
    assert billed_tokens.input_tokens(body["system"], plain, TEXT) == framing + 6 + 8


def test_tools_add_their_schemas_and_the_tool_use_system_prompt_and_docagent_sends_none():
    spec = {"toolSpec": {"name": "fields", "inputSchema": {"json": {"type": "object"}}}}
    auto = billed_tokens.tool_tokens({"tools": [spec]})
    forced = billed_tokens.tool_tokens({"tools": [spec], "toolChoice": {"tool": {"name": "fields"}}})
    assert auto - forced == 346 - 313 and forced > 313
    assert billed_tokens.tool_tokens(None) == billed_tokens.tool_tokens({"tools": []}) == 0
    sent = converse_body(DocumentInput(data=TEXT.encode(), format="txt", name=NAME), SYSTEM, USER, 800, 0.0)
    assert "toolConfig" not in sent


def test_the_local_model_reports_the_billed_tokens_of_the_call():
    model = LocalBedrock()
    model.reader = Reader(class_name="invoice", reply=lambda text: REPLY, path="inline")
    body = request()
    status, _, answer = model.converse("fake-model", body["system"], body["messages"], 800)
    assert status == 200, answer
    usage = json.loads(answer)["usage"]
    assert usage["inputTokens"] == billed_tokens.input_tokens(body["system"], body["messages"], TEXT)
    replied = json.loads(answer)["output"]["message"]["content"][0]["text"]
    assert replied.startswith(REPLY[:-1]) and '"_evidence"' in replied  # the reader's reply, quoted
    assert usage["outputTokens"] == -(-len(replied) // 4) > len(replied.split())  # more than its words
