"""moto's random strings (every answer's 52-character ``x-amzn-requestid``), drawn as moto draws them.

moto's ``MotoRandom.get_random_string`` picks each character with ``Random.choice``: two Python calls and a
``getrandbits`` per character, 52 times for the request id ``BaseResponse._enrich_response`` adds to every
answer (moto/utilities/aws_headers.py ``gen_amzn_requestid_long``; moto 5, read 2026-12-08). Here the same
``getrandbits`` draws are made in one loop (``choice`` is ``seq[_randbelow(len(seq))]``, and ``_randbelow``
draws ``len(seq).bit_length()`` bits until they fall below ``len(seq)``: random.py), so a seeded
``mock_random`` gives the same strings and leaves the same state as before. A ``MotoRandom`` whose
``_randbelow`` is another (a subclass's) is answered by moto's own method.
"""

from __future__ import annotations

import random
import string
from typing import Any

from moto.moto_api._internal.moto_random import MotoRandom

_moto_get_random_string = MotoRandom.get_random_string
_LETTERS = string.ascii_letters
_LETTERS_AND_DIGITS = string.ascii_letters + string.digits


def get_random_string(
    self: MotoRandom, length: int = 20, include_digits: bool = True, lower_case: bool = False
) -> str:
    if type(self)._randbelow is not random.Random._randbelow_with_getrandbits:  # type: ignore[attr-defined]
        return _moto_get_random_string(self, length, include_digits, lower_case)
    pool = _LETTERS_AND_DIGITS if include_digits else _LETTERS
    size = len(pool)
    bits = size.bit_length()
    draw = self.getrandbits
    chosen = []
    for _ in range(length):
        index = draw(bits)
        while index >= size:
            index = draw(bits)
        chosen.append(pool[index])
    text = "".join(chosen)
    return text.lower() if lower_case else text


def install() -> None:
    method: Any = get_random_string
    MotoRandom.get_random_string = method  # type: ignore[method-assign]
