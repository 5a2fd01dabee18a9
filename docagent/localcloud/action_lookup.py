"""moto's check that a request's action is one of the response class's methods, without listing the class.

For every request, moto's ``BaseResponse.call_action`` asks ``action in method_names_from_class(cls)``, and
``method_names_from_class`` lists every member of the response class with ``inspect.getmembers`` (a few
hundred attributes, sorted) to answer one membership: 3 % of the endpoint's CPU in a yappi profile of a
100-document demo (1,331 calls, 3.1 s of 103 s profiled; 2026-12-02, moto 5.2.5, moto/core/responses.py
and moto/core/utils.py). Here the answer is the same question asked of that one name: is the class's
attribute of that name a plain function (``inspect.isfunction``, getmembers' predicate). Methods added to a
response class later (this package adds several) are seen as they are added: nothing is cached.
"""

from __future__ import annotations

import inspect
from collections.abc import Container

from moto.core import responses


class FunctionNames(Container[str]):
    """``name in FunctionNames(cls)`` is ``name in method_names_from_class(cls)``."""

    __slots__ = ("_owner",)

    def __init__(self, owner: object) -> None:
        self._owner = owner

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and inspect.isfunction(getattr(self._owner, name, None))


def install() -> None:
    vars(responses)["method_names_from_class"] = FunctionNames
