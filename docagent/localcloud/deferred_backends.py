"""moto's Batch and EC2 backends, loaded when something uses them rather than whenever the local cloud starts.

Two imports pulled all of ``moto.ec2`` into every process that starts a local cloud, for services the kit's
workflow never calls: moto's Step Functions interpreter imports ``moto.batch.utils`` (for one enum of its
Batch integration), which runs ``moto.batch``'s ``__init__`` and so ``moto.batch.models`` and ``moto.ec2``;
and moto's SSM backend (the local cloud stores the ticket service's URL in an SSM parameter at start) does
``from moto.ec2 import ec2_backends`` at import, for SendCommand's instance targets. ``moto.ec2`` builds
its region, instance-type and DHCP tables at import: 1.1 s of the 2.8 s the demo's imports take
(``python -X importtime``, bytecode cached, 2026-12-02; moto 5.2.5).

``defer_unused_backends`` puts ``moto.batch`` and ``moto.ec2`` in ``sys.modules`` as the packages they are
(spec, path, loader) without running their ``__init__``, and gives each a module ``__getattr__`` (PEP 562)
that runs it the first time a name it defines is asked for. So ``import moto.batch.utils`` loads that
module alone, while ``from moto.batch import batch_backends``, and moto's ``backends.get_backend(name)``
(``getattr(import_module("moto." + name), name + "_backends")``), get the real backend, loaded then.
The SSM backend's module is imported here, once, with a stand-in for ``ec2_backends`` that loads the real
one on first use (``_Ec2BackendsOnUse``): it is only indexed, by SendCommand.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import sys
import threading
from collections.abc import Iterator
from types import ModuleType
from typing import Any

_lock = threading.RLock()


class _Lending(threading.local):
    ec2_backends: Any = None  # what `from moto.ec2 import ec2_backends` gets while the SSM module loads


_LENDING = _Lending()


class _Ec2BackendsOnUse:
    """What moto's SSM module holds as ``ec2_backends``: moto's EC2 backends, loaded when first indexed."""

    def _real(self) -> Any:
        return importlib.import_module("moto.ec2").ec2_backends

    def __getitem__(self, key: str) -> Any:
        return self._real()[key]

    def __contains__(self, key: object) -> bool:
        return key in self._real()

    def __iter__(self) -> Iterator[Any]:
        return iter(self._real())

    def __len__(self) -> int:
        return len(self._real())

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real(), name)


def defer_unused_backends() -> None:
    """Defer ``moto.batch`` and ``moto.ec2`` (each unless imported already); load the SSM module with the
    stand-in when ``moto.ec2`` was deferred."""
    with _lock:
        _defer("moto.batch")
        ec2 = _defer("moto.ec2")
        if ec2 is None or "moto.ssm.models" in sys.modules:
            return
        with _lent_ec2_backends():
            importlib.import_module("moto.ssm.models")


@contextlib.contextmanager
def _lent_ec2_backends() -> Iterator[None]:
    _LENDING.ec2_backends = _Ec2BackendsOnUse()
    try:
        yield
    finally:
        _LENDING.ec2_backends = None


def _defer(name: str) -> ModuleType | None:
    """``name`` in ``sys.modules`` with its ``__init__`` deferred; None when it is imported already."""
    if name in sys.modules:
        return None
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return None  # not the package this was written for: leave moto's import alone
    module = importlib.util.module_from_spec(spec)
    loaded = False
    loading = threading.RLock()  # the __init__ runs once, whichever thread asks first

    def attribute_of(attribute: str) -> Any:
        nonlocal loaded
        if attribute.startswith("__"):  # the import system's probes (its __path__ and __spec__ are set)
            raise AttributeError(f"module {name!r} has no attribute {attribute!r}")
        if attribute == "ec2_backends" and _LENDING.ec2_backends is not None and not loaded:
            return _LENDING.ec2_backends
        with loading:
            if not loaded:
                loaded = True
                assert spec.loader is not None
                spec.loader.exec_module(module)
        if attribute in module.__dict__:
            return module.__dict__[attribute]
        raise AttributeError(f"module {name!r} has no attribute {attribute!r}")

    module.__getattr__ = attribute_of  # type: ignore[method-assign]
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    setattr(sys.modules[parent], child, module)  # as the import system binds a submodule to its package
    return module
