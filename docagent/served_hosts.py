"""The ``Host`` names a server on 127.0.0.1 answers (the console, the local cloud): any other is a page of
another site whose name is made to resolve to 127.0.0.1 (DNS rebinding), refused before anything is read."""

from __future__ import annotations

import re
from collections.abc import Iterable


def served_hosts(port: int, named: Iterable[str] = ()) -> frozenset[str]:
    """127.0.0.1 and localhost on ``port``, and the names the operator gave (``--allow-host NAME``; without a
    port, on ``port``), compared without case."""
    hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}
    for given in named:
        name = given.strip().lower()
        if name:
            with_port = re.fullmatch(r".+:[0-9]+", name) and not name.endswith("]")
            hosts.add(name if with_port else f"{name}:{port}")
    return frozenset(hosts)
