"""A rule's ``expression``: a JSONata expression over the document's fields (the input) and the rows its
earlier lookups attached (each a variable named by its ``attach``: ``$account``), true when the rule holds
(docs/defining-a-job.md, "Checks"). JSONata is the one expression language of the kit: Step Functions' own,
evaluated by jsonata-python (pure Python, in the functions' layer: stacks/sdk_pins.py), as the local cloud
evaluates the workflow's.

    $sum(line_items.$number(amount)) = $number(total)         the items add up to the total
    end_date > start_date                                     ISO dates compare as text
    $number(total) <= $number($account.limit)                 within the attached row's limit

An expression is compiled at ``definition validate`` (a syntax error names the rule) and bounded when it runs
(``TIMEOUT_MS``, ``MAX_DEPTH``: a hostile value cannot hold a worker; docs/security.md).
"""

from __future__ import annotations

from typing import Any

import jsonata  # type: ignore[import-untyped]
from jsonata import jexception

TIMEOUT_MS = 1000  # one evaluation (jsonata-python checks it between steps)
MAX_DEPTH = 200  # nested evaluation frames


def _compiled(expression: str) -> Any:
    """A new evaluator for each evaluation, never a cached one: jsonata-python starts an expression's time
    bound when it is compiled (its Timebox, jsonata/timebox.py: ``self.time`` set in the constructor) and
    counts its depth on the instance, so an evaluator kept in a warm container fails every evaluation a
    second after it was compiled ("Evaluation timeout after 1000 milliseconds"), and threads sharing one
    (the local cloud's workers) share its depth. Parsing an expression of a rule takes well under a
    millisecond."""
    return jsonata.Jsonata(expression, timeout=TIMEOUT_MS, stack=MAX_DEPTH)


def expression_problem(expression: str) -> str | None:
    """Why an expression does not compile, or None."""
    try:
        _compiled(expression)
    except jexception.JException as error:
        return f"the expression does not compile: {error}"
    return None


def expression_failure(expression: str, fields: dict[str, Any], attached: dict[str, Any]) -> str | None:
    """None when the expression gives ``true`` for these fields and attached rows; else why not."""
    try:
        value = _compiled(expression).evaluate(fields, dict(attached))
    except RecursionError:
        return "the expression nested too deeply"
    except Exception as error:  # jsonata-python raises its JException and Python's own (ValueError, ...)
        return f"the expression failed: {error}"
    if value is True:
        return None
    if value is False:
        return f"{expression} is false"
    if value is None:
        return f"{expression} gave no value (does it read a field this document lacks?)"
    return f"{expression} gave {value!r}, not true or false"
