"""The local Bedrock Runtime reads Converse document blocks as Bedrock does: through boto3 and the AWS CLI."""

from __future__ import annotations

import json

import pytest
from botocore.exceptions import ClientError

from docagent.drills.document_files import render
from docagent.kit.loader import read_bundle
from docagent.localcloud.bedrock.billed_tokens import CHARACTERS_PER_TOKEN
from docagent.localcloud.bedrock.converse_api import CONTEXT_WINDOW_TOKENS
from functions.errors import DocumentTooLong, DocumentUnreadable
from functions.inference import BedrockConverseProvider
from functions.inference.evidence import extracted_with_evidence, split
from functions.inference.instructions import extract_instruction
from functions.reading.documents import DocumentInput
from tests import documents as files
from tests.integration.conftest import aws_cli
from tests.support import EXAMPLES

MODEL = "us.anthropic.claude-haiku-4-5-20251001-v1:0"
INVOICE_CLASS = read_bundle(EXAMPLES / "invoices").classes["invoice"]
ASK = extract_instruction("invoice", "document-00001")


def message(*blocks: dict) -> list[dict]:
    return [
        {
            "role": "user",
            "content": [*blocks, {"text": "Extract the facts. Reply with the JSON object only."}],
        }
    ]


def document(data: bytes, fmt: str = "pdf", name: str = "document-00001") -> dict:
    return {"document": {"format": fmt, "name": name, "source": {"bytes": data}}}


@pytest.mark.parametrize("fmt", ["pdf", "docx", "html", "md", "txt", "xlsx"])
def test_the_production_provider_reads_each_format_through_the_endpoint(aws, fmt):
    provider = BedrockConverseProvider(MODEL, aws("bedrock-runtime"))
    data = render(files.INVOICE, fmt)
    name = "document-00042"
    reply = provider.converse(
        DocumentInput(data, fmt, name), INVOICE_CLASS.prompt or "", extract_instruction("invoice", name)
    )
    fields, _ = split(extracted_with_evidence(reply.text, INVOICE_CLASS))  # the local model quotes each value
    assert (fields["customer_id"], fields["invoice_number"]) == ("CUST-00007", "INV-2026-00421")
    assert fields["amount"] == "1234.56" and reply.input_tokens > 0


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (files.encrypted_pdf(), "encrypted or password-protected"),
        (files.corrupt_pdf(), "the PDF is corrupt"),
        (files.empty_pdf(), "no pages"),
        (render(files.INVOICE, "docx"), "not a valid pdf document"),
    ],
    ids=["encrypted", "corrupt", "no-pages", "docx-declared-pdf"],
)
def test_a_document_bedrock_cannot_parse_is_that_documents_rejection(aws, data, reason):
    provider = BedrockConverseProvider(MODEL, aws("bedrock-runtime"))
    with pytest.raises(DocumentUnreadable, match=reason) as raised:
        provider.converse(DocumentInput(data, "pdf", "document-00001"), "p", ASK)
    assert "Bedrock refused the pdf document" in str(raised.value)


@pytest.mark.parametrize(
    ("data", "fmt", "reason"),
    [
        (files.encrypted_xlsx(), "xlsx", "encrypted or password-protected"),
        (files.broken_xlsx(), "xlsx", "the XLSX is corrupt"),
        (files.empty_xlsx(), "xlsx", "no cell values"),
        (files.legacy_xls(), "xls", None),
    ],
    ids=["encrypted", "broken", "empty", "real-xls"],
)
def test_spreadsheets_are_read_or_refused_as_documents(aws, data, fmt, reason):
    messages = message(document(data, fmt))
    if reason is None:  # an Excel 97 invoice: read, its fields seen by the extractor
        reply = aws("bedrock-runtime").converse(modelId=MODEL, messages=messages)
        facts = json.loads(reply["output"]["message"]["content"][0]["text"])
        assert (facts["invoice_number"], facts["invoice_date"]) == ("INV-2026-00421", "2026-03-14")
        return
    with pytest.raises(ClientError) as raised:
        aws("bedrock-runtime").converse(modelId=MODEL, messages=messages)
    error = raised.value.response["Error"]
    assert error["Code"] == "ValidationException" and reason in error["Message"]
    assert "source.bytes" in error["Message"], "worded as Bedrock's refusal of a document"


@pytest.mark.parametrize(
    ("messages", "problem"),
    [
        (message(document(b"x", "txt", "../../etc/passwd")), "name is invalid"),
        (message(document(b"x", "txt", "a" * 201)), "outside 1 to 200"),
        (message(*(document(b"x", "txt", f"d{i}") for i in range(6))), "at most 5 documents"),
        ([{"role": "user", "content": [document(b"x", "txt")]}], "needs a text block"),
    ],
    ids=["traversal-name", "long-name", "six-documents", "no-text-block"],
)
def test_requests_bedrock_refuses_are_validation_exceptions(aws, messages, problem):
    with pytest.raises(ClientError) as raised:
        aws("bedrock-runtime").converse(modelId=MODEL, messages=messages)
    error = raised.value.response["Error"]
    assert error["Code"] == "ValidationException" and problem in error["Message"]
    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_the_aws_cli_sends_a_document_block(cloud, tmp_path):
    """awscli v1 sends a blob given in JSON as the string's bytes (not base64-decoded): a text document."""
    blocks = [
        {"document": {"format": "txt", "name": "document-00007", "source": {"bytes": files.INVOICE}}},
        {"text": "Extract the facts. Reply with the JSON object only."},
    ]
    (tmp_path / "messages.json").write_text(json.dumps([{"role": "user", "content": blocks}]))
    answer = aws_cli(
        cloud,
        "bedrock-runtime",
        "converse",
        "--model-id",
        MODEL,
        "--messages",
        f"file://{tmp_path / 'messages.json'}",
    )
    reply = json.loads(answer["output"]["message"]["content"][0]["text"])
    assert reply["invoice_number"] == "INV-2026-00421" and reply["amount"] == "1234.56"


def test_an_input_over_the_context_window_is_answered_as_bedrock_answers_it(aws):
    """HTTP 400, ValidationException, "Input is too long for requested model.": the same answer as Bedrock's,
    just over the window by the local estimate (4 characters a token) and not under it."""
    client = aws("bedrock-runtime")
    window = CONTEXT_WINDOW_TOKENS * CHARACTERS_PER_TOKEN
    fits = ("word " * (window // 5))[: window - 20_000].encode()  # room for maxTokens 800 and the rest
    answered = client.converse(
        modelId=MODEL, messages=message(document(fits, "txt")), inferenceConfig={"maxTokens": 800}
    )
    assert answered["stopReason"] in {"end_turn", "max_tokens"}
    too_long = fits + b" more" * 5_000
    with pytest.raises(ClientError) as raised:
        client.converse(
            modelId=MODEL, messages=message(document(too_long, "txt")), inferenceConfig={"maxTokens": 800}
        )
    error = raised.value.response
    assert error["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert error["Error"] == {
        "Code": "ValidationException",
        "Message": "Input is too long for requested model.",
    }
    provider = BedrockConverseProvider(MODEL, client)
    with pytest.raises(DocumentTooLong, match="longer than the model's context window"):
        provider.converse(DocumentInput(too_long, "txt", "document-00001"), "p", ASK)
