"""moto reads its service models through one loader a process (docagent/localcloud/model_loader.py): the
services' listing is made once, and every model read is the one a new loader reads, moto's extras applied;
and its Bedrock Runtime backend gets the regions it always had without EC2's model (region_lists.py)."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.loaders import Loader
from moto.bedrockruntime.models import BedrockRuntimeBackend
from moto.core import loaders
from moto.core import utils as moto_utils
from moto.core.base_backend import AccountSpecificBackend

from docagent.localcloud import model_loader, region_lists

SERVICES = ("sqs", "s3", "dynamodb", "stepfunctions")  # sqs: moto adds to its model (moto-extras)


def read_models(monkeypatch: pytest.MonkeyPatch) -> tuple[list[dict[str, Any]], int]:
    """Each service's model and paginators as moto reads them, and how many times the services were listed."""
    listed: list[Loader] = []
    locations = Loader._potential_locations

    def counting(loader: Loader, name: str | None = None, **flags: bool) -> Iterator[str]:
        if name is None:  # every folder of the search path: the services' listing
            listed.append(loader)
        return locations(loader, name, **flags)

    monkeypatch.setattr(Loader, "_potential_locations", counting)
    models = [moto_utils._load_service_model(service, "service-2") for service in SERVICES]
    models += [moto_utils._load_service_model(service, "paginators-1") for service in SERVICES]
    monkeypatch.setattr(Loader, "_potential_locations", locations)
    return models, len(listed)


def test_one_loader_lists_the_services_once_and_reads_the_same_models(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # moto's own: a new loader for each model (whether or not a local cloud installed ours already)
    monkeypatch.setattr(moto_utils, "create_loader", loaders.create_loader)
    before, listed_before = read_models(monkeypatch)
    assert listed_before == 2 * len(SERVICES), "moto alone: one listing for every model read"

    monkeypatch.setattr(model_loader, "_shared", functools.cache(loaders.create_loader))
    model_loader.install()
    after, listed_after = read_models(monkeypatch)
    assert listed_after <= 2  # once for the models, once for the paginators (the listing is by type)
    assert after == before
    # moto's extras applied, as a new loader applies them (moto answers SQS's query protocol too)
    assert after[0]["metadata"]["protocols"] == ["json", "query"]


def test_the_bedrock_runtime_backend_gets_ec2s_regions_without_ec2s_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    session = AccountSpecificBackend.get_session()
    ec2 = session._session.get_service_data("ec2")
    assert ec2["metadata"]["endpointPrefix"] == region_lists.ENDPOINT_PREFIXES["ec2"]
    # moto's own: its regions read from EC2's model (whether or not a local cloud installed ours already)
    monkeypatch.setattr(AccountSpecificBackend, "_generate_regions", region_lists._moto_generate_regions)
    expected = AccountSpecificBackend("ec2", "123456789012", BedrockRuntimeBackend, True, None).regions
    assert "us-east-1" in expected

    read: list[str] = []
    reading = Loader.load_service_model

    def counting(loader: Loader, service_name: str, *args: Any, **kwargs: Any) -> Any:
        read.append(service_name)
        return reading(loader, service_name, *args, **kwargs)

    monkeypatch.setattr(Loader, "load_service_model", counting)
    region_lists.install()
    found = AccountSpecificBackend("ec2", "123456789012", BedrockRuntimeBackend, True, None).regions
    assert found == expected and read == []
