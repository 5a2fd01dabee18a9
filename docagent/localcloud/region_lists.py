"""moto's Bedrock Runtime backend gets its regions without reading EC2's whole model.

moto gives each service's backend the regions botocore lists for it (``AccountSpecificBackend.
_generate_regions``: ``Session().get_available_regions(name)`` in every partition), and botocore reads the
service's model for one field of it, the endpoint prefix. moto lists its Bedrock Runtime backend under EC2's
name (moto 5.2.5 ``bedrockruntime/models.py``: ``BackendDict(BedrockRuntimeBackend, "ec2")``, botocore
having no regions for bedrock-runtime), so the local Bedrock's first request read EC2's model, 1.5 MB of
JSON, for that field: 0.11 s of CPU of every local cloud that runs a model step (2026-12-08). Here the
regions of a name whose endpoint prefix is known (EC2's is ``ec2``, its model's ``metadata.endpointPrefix``:
a test reads it) are the ones botocore's resolver lists for that prefix, in every partition: the same list,
without the model. Any other name is left to moto.
"""

from __future__ import annotations

from typing import Any

from moto.core.base_backend import AccountSpecificBackend

ENDPOINT_PREFIXES = {"ec2": "ec2"}
_moto_generate_regions = AccountSpecificBackend._generate_regions


def regions(service_name: str) -> list[str] | None:
    """The regions moto's backend of ``service_name`` gets; None when its endpoint prefix is not known."""
    prefix = ENDPOINT_PREFIXES.get(service_name)
    if prefix is None:
        return None
    session = AccountSpecificBackend.get_session()
    resolver = session._session._get_internal_component("endpoint_resolver")  # type: ignore[attr-defined]
    found: list[str] = []
    for partition in session.get_available_partitions():
        found += resolver.get_available_endpoints(prefix, partition, False)
    return found


def _generate_regions(self: AccountSpecificBackend[Any], service_name: str) -> list[str]:
    known = regions(service_name)
    return _moto_generate_regions(self, service_name) if known is None else known


def install() -> None:
    AccountSpecificBackend._generate_regions = _generate_regions  # type: ignore[method-assign,assignment]
