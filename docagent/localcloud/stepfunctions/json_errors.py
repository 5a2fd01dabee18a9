"""A JSON text's parse error in the words of AWS's parser (Jackson), where the recordings show them.

As recorded on AWS in LocalStack's AWS-validated snapshots (read 2026-12-04): test_sfn_api
``test_invalid_start_execution_input`` ("Invalid State Machine Execution Input: 'Unrecognized token 'not':
was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')'") and
test_sfn_api_validation ``..._not_a_definition[NOT_A_DEF]`` (the same, then "\\n at [Source: (String)"not a
definition"; line: 1, column: 4]", the column just after the token), and for a single-quoted field name
"Unexpected character (''' (code 39)): was expecting double-quote to start field name". Other errors
keep Python's parser's reason (no recording to copy).
"""

from __future__ import annotations

import json
import re
from typing import NamedTuple

_WORD = re.compile(r"[A-Za-z0-9_$]+")
EXPECTING = "was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')"
FIELD_NAME_EXPECTED = "was expecting double-quote to start field name"


class ParseError(NamedTuple):
    reason: str  # "Unrecognized token 'not': was expecting (...)", or Python's reason
    source: str  # '[Source: (String)"..."; line: 1, column: 4]', or "" when not Jackson's


def parse_error(text: str, error: json.JSONDecodeError) -> ParseError:
    """``error`` (Python's, parsing ``text``) as Jackson words it where it can."""
    if error.msg == "Expecting property name enclosed in double quotes" and error.pos < len(text):
        found = text[error.pos]  # "{'not': 'json'": as recorded (test_invalid_start_execution_input)
        return ParseError(f"Unexpected character ('{found}' (code {ord(found)})): {FIELD_NAME_EXPECTED}", "")
    word = _WORD.match(text, error.pos)
    if error.msg != "Expecting value" or word is None:
        return ParseError(str(error), "")
    line = text.count("\n", 0, word.start()) + 1
    column = word.end() - (text.rfind("\n", 0, word.start()) + 1) + 1
    source = f'[Source: (String)"{text}"; line: {line}, column: {column}]'
    return ParseError(f"Unrecognized token '{word.group()}': {EXPECTING}", source)
