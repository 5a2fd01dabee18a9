"""The local credentials that stand for a role. The local cloud has one access key (``local``: its endpoint
refuses others), so a role is named by its session token: ``docagent-role:KEY/SESSION``, KEY the role's own
local key (``role_key``, from its ARN), SESSION the session's name (the assumed-role ARN's last part: the
function's name, as on Lambda). SigV4 signs the token (``X-Amz-Security-Token``) with the request."""

from __future__ import annotations

import hashlib

from docagent.localcloud.request_guard import LOCAL_ACCESS_KEY as ACCESS_KEY_ID
from docagent.localcloud.request_guard import LOCAL_SECRET_KEY as SECRET_ACCESS_KEY

SESSION_PREFIX = "docagent-role:"
# The session name of the Step Functions interpreter's calls (AWS names them by a random id).
WORKFLOW_SESSION = "StepFunctions"


def role_key(role_arn: str) -> str:
    """The local key that stands for ``role_arn`` (``ASIA...``: a temporary key's prefix)."""
    return "ASIA" + hashlib.sha256(role_arn.encode()).hexdigest()[:16].upper()


def role_credentials(role_arn: str, session: str) -> dict[str, str]:
    """The environment of a process acting as ``role_arn`` in a session named ``session``."""
    return {
        "AWS_ACCESS_KEY_ID": ACCESS_KEY_ID,
        "AWS_SECRET_ACCESS_KEY": SECRET_ACCESS_KEY,
        "AWS_SESSION_TOKEN": f"{SESSION_PREFIX}{role_key(role_arn)}/{session}",
    }


def role_session(token: str) -> tuple[str, str] | None:
    """(role key, session name) of a session token ``role_credentials`` made; None for any other token."""
    if not token.startswith(SESSION_PREFIX):
        return None
    key, _, session = token[len(SESSION_PREFIX) :].partition("/")
    return key, session
