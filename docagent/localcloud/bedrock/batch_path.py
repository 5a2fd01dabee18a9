"""The paths of Bedrock's batch inference API (model invocation jobs: create, list, get, stop), as the local
Bedrock serves them (batch_api.py) and the local IAM names their actions (iam/actions.py)."""

from __future__ import annotations

import re

# The job identifier is a job id or a whole ARN (which holds a "/" of its own once the path is decoded).
PATH = re.compile(r"^/model-invocation-job(?P<many>s)?(?:/(?P<job>.+?))?(?P<stop>/stop)?$")
