"""Operator sessions share one data loader (the parsed service models) and keep their own credentials and
Region (docagent/operations/sessions.py)."""

from __future__ import annotations

import boto3

from docagent.operations.sessions import new_session


def loader(session: boto3.session.Session) -> object:
    return session._session.get_component("data_loader")


def test_two_sessions_share_the_loader_and_keep_their_own_region_and_credentials() -> None:
    east = new_session(aws_access_key_id="east", aws_secret_access_key="e", region_name="us-east-1")
    west = new_session(aws_access_key_id="west", aws_secret_access_key="w", region_name="eu-west-1")
    assert loader(east) is loader(west)
    assert loader(east) is not loader(boto3.session.Session())
    # The same places to look for models as a plain session's, boto3's resource models included.
    assert loader(east).search_paths == loader(boto3.session.Session()).search_paths  # type: ignore[attr-defined]
    clients = [session.client("s3") for session in (east, west)]
    assert [client.meta.region_name for client in clients] == ["us-east-1", "eu-west-1"]
    assert [c._request_signer._credentials.access_key for c in clients] == ["east", "west"]
    # A model read by one session's client is the other's too: the loader parsed it once.
    assert clients[0].meta.service_model.service_name == clients[1].meta.service_model.service_name == "s3"
