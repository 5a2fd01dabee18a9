"""Credentials by reference: an action's ``secret`` is a Secrets Manager ARN or ``ssm:/parameter/name``,
read at run time (never a value in the definition), cached per process for CACHE_SECONDS so a warm function
reads it once. A secret is a plain string, or JSON with a ``token`` field. The value is never logged."""

from __future__ import annotations

import json
import threading
import time

from botocore.exceptions import BotoCoreError, ClientError

from functions import aws
from functions.actions.allowed import SSM_PREFIX
from functions.errors import ActionTargetUnavailable, ConfigurationError

CACHE_SECONDS = 300.0
_lock = threading.Lock()
_cache: dict[str, tuple[float, str]] = {}


def _read(reference: str) -> str:
    try:
        if reference.startswith(SSM_PREFIX):
            answer = aws.ssm_client().get_parameter(
                Name=reference.removeprefix(SSM_PREFIX), WithDecryption=True
            )
            return str(answer.get("Parameter", {}).get("Value") or "")
        return str(aws.secretsmanager_client().get_secret_value(SecretId=reference).get("SecretString") or "")
    except ClientError as error:
        code = error.response.get("Error", {}).get("Code", "")
        raise ConfigurationError(f"cannot read the secret {reference}: {code}") from None
    except BotoCoreError as error:
        raise ActionTargetUnavailable(f"cannot reach the store of the secret {reference}: {error}") from None


def secret_value(reference: str) -> str:
    with _lock:
        cached = _cache.get(reference)
        if cached is not None and time.monotonic() - cached[0] < CACHE_SECONDS:
            return cached[1]
    text = _read(reference).strip()
    token = text
    if text.startswith("{"):
        try:
            token = str(json.loads(text).get("token") or "").strip()
        except (json.JSONDecodeError, AttributeError):
            token = ""
    if not token:
        raise ConfigurationError(f"the secret {reference} is empty or has no 'token' field")
    with _lock:
        _cache[reference] = (time.monotonic(), token)
    return token


def clear_cache() -> None:
    with _lock:
        _cache.clear()
