"""The tokens Bedrock bills for a Converse request, as the local Bedrock reports them in ``usage``: one
documented approximation, used for every call it answers (on-demand, and each batch record). docs/cost.md,
"Token counting", explains it and what it means for the demo's figures.

What Bedrock counts (looked up 2026-12-02):

- Bedrock ``CountTokens`` (API Reference, ``ConverseTokensRequest``): it takes a Converse request's
  ``system``, ``messages`` and ``toolConfig``, and "the token count returned by this operation will match the
  token count that would be charged if the same input were sent to the model in an InvokeModel or Converse
  request": the system prompt, every content block of the messages and the tool configuration are billed.
- Anthropic, "Tool use pricing and tokens": a request with tools adds the tools' names, descriptions and
  schemas, and a tool-use system prompt; for Claude Haiku 4.5 (and the other Claude 4.x models) 346 tokens
  with tool choice ``auto`` or ``none``, 313 with ``any`` or ``tool``; with no tools, none. docagent sends no
  ``toolConfig`` (functions/inference/converse.py, ``converse_body``), so its calls pay none of it.
- Anthropic, "PDF support" (Amazon Bedrock section): without citations Converse gives the model a PDF's
  extracted text only ("approximately 1,000 tokens for a 3-page PDF"), so a document block costs its text;
  docx, html, md, txt, csv and the spreadsheets are text to the model as well. The document's ``name`` is
  given to the model (AWS API Reference, ``DocumentBlock``: "vulnerable to prompt injections"), so it is
  counted; how Bedrock wraps a document is not documented, so nothing more is.
- Anthropic, "Token counting": the system prompt "You are a scientist" with the message "Hello, Claude"
  counts 14 input tokens: 8 of text at four characters a token, so about 6 of a request's framing (the
  turn's role markers).
- Characters a token: Anthropic publishes no ratio for its tokenizer; four characters a token of English
  text is the usual rule of thumb, and the budget's reservation estimate (functions/budget.py) uses it too.
  Bedrock's own count (``usage`` of a real call, or CountTokens) is exact; this is the approximation.

The output is the reply's text at the same rate. Deviation (docs/local-cloud.md): an approximation, not
Claude's tokenizer; numbers and JSON punctuation cost more tokens a character than prose does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

CHARACTERS_PER_TOKEN = 4
REQUEST_FRAMING_TOKENS = 6
# The tool-use system prompt of Claude Haiku 4.5 and the other Claude 4.x models, by tool choice.
TOOL_USE_SYSTEM_PROMPT_TOKENS = {"auto": 346, "none": 346, "any": 313, "tool": 313}


def text_tokens(text: str) -> int:
    """A text's tokens: characters / 4, rounded up."""
    return -(-len(text) // CHARACTERS_PER_TOKEN)


def tool_tokens(tool_config: Mapping[str, Any] | None) -> int:
    """The tool configuration's tokens: its tools' specifications and the tool-use system prompt; 0 without
    tools."""
    tools = list((tool_config or {}).get("tools") or [])
    if not tools:
        return 0
    choice = next(iter((tool_config or {}).get("toolChoice") or {"auto": {}}), "auto")
    specs = "".join(str(tool.get("toolSpec", tool)) for tool in tools)
    prompt = TOOL_USE_SYSTEM_PROMPT_TOKENS.get(str(choice), TOOL_USE_SYSTEM_PROMPT_TOKENS["auto"])
    return prompt + text_tokens(specs)


def input_tokens(
    system: Iterable[Mapping[str, Any]],
    messages: Iterable[Mapping[str, Any]],
    document_text: str,
    tool_config: Mapping[str, Any] | None = None,
) -> int:
    """What Bedrock bills as the request's input tokens: the system prompt, the messages' text blocks, the
    document blocks' names and extracted text (``document_text``: all of them, counted when the messages
    hold a document block), the tool configuration, and the request's framing."""
    blocks = [block for message in messages for block in message.get("content", [])]
    texts = [str(block.get("text", "")) for block in [*system, *blocks] if "text" in block]
    names = [str(block["document"].get("name", "")) for block in blocks if "document" in block]
    documents = [document_text] if names else []
    return (
        REQUEST_FRAMING_TOKENS
        + sum(text_tokens(text) for text in [*texts, *names, *documents])
        + tool_tokens(tool_config)
    )


def output_tokens(reply: str) -> int:
    """What Bedrock bills as the reply's output tokens."""
    return text_tokens(reply)
