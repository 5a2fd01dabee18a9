"""moto's service models read through one loader a process, not a new one for each model.

moto reads a service's model (to parse a request's parameters, to serialize its answer, to route its URLs)
through ``moto.core.utils._load_service_model``, which makes a new loader (``moto.core.loaders.
create_loader()``: botocore's ``Loader`` with moto's own folder of extras) at every call. A new loader keeps
nothing: its first ``load_service_model`` lists every service botocore and moto have data for (about 400
folders, each checked on disk: 20 ms of CPU) before it reads the model. The models are cached by service
(``get_service_model``), the listing was not: it was made again for each service's model, its paginators and
its router, about 0.28 s of CPU of a one-document demo's cloud process (14 listings; a CPU-clocked sampling
profile, 2026-12-07; moto 5.2.5). Here every call gets the same loader, which keeps the listing and what
it read (botocore's ``instance_cache``), as a botocore session's loader does for its clients.

What a loader returns depends only on the files it reads (the installed botocore and moto); the models are
only read afterwards (moto wraps them in ``ServiceModel``), so one loader serves every thread; two threads
that read the same model at once store equal copies. moto's loader is its own, never botocore's shared one
(``zygote.share_sdk_data``): moto's extras are applied to the model it reads, which a client must not see.
"""

from __future__ import annotations

import functools

from moto.core import loaders
from moto.core import utils as moto_utils

_shared = functools.cache(loaders.create_loader)


def install() -> None:
    moto_utils.create_loader = _shared  # type: ignore[attr-defined]
