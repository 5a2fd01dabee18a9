"""A DynamoDB request's condition expression parsed once, not twice.

moto (5.2.5) parses a PutItem's or UpdateItem's ``ConditionExpression`` twice a request: in the handler
(``DynamoHandler.put_item``, ``update_item``: for the names and values it uses) and again in the backend to
decide the condition (``Table.put_item`` through ``get_filter_expression``, ``DynamoDBBackend.update_item``).
The durable steps' idempotency put carries Powertools' five-clause condition: the two parses were four
fifths of moto's PutItem handling (cProfile, 300 puts, 2026-12-08; the text's lexing is already once a
process: condition_lexing.py).

Here a parse's result (moto's condition, a tree of ``Op``/``Func`` objects that nothing changes after it is
made, and the names and values it found) is kept for its text, names and values (the last ``KEPT``), so
the backend's parse of the same request takes the handler's. A text or a request moto refuses is never
kept: its error is raised at every parse, as moto raises it. Values that are not JSON (none are, as
requests are parsed) are parsed as before.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from moto.dynamodb.comparisons import ConditionExpressionParser

KEPT = 32
_moto_parse = ConditionExpressionParser.parse


@functools.lru_cache(maxsize=KEPT)
def _parsed(
    expression: str, names: tuple[tuple[str, str], ...] | None, values: str | None
) -> tuple[Any, tuple[str, ...], tuple[str, ...]]:
    parser = ConditionExpressionParser(
        expression, None if names is None else dict(names), None if values is None else json.loads(values)
    )
    condition = _moto_parse(parser)
    return condition, tuple(parser.expr_attr_names_found), tuple(parser.expr_attr_values_found)


def _parse(self: ConditionExpressionParser) -> Any:
    expression, names, values = (
        self.condition_expression,
        self.expression_attribute_names,
        self.expression_attribute_values,
    )
    if not expression:  # no condition (moto's answer is at once)
        return _moto_parse(self)
    try:
        names_key = None if names is None else tuple(sorted(names.items()))
        values_key = None if values is None else json.dumps(values, sort_keys=True)
        hash(names_key)
    except TypeError:  # not JSON or not text: parsed as moto parses
        return _moto_parse(self)
    condition, names_found, values_found = _parsed(expression, names_key, values_key)
    self.expr_attr_names_found.extend(names_found)
    self.expr_attr_values_found.extend(values_found)
    return condition


def install() -> None:
    ConditionExpressionParser.parse = _parse  # type: ignore[method-assign]
