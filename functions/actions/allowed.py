"""What a deployment lets actions reach, and the one check of an action against it.

A definition is data anyone with publish rights can change, so it never decides where the job's data goes or
which credentials the functions read: the deployment does (stacks/config.py ``actions``, cdk.json context,
the functions' ``ACTIONS_ALLOWED``, and the RunActions function's IAM policy built from the same lists). The
RunActions function calls ``allowed_target`` before every action; ``docagent definition validate`` calls
``refusals`` to report the same problems before anything is published.
"""

from __future__ import annotations

import fnmatch
import urllib.parse

from pydantic import BaseModel, ConfigDict, Field

from functions.definition.action_specs import Action, EventBridgeAction, ExportAction, HttpAction, SnsAction
from functions.errors import ActionNotAllowed

DESTINATION_PREFIX = "destination:"
# A destination whose value is this is the built-in ledger in the job bucket (functions/actions/ledger.py):
# an http action's record kept as S3 objects, for deployments without an external system to call.
LEDGER_DESTINATION = "ledger"
SSM_PREFIX = "ssm:"


class AllowedTargets(BaseModel):
    """The deployment's allow-list (stacks/config.py ``actions``; the functions' ``ACTIONS_ALLOWED``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    destinations: dict[str, str] = Field(
        default_factory=dict,
        description="http destinations by name: destination:NAME in a definition posts to this URL "
        "(or to the built-in ledger, 'ledger')",
    )
    hosts: list[str] = Field(
        default_factory=list, description="hosts an http action's literal URL may name ('*.example.com' ok)"
    )
    event_buses: list[str] = Field(default_factory=list, description="EventBridge bus names or ARNs")
    topics: list[str] = Field(default_factory=list, description="SNS topic ARNs")
    secrets: list[str] = Field(
        default_factory=list,
        description="Secrets Manager secret ARNs ('*' wildcards ok) and ssm:/prefix/ parameter prefixes",
    )


def bus_name(bus: str) -> str:
    """An event bus's name, from its name or its ARN (arn:aws:events:REGION:ACCOUNT:event-bus/NAME)."""
    return bus.rsplit("event-bus/", 1)[-1] if bus.startswith("arn:") else bus


def _secret_refusal(secret: str, allowed: AllowedTargets) -> str | None:
    if secret.startswith(SSM_PREFIX):
        name = secret.removeprefix(SSM_PREFIX)
        prefixes = [
            entry.removeprefix(SSM_PREFIX) for entry in allowed.secrets if entry.startswith(SSM_PREFIX)
        ]
        if any(name.startswith(prefix) for prefix in prefixes):
            return None
        return f"SSM parameter {name} is under no allowed prefix; add its prefix to actions.secrets"
    arns = [entry for entry in allowed.secrets if not entry.startswith(SSM_PREFIX)]
    if any(fnmatch.fnmatchcase(secret, pattern) for pattern in arns):
        return None
    return f"secret {secret} is not allowed; add its ARN to actions.secrets"


def _host_allowed(host: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatchcase(host.lower(), pattern.lower()) for pattern in patterns)


def _http_target(action: HttpAction, allowed: AllowedTargets) -> tuple[str, list[str]]:
    if action.url.startswith(DESTINATION_PREFIX):
        name = action.url.removeprefix(DESTINATION_PREFIX)
        url = allowed.destinations.get(name)
        if url is None:
            known = ", ".join(sorted(allowed.destinations)) or "none"
            return "", [
                f"destination {name} is not configured (known: {known}); add it to actions.destinations"
            ]
        return url, []
    host = urllib.parse.urlsplit(action.url).hostname or ""
    if _host_allowed(host, allowed.hosts):
        return action.url, []
    return "", [f"host {host} is not allowed; add it to actions.hosts or use a destination:NAME"]


def _resolve(action: Action, allowed: AllowedTargets) -> tuple[str, list[str]]:
    if isinstance(action, HttpAction):
        target, problems = _http_target(action, allowed)
        if action.secret is not None:
            refused = _secret_refusal(action.secret, allowed)
            problems += [refused] if refused else []
        return target, problems
    if isinstance(action, EventBridgeAction):
        names = {bus_name(bus) for bus in allowed.event_buses}
        if action.bus in allowed.event_buses or bus_name(action.bus) in names:
            return action.bus, []
        return "", [f"event bus {action.bus} is not allowed; add it to actions.event_buses"]
    if isinstance(action, SnsAction):
        if action.topic_arn in allowed.topics:
            return action.topic_arn, []
        return "", [f"SNS topic {action.topic_arn} is not allowed; add it to actions.topics"]
    assert isinstance(action, ExportAction)
    return "job bucket", []


def refusals(action: Action, allowed: AllowedTargets) -> list[str]:
    """Every reason the deployment refuses this action, each with its fix (empty: allowed)."""
    return _resolve(action, allowed)[1]


def allowed_target(action: Action, allowed: AllowedTargets) -> str:
    """The target the action reaches (an http action's URL, the bus, the topic; ``ledger`` for the built-in
    ledger), or ActionNotAllowed naming every refusal."""
    target, problems = _resolve(action, allowed)
    if problems:
        raise ActionNotAllowed(f"action {action.name}: " + "; ".join(problems))
    return target
