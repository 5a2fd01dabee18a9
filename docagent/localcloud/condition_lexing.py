"""A DynamoDB condition expression's tokens, lexed once a process.

moto lexes a ConditionExpression (or FilterExpression) character by character with a list of regular
expressions at every request that has one. The durable steps' idempotency record is put with the same
condition each time (Powertools: ``attribute_not_exists(#id) OR #expiry < :now OR (...)``), and lexing it was
about a third of parsing it: 2.4 ms of CPU a PutItem on a busy machine (2026-12-07).

The tokens depend only on the text; moto's later passes take them from a deque and build new nodes (the
nodes are named tuples: nothing changes them). So each text is lexed once and its tokens kept (the last
``KEPT`` texts); every request gets its own deque of them, and the names and values it sends are applied
to them as before. A text moto refuses is never kept: its error is raised at every request, as moto
raises it.
"""

from __future__ import annotations

import functools
from collections import deque
from typing import Any

from moto.dynamodb.comparisons import ConditionExpressionParser

KEPT = 64
_moto_lex = ConditionExpressionParser._lex_condition_expression


@functools.lru_cache(maxsize=KEPT)
def _tokens(expression: str) -> tuple[Any, ...]:
    parser = ConditionExpressionParser(expression, None, None)
    return tuple(_moto_lex(parser))


def _lex_condition_expression(self: ConditionExpressionParser) -> deque[Any]:
    return deque(_tokens(self.condition_expression))


def install() -> None:
    ConditionExpressionParser._lex_condition_expression = _lex_condition_expression  # type: ignore[method-assign]
