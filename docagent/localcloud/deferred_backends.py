"""moto's Batch and EC2 backends, loaded when something uses them rather than whenever the local cloud starts.

Two imports pulled all of ``moto.ec2`` into every process that starts a local cloud, for services the kit's
workflow never calls: moto's Step Functions interpreter imports ``moto.batch.utils`` (for one enum of its
Batch integration), which runs ``moto.batch``'s ``__init__`` and so ``moto.batch.models`` and ``moto.ec2``;
and moto's SSM backend (the local cloud stores the ticket service's URL in an SSM parameter at start) does
``from moto.ec2 import ec2_backends`` at import, for SendCommand's instance targets. ``moto.ec2`` builds
its region, instance-type and DHCP tables at import: 1.1 s of the 2.8 s the demo's imports take
(``python -X importtime``, bytecode cached, 2026-12-02; moto 5.2.5).

``defer_unused_backends`` adds a finder to ``sys.meta_path`` and imports nothing of moto: the CLI and the
operator's commands import the local cloud's light modules (``request_counts``, ``lifecycle``) and must not
pay for moto (1.8 s). When moto then imports ``moto.batch`` or ``moto.ec2``, the finder gives the package as
it is (spec, path, loader) without running its ``__init__``, and a module ``__getattr__`` (PEP 562) that runs
it the first time a name it defines is asked for. So ``import moto.batch.utils`` loads that module alone,
while ``from moto.batch import batch_backends``, and moto's ``backends.get_backend(name)``
(``getattr(import_module("moto." + name), name + "_backends")``), get the real backend, loaded then.
moto's SSM module, when imported while ``moto.ec2`` is deferred, gets a stand-in for ``ec2_backends`` that
loads the real one on first use (``_Ec2BackendsOnUse``): it is only indexed, by SendCommand.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import threading
from collections.abc import Iterator, Sequence
from types import ModuleType
from typing import Any

_lock = threading.RLock()
_DEFERRED = ("moto.batch", "moto.ec2")
_SSM = "moto.ssm.models"


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
    """From now on, ``moto.batch`` and ``moto.ec2`` (each unless imported already) load deferred, and moto's
    SSM module with the stand-in while ``moto.ec2`` is deferred. Imports nothing; idempotent."""
    with _lock:
        if not any(isinstance(finder, _DeferringFinder) for finder in sys.meta_path):
            sys.meta_path.insert(0, _DeferringFinder())


def _ec2_deferred() -> bool:
    """``moto.ec2`` is imported through the finder and its ``__init__`` has not run yet, or is not imported
    yet (the finder, in front, will defer it). Without the second case the SSM module, imported before
    anything had imported ``moto.ec2`` (the local cloud's start), loaded all of EC2 itself: 0.9 s of the
    start's CPU (a py-spy profile of a cloud's start, 2026-12-07)."""
    ec2 = sys.modules.get("moto.ec2")
    if ec2 is None:
        return any(isinstance(finder, _DeferringFinder) for finder in sys.meta_path)
    loader = getattr(getattr(ec2, "__spec__", None), "loader", None)
    return isinstance(loader, _DeferredInit) and not loader.loaded


class _DeferringFinder(importlib.abc.MetaPathFinder):
    """Finds ``moto.batch``, ``moto.ec2`` and moto's SSM module as the path finder does, with a loader that
    defers (or, for SSM, lends ``ec2_backends`` to) the real one."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in (*_DEFERRED, _SSM):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or spec.loader is None:
            return None
        if fullname == _SSM:
            spec.loader = _LentEc2(spec.loader)
        elif spec.submodule_search_locations is not None:
            spec.loader = _DeferredInit(fullname, spec.loader)
        return spec  # not the package this was written for: moto's own loader, as found


class _LentEc2(importlib.abc.Loader):
    def __init__(self, real: importlib.abc.Loader) -> None:
        self.real = real

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.real.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        if not _ec2_deferred():
            self.real.exec_module(module)
            return
        _LENDING.ec2_backends = _Ec2BackendsOnUse()
        try:
            self.real.exec_module(module)
        finally:
            _LENDING.ec2_backends = None


class _DeferredInit(importlib.abc.Loader):
    """A package's loader whose ``__init__`` runs the first time a name it defines is asked for."""

    def __init__(self, name: str, real: importlib.abc.Loader) -> None:
        self.name = name
        self.real = real
        self.loaded = False
        self._loading = threading.RLock()  # the __init__ runs once, whichever thread asks first

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.real.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        name = self.name

        def attribute_of(attribute: str) -> Any:
            if attribute.startswith("__"):  # the import system's probes (its __path__ and __spec__ are set)
                raise AttributeError(f"module {name!r} has no attribute {attribute!r}")
            if attribute == "ec2_backends" and _LENDING.ec2_backends is not None and not self.loaded:
                return _LENDING.ec2_backends
            with self._loading:
                if not self.loaded:
                    self.loaded = True
                    self.real.exec_module(module)
            if attribute in module.__dict__:
                return module.__dict__[attribute]
            raise AttributeError(f"module {name!r} has no attribute {attribute!r}")

        module.__getattr__ = attribute_of  # type: ignore[method-assign]
