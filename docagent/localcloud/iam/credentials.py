"""The local credentials that stand for a role: an access key per role (the endpoint knows the role by it,
iam/enforcement.py) and a session name carried in the session token (the assumed-role ARN's last part)."""

from __future__ import annotations

import hashlib

SESSION_PREFIX = "docagent-session:"
# The session name of the Step Functions interpreter's calls (AWS names them by a random id).
WORKFLOW_SESSION = "StepFunctions"


def access_key(role_arn: str) -> str:
    """The local access key id that stands for ``role_arn`` (``ASIA...``: a temporary key's prefix)."""
    return "ASIA" + hashlib.sha256(role_arn.encode()).hexdigest()[:16].upper()


def role_credentials(role_arn: str, session: str) -> dict[str, str]:
    """The environment of a process acting as ``role_arn`` in a session named ``session``."""
    return {
        "AWS_ACCESS_KEY_ID": access_key(role_arn),
        "AWS_SECRET_ACCESS_KEY": "local",
        "AWS_SESSION_TOKEN": f"{SESSION_PREFIX}{session}",
    }
